package dev.rnicsim.keys;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The scenario script of one run, as {@code ./rnicsim run FILE} replays it: a header (hosts, devices, processes,
 * contexts, PD, CQ) and, per step, the action's line with what the model expects of it (the {@code expect} lines that
 * check an errno, a completion status or bytes) and the lines the harness needed around it (QP pairs rebuilt after an
 * error, scratch buffers cleared, keys named with {@code let}). Each step also keeps the invariants the model expected
 * after it; a counterexample prints them after its last step only, so that the replay stops where the test did.
 */
final class Script
{
    /**
     * A line whose text is made when it is read (most runs pass and are never printed): it keeps the values it shows,
     * none of which changes after the line is written.
     */
    @FunctionalInterface
    interface Line
    {
        String text();
    }

    /** One action and its lines. */
    static final class Step
    {
        /** The action's line: a String or a {@link Line}. */
        private final Object action;
        /** The lines: each a String or a {@link Line}. */
        final List<Object> lines = new ArrayList<>();
        /**
         * The counters the model expected after the step (pinned_vm pages, live MRs, MTT entries in use, pinned
         * bytes), or null; written out as {@code expect} lines only when the script is rendered.
         */
        long[] invariants;

        /** @param action the action's line: a String or a {@link Line}. */
        Step(final Object action)
        {
            this.action = action;
        }

        /** @return the action's line. */
        String action()
        {
            return text(action);
        }

        /** @return the text of the lines. */
        List<String> lines()
        {
            final List<String> text = new ArrayList<>(lines.size());
            for (final Object l : lines)
            {
                text.add(text(l));
            }
            return text;
        }
    }

    /** The text of a line of a step. */
    static String text(final Object line)
    {
        return line instanceof Line l ? l.text() : (String)line;
    }

    final List<String> header = new ArrayList<>();
    /** Room for a chain's steps (its actions, a pair's recoveries, the setup): grown as it fills, from a list of 10. */
    final List<Step> steps = new ArrayList<>(64);
    final List<String> trailer = new ArrayList<>();

    /** @param action the action's line: a String or a {@link Line}. */
    Step begin(final Object action)
    {
        final Step s = new Step(action);
        steps.add(s);
        return s;
    }

    /**
     * @param invariantsEveryStep print the model's invariants after every step (true) or only after the last one.
     * @return the runnable script.
     */
    String render(final boolean invariantsEveryStep)
    {
        final StringBuilder sb = new StringBuilder();
        for (final String h : header)
        {
            sb.append(h).append('\n');
        }
        for (int i = 0; i < steps.size(); i++)
        {
            final Step s = steps.get(i);
            sb.append("# step ").append(i + 1).append('\n');
            for (final Object l : s.lines)
            {
                sb.append(text(l)).append('\n');
            }
            if (invariantsEveryStep || i == steps.size() - 1)
            {
                invariantLines(sb, s.invariants);
            }
        }
        for (final String t : trailer)
        {
            sb.append(t).append('\n');
        }
        return sb.toString();
    }

    /** The {@code expect} lines of a step's invariants (none when it has none). */
    private static void invariantLines(final StringBuilder sb, final long[] v)
    {
        if (v == null)
        {
            return;
        }
        sb.append("expect app_b.pinned_vm == ").append(v[0]).append('\n');
        sb.append("expect nic_b.sim_mr_live == ").append(v[1]).append('\n');
        sb.append("expect nic_b.sim_mtt_entries_in_use == ").append(v[2]).append('\n');
        sb.append("expect nic_b.sim_pinned_bytes == ").append(v[3]).append('\n');
    }

    // ------------------------------------------------------------------ formatting of values in the language

    /** A size as the language writes it: {@code 16K} when a whole number of KiB, else decimal. */
    static String size(final long bytes)
    {
        return bytes >= 1024 && bytes % 1024 == 0 ? (bytes / 1024) + "K" : Long.toString(bytes);
    }

    /** {@code base+0xOFF} (or {@code base} alone, or {@code base-0xOFF}). */
    static String at(final String base, final long offset)
    {
        if (offset == 0)
        {
            return base;
        }
        return offset > 0 ? base + "+0x" + Long.toHexString(offset) : base + "-0x" + Long.toHexString(-offset);
    }

    static String hex(final byte[] bytes)
    {
        return "hex:" + HexFormat.of().formatHex(bytes);
    }

    /** {@code 0x} and the key in 8 hex digits (as {@code %08x} writes it, without a formatter per key). */
    static String key(final int key)
    {
        final String hex = Integer.toHexString(key);
        return "0x" + "00000000".substring(hex.length()) + hex;
    }
}
