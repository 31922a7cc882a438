package dev.rnicsim.scenarios.cli;

import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * How the command line reads whole-number option values: as picocli does ({@link Long#decode}: decimal, {@code 0x}
 * hex, a sign), but a value past the type's range is "too large: at most ..." (or "too small"), as a script's number
 * is, rather than picocli's "is not a long", which names a Java type. Stateless.
 */
final class WholeNumbers
{
    private static final Pattern INTEGER = Pattern.compile("[-+]?(0[xX][0-9a-fA-F]+|#[0-9a-fA-F]+|[0-9]+)");

    private WholeNumbers()
    {
    }

    /** Registers the converters on {@code cl} and the subcommands it has. */
    static void register(final CommandLine cl)
    {
        final CommandLine.ITypeConverter<Long> longs = s -> (Long)read(s, Long.MIN_VALUE, Long.MAX_VALUE, "2^63 - 1");
        final CommandLine.ITypeConverter<Integer> ints = s -> (int)(long)read(s, Integer.MIN_VALUE, Integer.MAX_VALUE,
            "2^31 - 1");
        cl.registerConverter(Long.class, longs);
        cl.registerConverter(Long.TYPE, longs);
        cl.registerConverter(Integer.class, ints);
        cl.registerConverter(Integer.TYPE, ints);
    }

    private static Long read(final String text, final long min, final long max, final String maxName)
    {
        final String s = text.trim();
        try
        {
            final long v = Long.decode(s);
            if (v > max || v < min)
            {
                throw outOfRange(s, v > max, min, max, maxName);
            }
            return v;
        }
        catch (final NumberFormatException e)
        {
            if (INTEGER.matcher(s).matches())
            {
                throw outOfRange(s, !s.startsWith("-"), min, max, maxName);
            }
            throw new CommandLine.TypeConversionException("'" + text + "' is not a whole number; give digits, e.g. 64");
        }
    }

    private static CommandLine.TypeConversionException outOfRange(final String s, final boolean large,
        final long min, final long max, final String maxName)
    {
        return new CommandLine.TypeConversionException("'" + s + "' is too " + (large ? "large: at most " + max + " ("
            + maxName + ")" : "small: at least " + min));
    }
}
