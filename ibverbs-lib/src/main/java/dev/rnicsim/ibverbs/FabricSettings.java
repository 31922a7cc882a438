package dev.rnicsim.ibverbs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fabric server's settings from the environment ({@code RNICSIM_FABRIC_*}): they are read once, by the JVM of the
 * run that starts a fabric, and hold for every program on it. A run that joins a live fabric cannot change them, so
 * it says which of its own differ from the fabric's, with the fabric's value and how to get its own (a new fabric
 * name), instead of ignoring them without a word. The library's settings ({@code RNICSIM_POLL_SPIN_NS},
 * {@code RNICSIM_RING}, {@code RNICSIM_DOORBELL_RING}) are read by each program and are not among these.
 *
 * <p>Stateless and thread safe.
 */
public final class FabricSettings
{
    /** How long the fabric polls before it sleeps ({@link DoorbellReader#SPIN_NS}). */
    static final String SPIN_NS = "RNICSIM_FABRIC_SPIN_NS";
    /** 0: no warm-up of the data path ({@link FabricWarmUp}). */
    static final String WARMUP = "RNICSIM_FABRIC_WARMUP";
    /** Set: per-process statistics of the server's time ({@link FabricStats}). */
    static final String STATS = "RNICSIM_FABRIC_STATS";
    /** Set: the server's debugging lines. */
    static final String DEBUG = "RNICSIM_FABRIC_DEBUG";
    /** The server's settings, in the order they are reported. */
    static final List<String> NAMES = List.of(SPIN_NS, WARMUP, STATS, DEBUG);
    private static final long DEFAULT_SPIN_NS = 10_000;

    private FabricSettings()
    {
    }

    /**
     * @param environment an environment.
     * @return the server's settings that it sets, by name.
     */
    static Map<String, String> of(final Map<String, String> environment)
    {
        final Map<String, String> set = new LinkedHashMap<>();
        for (final String name : NAMES)
        {
            if (environment.get(name) != null)
            {
                set.put(name, environment.get(name));
            }
        }
        return set;
    }

    /**
     * @param fabricName the fabric's name.
     * @param running    what the run serving it was started with.
     * @param own        the joining run's environment.
     * @return one line per server setting of the joining run that differs from the fabric's: its value here, the
     *         fabric's, and how to run with it; empty when none differs.
     */
    public static List<String> ignored(final String fabricName, final FabricOrigin running,
        final Map<String, String> own)
    {
        final List<String> lines = new ArrayList<>();
        for (final String name : NAMES)
        {
            final String mine = own.get(name);
            final String theirs = running.settings().get(name);
            if (!effective(name, mine).equals(effective(name, theirs)))
            {
                lines.add((mine == null ? name + " unset" : name + "=" + mine) + " does not apply to this run: fabric '"
                    + fabricName + "' is served by the run that started it (process " + running.hostPid()
                    + "), with " + name + " " + describe(name, theirs) + ", and a fabric's server keeps the settings "
                    + "of the run that started it; for " + describe(name, mine) + ", use a new --fabric name (or start "
                    + "this run first)");
            }
        }
        return lines;
    }

    /** The setting's effect, for comparing two values that may be spelled differently (unset and 10000). */
    private static String effective(final String name, final String value)
    {
        return switch (name)
        {
            case SPIN_NS -> Long.toString(spinNs(value));
            case WARMUP -> "0".equals(value) ? "off" : "on";
            default -> value == null ? "off" : "on";
        };
    }

    private static String describe(final String name, final String value)
    {
        final String set = value == null ? "unset" : "'" + value + "'";
        return switch (name)
        {
            case SPIN_NS -> set + " (" + spinNs(value) + " ns of polling before it sleeps)";
            case WARMUP -> set + " (warm-up " + effective(name, value) + ")";
            case STATS -> set + " (statistics " + effective(name, value) + ")";
            default -> set + " (debugging lines " + effective(name, value) + ")";
        };
    }

    /** As {@link DoorbellReader#spinNs}, without its warning (that is the serving run's to give). */
    private static long spinNs(final String value)
    {
        try
        {
            return value == null || value.isBlank() ? DEFAULT_SPIN_NS : Math.max(0, Long.parseLong(value.trim()));
        }
        catch (final NumberFormatException e)
        {
            return DEFAULT_SPIN_NS;
        }
    }
}
