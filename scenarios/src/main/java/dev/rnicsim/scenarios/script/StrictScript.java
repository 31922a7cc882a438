package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.FlagWatch;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.StrictChecker;
import dev.rnicsim.simnic.StrictWarning;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Strict mode of a script run ({@code strict on|off}, {@code --strict}): sim-nic's {@link StrictChecker} on every
 * device of the run, its warnings printed under the step that caused them, and {@code expect warning KIND} /
 * {@code expect no warnings} checked against them. Not thread safe.
 */
final class StrictScript
{
    /** Registrations per simulated second above which a HOT_REGISTRATION is reported, unless max_reg_rate says. */
    static final long DEFAULT_MAX_REGISTRATIONS_PER_SECOND = 10_000;

    /** Why an expect about warnings fails when strict mode was never on: nothing could have been reported. */
    private static final String OFF = "strict mode is off: no warning can be reported (add 'strict on' or run with "
        + "--strict)";

    /** Groups of alike warnings an {@code expect no warnings} failure lists; the rest it counts. */
    static final int LISTED = 10;

    private final StrictChecker checker = new StrictChecker(false);
    private final Set<FlagWatch> watched = Collections.newSetFromMap(new IdentityHashMap<>());
    private final List<StrictWarning> open = new ArrayList<>();
    private int printed;
    private int total;
    private int expected;
    private boolean on;
    private boolean used;

    /**
     * @param fabric    the run's fabric.
     * @param perSecond HOT_REGISTRATION threshold.
     */
    void on(final SimFabric fabric, final long perSecond)
    {
        on(fabric, perSecond, List.of());
    }

    /**
     * @param fabric    the run's fabric.
     * @param perSecond HOT_REGISTRATION threshold.
     * @param ignored   kinds not reported (names of {@link StrictWarning.Kind}).
     */
    void on(final SimFabric fabric, final long perSecond, final List<String> ignored)
    {
        checker.enable(StrictWarning.Kind.values());
        for (final String k : ignored)
        {
            checker.disable(StrictWarning.Kind.valueOf(k));
        }
        checker.maxRegistrationsPerSecond(perSecond);
        on = true;
        used = true;
        attachNew(fabric, Map.of());
    }

    void off()
    {
        on = false;
        checker.detachAll();
    }

    boolean isOn()
    {
        return on;
    }

    /**
     * Watches the devices and flag watches a step created (inside repeat blocks too).
     *
     * @param outcome the step's outcome.
     * @return outcome.
     */
    <T> T tracked(final SimFabric fabric, final Map<String, Object> names, final T outcome)
    {
        if (on)
        {
            attachNew(fabric, names);
        }
        return outcome;
    }

    /** Prints the warnings the last step caused. */
    void afterStep(final SimFabric fabric, final Map<String, Object> names, final PrintWriter out)
    {
        tracked(fabric, names, null);
        print(out);
    }

    private void attachNew(final SimFabric fabric, final Map<String, Object> names)
    {
        for (final SimDevice d : fabric.devices())
        {
            checker.attach(d);
        }
        for (final Map.Entry<String, Object> e : names.entrySet())
        {
            if (e.getValue() instanceof FlagWatch w && watched.add(w))
            {
                checker.watch(w, "watch " + e.getKey());
            }
        }
    }

    private void print(final PrintWriter out)
    {
        final List<StrictWarning> all = checker.warnings();
        for (int i = printed; i < all.size(); i++)
        {
            final StrictWarning w = all.get(i);
            int same = 0;
            while (i + 1 < all.size() && all.get(i + 1).kind() == w.kind() && all.get(i + 1).lines().equals(w.lines()))
            {
                open.add(all.get(++i));
                same++;
            }
            out.println("    warning " + w.text() + (same == 0 ? "" : " (and " + same + " more like it from the same "
                + "lines)"));
            open.add(w);
            total += same + 1;
        }
        printed = all.size();
    }

