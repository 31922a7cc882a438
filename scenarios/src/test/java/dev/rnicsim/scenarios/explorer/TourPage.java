package dev.rnicsim.scenarios.explorer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.cli.Rnicsim;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tour run once through {@code rnicsim tour --html}, with what the model printed: the page and the figures the
 * tests compare it with. Not thread safe.
 *
 * @param page   the page written.
 * @param out    what the command printed.
 * @param steps  the number of steps the run's summary line gives.
 * @param regs   each {@code reg} the model printed, by MR name, in order.
 */
record TourPage(Path page, String out, int steps, Map<String, Reg> regs)
{
    /**
     * One registration as the model printed it.
     *
     * @param key        the lkey, as 8 hex digits with 0x.
     * @param index      its MPT index.
     * @param variant    its variant.
     * @param pageSize   the MR page size as printed (e.g. {@code 4 KiB}), or null when not printed.
     * @param mttEntries its MTT entries, or -1 when not printed.
     */
    record Reg(String key, long index, int variant, String pageSize, long mttEntries)
    {
    }

    private static final Pattern REG = Pattern.compile("(?m)^\\s+reg (\\S+): lkey=(0x[0-9a-f]{8}) rkey=\\S+ "
        + "\\(index (\\d+), variant (\\d+)\\); (?:ODP: )?(?:page size (\\d+ [KMG]iB), (\\d+) MTT entries)?");
    private static final Pattern SUMMARY = Pattern.compile("== (\\S+): (\\d+) steps");

    /**
     * @param dir where to write the page.
     * @return the run.
     * @throws IOException when the page cannot be read back.
     */
    static TourPage write(final Path dir) throws IOException
    {
        final Path page = dir.resolve("tour.html");
        final StringWriter o = new StringWriter();
        final StringWriter e = new StringWriter();
        final int code = Rnicsim.execute(new String[] {"tour", "--html", page.toString()}, new PrintWriter(o, true),
            new PrintWriter(e, true));
        assertThat(code).as("%s%s", o, e).isZero();
        assertThat(Files.size(page)).isPositive();
        final String out = o.toString();
        return new TourPage(page, out, steps(out), regs(out));
    }

    /** @return the step count of a run's summary line. */
    static int steps(final String out)
    {
        final Matcher m = SUMMARY.matcher(out);
        assertThat(m.find()).as("a summary line in:%n%s", out).isTrue();
        return Integer.parseInt(m.group(2));
    }

    private static Map<String, Reg> regs(final String out)
    {
        final Map<String, Reg> regs = new LinkedHashMap<>();
        final Matcher m = REG.matcher(out);
        while (m.find())
        {
            regs.put(m.group(1), new Reg(m.group(2), Long.parseLong(m.group(3)), Integer.parseInt(m.group(4)),
                m.group(5), m.group(6) == null ? -1 : Long.parseLong(m.group(6))));
        }
        assertThat(regs).as("registrations printed by the tour").hasSizeGreaterThan(5);
        return regs;
    }

    /**
     * @param size a size as the model prints it ({@code 4 KiB}, {@code 2 MiB}).
     * @return bytes.
     */
    static long bytes(final String size)
    {
        final String[] p = size.split(" ");
        final long unit = switch (p[1])
        {
            case "KiB" -> 1L << 10;
            case "MiB" -> 1L << 20;
            case "GiB" -> 1L << 30;
            default -> 1;
        };
        return Long.parseLong(p[0]) * unit;
    }
}
