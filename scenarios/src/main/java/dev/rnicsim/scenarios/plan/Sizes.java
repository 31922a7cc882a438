package dev.rnicsim.scenarios.plan;

import dev.rnicsim.scenarios.script.Units;
import java.util.Locale;

/**
 * The one unit style of a plan's text: sizes in the largest IEC unit (KiB, MiB, GiB, TiB: powers of 1024) they
 * reach, whole where the size is a whole number of it, else with two decimals and the exact byte count in
 * parentheses; counts with
 * thousands separators; durations as {@link Units#duration}. Stateless.
 */
public final class Sizes
{
    private static final String[] UNITS = {"TiB", "GiB", "MiB", "KiB"};
    private static final int[] SHIFTS = {40, 30, 20, 10};

    private Sizes()
    {
    }

    /**
     * @param bytes a size in bytes, 0 or more.
     * @return e.g. {@code 64 MiB}, {@code 8.31 GiB (8,919,187,456 B)}, {@code 100 B}.
     */
    public static String iec(final long bytes)
    {
        for (int i = 0; i < UNITS.length; i++)
        {
            if (Long.compareUnsigned(bytes, 1L << SHIFTS[i]) >= 0)
            {
                if (bytes % (1L << SHIFTS[i]) == 0)
                {
                    return Long.toUnsignedString(bytes >>> SHIFTS[i]) + " " + UNITS[i];
                }
                return String.format(Locale.ROOT, "%.2f %s (%s B)", (double)bytes / (1L << SHIFTS[i]), UNITS[i],
                    String.format(Locale.ROOT, "%,d", bytes));
            }
        }
        return bytes + " B";
    }

    /**
     * @param value a limit's value.
     * @param unit  its unit ({@code bytes}, or a count's unit).
     * @return the value in this style: bytes as {@link #iec}, -1 (no limit) as {@code unlimited}, a
     *         count with separators.
     */
    public static String of(final long value, final String unit)
    {
        if (value == -1)
        {
            return "unlimited";
        }
        return unit.equals("bytes") ? iec(value) : String.format(Locale.ROOT, "%,d", value);
    }

    /**
     * @param ns a duration in ns.
     * @return it as {@link Units#duration}.
     */
    public static String duration(final long ns)
    {
        return Units.duration(ns);
    }
}