    /**
     * @param kind a warning kind's name.
     * @return null when an unexpected warning of that kind was printed (all of that kind count as expected now), else
     * why the expect failed.
     */
    String expectWarning(final String kind)
    {
        final StrictWarning.Kind k = StrictWarning.Kind.valueOf(kind.toUpperCase(Locale.ROOT));
        if (!used)
        {
            return OFF;
        }
        final int before = open.size();
        open.removeIf(w -> w.kind() == k);
        expected += before - open.size();
        return before != open.size() ? null : "expected a warning " + k + ", but " + (open.isEmpty()
            ? "there is no warning not yet expected" : "the warnings not yet expected are " + kinds());
    }

    /**
     * @return null when no warning is left unexpected, else the ones that are.
     */
    String expectNone()
    {
        if (!used)
        {
            return OFF;
        }
        if (open.isEmpty())
        {
            return null;
        }
        final StringBuilder sb = new StringBuilder("expected no warnings, got " + open.size() + ":");
        final Map<String, List<StrictWarning>> alike = new LinkedHashMap<>();
        for (final StrictWarning w : open)
        {
            alike.computeIfAbsent(w.kind() + " " + w.lines(), k -> new ArrayList<>()).add(w);
        }
        int shown = 0;
        for (final List<StrictWarning> same : alike.values())
        {
            if (shown == LISTED)
            {
                break;
            }
            sb.append("\n      ").append(same.get(0).text()).append(same.size() == 1 ? ""
                : " (and " + (same.size() - 1) + " more like it from the same lines)");
            shown++;
        }
        if (alike.size() > LISTED)
        {
            final Set<String> kinds = new LinkedHashSet<>();
            int more = 0;
            for (final List<StrictWarning> same : alike.values().stream().skip(LISTED).toList())
            {
                kinds.add(same.get(0).kind().name());
                more += same.size();
            }
            sb.append("\n      (and ").append(more).append(" more: ").append(String.join(", ", kinds)).append(")");
        }
        return sb.toString();
    }

    private String kinds()
    {
        final List<String> k = new ArrayList<>();
        for (final StrictWarning w : open)
        {
            k.add(w.kind().name());
        }
        return String.join(", ", k);
    }

    /** The end of the run: MRs no DMA reached, then a count. */
    void finish(final PrintWriter out)
    {
        if (!used)
        {
            return;
        }
        if (on)
        {
            checker.finish();
        }
        print(out);
        out.println("strict: " + total + " warning" + (total == 1 ? "" : "s") + ", " + expected + " expected");
        checker.detachAll();
    }

    /**
     * @param word a word that names no warning kind.
     * @return {@code "; did you mean 'KIND'?"} for the nearest kind (in the case the word was typed in: lower case
     * for a word with no capital), or "" when none is near.
     */
    static String kindHint(final String word)
    {
        final java.util.List<String> kinds = java.util.Arrays.stream(StrictWarning.Kind.values()).map(Enum::name)
            .toList();
        final String near = DidYouMean.nearest(word.toUpperCase(java.util.Locale.ROOT), kinds);
        if (near == null)
        {
            return "";
        }
        return "; did you mean '" + (word.equals(word.toLowerCase(java.util.Locale.ROOT))
            ? near.toLowerCase(java.util.Locale.ROOT) : near) + "'?";
    }

    /**
     * @return the error of an {@code expect warning} without a kind: the kinds there are, and the other expect.
     */
    static String missingKind()
    {
        return "'expect warning' needs the kind of warning expected, one of "
            + java.util.Arrays.toString(StrictWarning.Kind.values()) + " (any case): e.g. 'expect warning stale_lkey'"
            + "; 'expect no warnings' checks instead that every warning so far was expected";
    }

    /**
     * @param word a word.
     * @return true when it names a warning kind (any case).
     */
    static boolean isKind(final String word)
    {
        for (final StrictWarning.Kind k : StrictWarning.Kind.values())
        {
            if (k.name().equalsIgnoreCase(word))
            {
                return true;
            }
        }
        return false;
    }
}
