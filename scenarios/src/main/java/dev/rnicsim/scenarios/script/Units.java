package dev.rnicsim.scenarios.script;

import java.util.Locale;

/**
 * Numbers as scripts write them: decimal or {@code 0x} hex, with an optional size suffix ({@code K}, {@code M},
 * {@code G}, {@code T}, or {@code KiB}, {@code MiB}, {@code GiB}, {@code TiB}: powers of 1024) or time suffix
 * ({@code ns}, {@code us}, {@code ms}, {@code s}: converted to ns). Stateless.
 */
public final class Units
{
    private Units()
    {
    }

    /**
     * @param text a number literal.
     * @return its value (sizes in bytes, times in ns), or null when it is no number literal.
     */
    public static Long parse(final String text)
    {
        final String t = text.trim();
        if (t.isEmpty())
        {
            return null;
        }
        try
        {
            if (t.startsWith("0x") || t.startsWith("0X"))
            {
                return Long.parseUnsignedLong(t.substring(2).replace("_", ""), 16);
            }
            if (t.startsWith("-0x"))
            {
                return -Long.parseUnsignedLong(t.substring(3), 16);
            }
            if (!Character.isDigit(t.charAt(0)) && !(t.charAt(0) == '-' && t.length() > 1
                && Character.isDigit(t.charAt(1))))
            {
                return null;
            }
            int end = 0;
            while (end < t.length() && (Character.isDigit(t.charAt(end)) || t.charAt(end) == '_'
                || (end == 0 && t.charAt(end) == '-')))
            {
                end++;
            }
            if (end == 0 || (end == 1 && t.charAt(0) == '-'))
            {
                return null;
            }
            final long n = Long.parseLong(t.substring(0, end).replace("_", ""));
            final long scale = scale(t.substring(end).toLowerCase(Locale.ROOT));
            if (scale == 0)
            {
                return null;
            }
            return Math.multiplyExact(n, scale);
        }
        catch (final NumberFormatException | ArithmeticException e)
        {
            return null;
        }
    }

    /**
     * @param text a size literal: a number with no suffix or a size suffix (not a time suffix).
     * @return its value in bytes, or null when it is no size literal.
     */
    public static Long parseSize(final String text)
    {
        final String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ns") || t.endsWith("us") || t.endsWith("ms") || (t.endsWith("s") && !t.startsWith("0x")))
        {
            return null;
        }
        return parse(text);
    }

    /** A number as {@link #parse} reads it: an optional minus, hex digits after 0x or decimal digits, a unit. */
    private static final java.util.regex.Pattern NUMBER = java.util.regex.Pattern.compile(
        "-?(?:0[xX]([0-9a-fA-F_]+)|([0-9][0-9_]*)([a-zA-Z]*))");

    /**
     * @param text a term of an expression.
     * @return why a well-formed number does not fit in 64 bits ({@code too large: at most 9223372036854775807
     *         (2^63 - 1) fits in 64 bits}; with a unit {@code at most 8388607T}; below -2^63 {@code too small}), or
     *         null when it fits or is no number.
     */
    public static String tooLarge(final String text)
    {
        final String t = text.trim();
        final java.util.regex.Matcher m = NUMBER.matcher(t);
        if (!m.matches() || parse(t) != null)
        {
            return null;
        }
        if (m.group(1) != null)
        {
            return "too large: a hex number has at most 16 digits (0xffffffffffffffff, 64 bits)";
        }
        final String unit = m.group(3);
        final long scale = scale(unit.toLowerCase(Locale.ROOT));
        if (scale == 0)
        {
            return null;
        }
        return t.startsWith("-") ? "too small: at least " + (Long.MIN_VALUE / scale) + unit
            + (scale == 1 ? " (-2^63)" : "") + " fits in 64 bits"
            : "too large: at most " + (Long.MAX_VALUE / scale) + unit + (scale == 1 ? " (2^63 - 1)" : "")
            + " fits in 64 bits";
    }

    private static long scale(final String suffix)
    {
        return switch (suffix)
        {
            case "", "b" -> 1;
            case "k", "kib", "kb" -> 1L << 10;
            case "m", "mib", "mb" -> 1L << 20;
            case "g", "gib", "gb" -> 1L << 30;
            case "t", "tib", "tb" -> 1L << 40;
            case "ns" -> 1;
            case "us" -> 1_000;
            case "ms" -> 1_000_000;
            case "s" -> 1_000_000_000;
            default -> 0;
        };
    }

    /**
     * @param n        a count.
     * @param singular the noun for one ({@code "MTT entry"}).
     * @param plural   the noun for any other count ({@code "MTT entries"}).
     * @return the count with its noun in the right number: {@code 1 MTT entry}, {@code 0 MTT entries}.
     */
    public static String count(final long n, final String singular, final String plural)
    {
        return n + " " + (n == 1 ? singular : plural);
    }

    /**
     * @param bytes a size in bytes.
     * @return it in the largest binary unit that divides it (e.g. {@code 2 MiB}), else in bytes.
     */
    public static String bytes(final long bytes)
    {
        final String[] units = {"TiB", "GiB", "MiB", "KiB"};
        final int[] shifts = {40, 30, 20, 10};
        for (int i = 0; i < units.length; i++)
        {
            if (bytes != 0 && bytes % (1L << shifts[i]) == 0)
            {
                return (bytes >> shifts[i]) + " " + units[i];
            }
        }
        return bytes + " B";
    }

    /**
     * @param ns a duration in ns.
     * @return it in ns, µs, ms or s with one decimal.
     */
    public static String duration(final long ns)
    {
        if (ns < 1_000)
        {
            return ns + " ns";
        }
        if (ns < 1_000_000)
        {
            return String.format(Locale.ROOT, "%.1f us", ns / 1e3);
        }
        if (ns < 1_000_000_000)
        {
            return String.format(Locale.ROOT, "%.2f ms", ns / 1e6);
        }
        return String.format(Locale.ROOT, "%.3f s", ns / 1e9);
    }
}
