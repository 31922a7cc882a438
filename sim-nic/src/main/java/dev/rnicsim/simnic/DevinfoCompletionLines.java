package dev.rnicsim.simnic;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The lines of an {@code ibv_devinfo -v} dump's extended section that {@link DevinfoReader} keeps, as
 * libibverbs/examples/devinfo.c prints them after the ODP blocks: {@code completion timestamp_mask: 0x...} (or
 * {@code completion_timestamp_mask not supported}), {@code hca_core_clock: NkHZ} (or {@code core clock not
 * supported}) and {@code num_comp_vectors: N}. The first value of each counts. Mutable: one per parse.
 */
final class DevinfoCompletionLines
{
    /** Builds the parser's error for a malformed value: line, key, what was expected, the value. */
    interface Malformed
    {
        IllegalArgumentException of(int lineNo, String key, String expected, String value);
    }

    static final String NO_TIMESTAMP_MASK = "completion_timestamp_mask not supported";
    static final String NO_CORE_CLOCK = "core clock not supported";
    private static final String TIMESTAMP_MASK = "completion timestamp_mask";
    private static final String CORE_CLOCK = "hca_core_clock";
    private static final String COMP_VECTORS = "num_comp_vectors";
    private static final Pattern KHZ = Pattern.compile("(\\d{1,19})\\s*kHZ", Pattern.CASE_INSENSITIVE);
    private static final Pattern HEX = Pattern.compile("0[xX](\\p{XDigit}{1,16})");

    private Long clockKhz;
    private Long timestampMask;
    private Integer compVectors;

    /**
     * @param trimmed a line without a colon.
     */
    void notSupported(final String trimmed)
    {
        if (trimmed.equals(NO_TIMESTAMP_MASK) && timestampMask == null)
        {
            timestampMask = 0L;
        }
        else if (trimmed.equals(NO_CORE_CLOCK) && clockKhz == null)
        {
            clockKhz = 0L;
        }
    }

    /**
     * A {@code key: value} line of the extended section; lines other than the three are not modelled and ignored.
     *
     * @throws IllegalArgumentException for a malformed value of one of the three.
     */
    void line(final String key, final String value, final int lineNo, final Malformed malformed)
    {
        switch (key)
        {
            case TIMESTAMP_MASK ->
            {
                final Matcher m = HEX.matcher(value);
                if (!m.matches())
                {
                    throw malformed.of(lineNo, key, "a 64-bit mask in hex (0x7fffffffffffffff)", value);
                }
                if (timestampMask == null)
                {
                    timestampMask = Long.parseUnsignedLong(m.group(1), 16);
                }
            }
            case CORE_CLOCK ->
            {
                final Matcher m = KHZ.matcher(value);
                if (!m.matches())
                {
                    throw malformed.of(lineNo, key, "a clock in kHz as ibv_devinfo prints it (156250kHZ)", value);
                }
                if (clockKhz == null)
                {
                    clockKhz = Long.parseLong(m.group(1));
                }
            }
            case COMP_VECTORS ->
            {
                final int n;
                try
                {
                    n = Integer.parseInt(value);
                }
                catch (final NumberFormatException e)
                {
                    throw malformed.of(lineNo, key, "a count of 1 or more", value);
                }
                if (n < 1)
                {
                    throw malformed.of(lineNo, key, "a count of 1 or more", value);
                }
                if (compVectors == null)
                {
                    compVectors = n;
                }
            }
            default ->
            {
                // device_cap_flags_ex, tso_caps, rss_caps, ...: not modelled
            }
        }
    }

    /**
     * @param base the base profile's values.
     * @return them with the dump's lines applied.
     */
    CompletionAttributes applyTo(final CompletionAttributes base)
    {
        CompletionAttributes c = base;
        if (clockKhz != null)
        {
            c = c.withHcaCoreClockKhz(clockKhz);
        }
        if (timestampMask != null)
        {
            c = c.withCompletionTimestampMask(timestampMask);
        }
        if (compVectors != null)
        {
            c = c.withNumCompVectors(compVectors);
        }
        return c;
    }
}
