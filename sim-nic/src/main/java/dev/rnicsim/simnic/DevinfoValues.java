package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AtomicCap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The value syntax of an {@code ibv_devinfo -v} dump, as rdma-core's libibverbs/examples/devinfo.c prints it: GUIDs
 * as four 16-bit hex groups ({@code guid_str}), {@code atomic_cap} as a name and its number
 * ({@code atomic_cap_str}: {@code ATOMIC_HCA (1)}), sizes and flag words in hex or decimal ({@code 0x%llx},
 * {@code %llu}), counts and ids of {@code ibv_device_attr} in decimal or hex. A value that does not parse is an
 * {@link IllegalArgumentException} of the form {@code source:line: field: expected ..., got '...'}
 * ({@link #malformed}); line 0 stands for a value given on its own (an override), which drops the line.
 *
 * <p>Immutable and thread safe.
 */
final class DevinfoValues
{
    private static final Pattern GUID = Pattern.compile(
        "(\\p{XDigit}{1,4}):(\\p{XDigit}{1,4}):(\\p{XDigit}{1,4}):(\\p{XDigit}{1,4})");
    private static final Pattern ATOMIC = Pattern.compile("(ATOMIC_[A-Z]+)?\\s*(?:\\((\\d{1,9})\\))?");
    private static final Pattern HEX = Pattern.compile("0[xX](\\p{XDigit}{1,16})");
    private static final Pattern DECIMAL = Pattern.compile("-?\\d{1,20}");

    private final String source;

    /**
     * @param source where the values come from (a file name, or the override), for messages.
     */
    DevinfoValues(final String source)
    {
        this.source = source;
    }

    /**
     * A count or id of ibv_device_attr: ibv_devinfo prints them unsigned (ids in hex, counts in decimal), so a
     * negative value is no value a device reports; a count (max_*, phys_port_cnt) also stays below 2^31.
     */
    int count(final String key, final String value, final int lineNo)
    {
        final int n = int32(key, value, lineNo);
        final boolean isCount = key.startsWith("max_") || key.endsWith("_cnt");
        if (value.strip().startsWith("-") || isCount && n < 0)
        {
            throw malformed(lineNo, key, isCount ? "a count from 0 to 2147483647" : "an unsigned number", value);
        }
        return n;
    }

    /** @return a GUID printed as four 16-bit hex groups ({@code 0002:c903:0001:2345}). */
    long guid(final String key, final String value, final int lineNo)
    {
        final Matcher m = GUID.matcher(value);
        if (!m.matches())
        {
            throw malformed(lineNo, key, "a GUID as four 16-bit hex groups (0000:0000:0000:0000)", value);
        }
        long guid = 0;
        for (int g = 1; g <= 4; g++)
        {
            guid = guid << 16 | Long.parseLong(m.group(g), 16);
        }
        return guid;
    }

    /** @return an unsigned 64-bit number, {@code 0x} hex or decimal (a size or a flag word). */
    long unsigned64(final String key, final String value, final int lineNo)
    {
        final Matcher hex = HEX.matcher(value);
        try
        {
            if (hex.matches())
            {
                return Long.parseUnsignedLong(hex.group(1), 16);
            }
            if (value.matches("\\d{1,20}"))
            {
                return Long.parseUnsignedLong(value);
            }
        }
        catch (final NumberFormatException e)
        {
            // out of range: reported below
        }
        throw malformed(lineNo, key, "an unsigned 64-bit number (0x hex or decimal)", value);
    }

    /** @return a 32-bit number, decimal (signed) or {@code 0x} hex (up to 0xffffffff, kept as its bits). */
    int int32(final String key, final String value, final int lineNo)
    {
        final Matcher hex = HEX.matcher(value);
        try
        {
            final long n;
            if (hex.matches())
            {
                n = Long.parseUnsignedLong(hex.group(1), 16);
            }
            else if (DECIMAL.matcher(value).matches())
            {
                n = Long.parseLong(value);
            }
            else
            {
                throw new NumberFormatException(value);
            }
            if (n >= Integer.MIN_VALUE && n <= 0xffff_ffffL)
            {
                return (int) n;
            }
        }
        catch (final NumberFormatException e)
        {
            // not a number or out of range: reported below
        }
        throw malformed(lineNo, key, "a 32-bit number (decimal or 0x hex)", value);
    }

    /** @return {@code atomic_cap}: a name, its number in parentheses, or both (they must agree). */
    AtomicCap atomic(final String key, final String value, final int lineNo)
    {
        final Matcher m = ATOMIC.matcher(value);
        final String what = "ATOMIC_NONE (0), ATOMIC_HCA (1) or ATOMIC_GLOB (2)";
        if (value.isEmpty() || !m.matches())
        {
            throw malformed(lineNo, key, what, value);
        }
        AtomicCap byName = null;
        if (m.group(1) != null)
        {
            byName = switch (m.group(1))
            {
                case "ATOMIC_NONE" -> AtomicCap.NONE;
                case "ATOMIC_HCA" -> AtomicCap.HCA;
                case "ATOMIC_GLOB" -> AtomicCap.GLOB;
                default -> throw malformed(lineNo, key, what, value);
            };
        }
        if (m.group(2) == null)
        {
            return byName;
        }
        final int n = Integer.parseInt(m.group(2));
        if (n > AtomicCap.GLOB.code() || byName != null && byName.code() != n)
        {
            throw malformed(lineNo, key, what, value);
        }
        return AtomicCap.of(n);
    }

    /** @return the error of a value that does not parse: {@code source:line: key: expected ..., got '...'}. */
    IllegalArgumentException malformed(final int lineNo, final String key, final String expected,
        final String value)
    {
        return new IllegalArgumentException((lineNo > 0 ? source + ":" + lineNo + ": " + key : source)
            + ": expected " + expected + ", got '" + value + "'");
    }
}
