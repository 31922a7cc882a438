package dev.rnicsim.testkit;

import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.StrictChecker;
import dev.rnicsim.simnic.StrictWarning;
import java.util.ArrayList;
import java.util.List;

/**
 * Strict mode of simulated devices: watches what they do and records, as {@link Violation}s with the stack traces
 * involved, the misuse that real hardware hides or reports only as an error completion far from its cause:
 * <ul>
 *   <li>{@link Violation.Kind#STALE_LKEY} / {@link Violation.Kind#STALE_RKEY}: a work request names a key that was
 *       deregistered (the device answers IBV_WC_LOC_PROT_ERR / IBV_WC_REM_ACCESS_ERR; strict mode says which MR,
 *       registered and deregistered where);</li>
 *   <li>{@link Violation.Kind#STALE_MAPPING}: a DMA succeeded but reached frames that no longer back the MR's
 *       virtual addresses in its process (the memory was unmapped and mapped again, or a COW after fork gave the
 *       process new pages): a pinned MR keeps its old frames, so remote peers read and write memory the
 *       application no longer sees (the registration-cache bug that UCX's memory hooks exist to prevent);</li>
 *   <li>{@link Violation.Kind#LEAKED_MR}: MRs still registered when their context closes (S28);</li>
 *   <li>{@link Violation.Kind#HOT_REGISTRATION}: more registrations per simulated second than
 *       {@link #maxRegistrationsPerSecond} allows, measured over the last {@link #HOT_WINDOW} registrations
 *       (registration on the hot path, S26).</li>
 * </ul>
 * and, once {@link #enable enabled}, {@link Violation.Kind#STALE_KEY_REUSED}, {@link Violation.Kind#UNUSED_MR},
 * {@link Violation.Kind#FLAG_BEFORE_DATA} and {@link Violation.Kind#KEY_RETIRED_IN_FLIGHT}. The checks themselves are sim-nic's {@link StrictChecker}, which the
 * scripts' {@code strict on} runs too.
 * Use it around a test: {@code try (StrictMode strict = StrictMode.attach(device)) { ... }}: closing it detaches it
 * and throws an {@link AssertionError} listing every violation, each with its report. {@link #assertClean()} checks
 * at any point. Not thread safe (nor is the simulator).
 */
public final class StrictMode implements AutoCloseable
{
    /** Registrations over which the rate is measured. */
    public static final int HOT_WINDOW = StrictChecker.HOT_WINDOW;

    private final StrictChecker checker = new StrictChecker(true);
    private boolean closed;

    private StrictMode(final List<SimDevice> devices)
    {
        checker.disable(StrictWarning.Kind.STALE_KEY_REUSED, StrictWarning.Kind.UNUSED_MR,
            StrictWarning.Kind.FLAG_BEFORE_DATA, StrictWarning.Kind.KEY_RETIRED_IN_FLIGHT);
        for (final SimDevice d : devices)
        {
            checker.attach(d);
        }
    }

    /**
     * @param devices the devices to watch. Attach every device a test uses: a work request is observed on the
     *                requester's device and its remote side checked against what the responder's device registered,
     *                so a device left out is neither observed nor knows its stale keys.
     * @return strict mode, watching from now on.
     */
    public static StrictMode attach(final SimDevice... devices)
    {
        if (devices == null || devices.length == 0)
        {
            throw new IllegalArgumentException("attach at least one device: strict mode on none could never fail");
        }
        return new StrictMode(List.of(devices));
    }

    /**
     * @param perSecond the most registrations per simulated second before a {@link Violation.Kind#HOT_REGISTRATION}
     *                  (measured over {@value #HOT_WINDOW} registrations on one device).
     * @return this.
     */
    public StrictMode maxRegistrationsPerSecond(final long perSecond)
    {
        checker.maxRegistrationsPerSecond(perSecond);
        return this;
    }

    /**
     * Stops recording violations of some kinds: for a test that misuses on purpose (random and stale keys, say)
     * and checks something else.
     *
     * @param kinds the kinds no longer recorded.
     * @return this.
     */
    public StrictMode ignore(final Violation.Kind... kinds)
    {
        for (final Violation.Kind k : kinds)
        {
            checker.disable(StrictWarning.Kind.valueOf(k.name()));
        }
        return this;
    }

    /**
     * Records kinds off by default: STALE_KEY_REUSED, UNUSED_MR, FLAG_BEFORE_DATA, KEY_RETIRED_IN_FLIGHT.
     *
     * @param kinds the kinds recorded from now on.
     * @return this.
     */
    public StrictMode enable(final Violation.Kind... kinds)
    {
        for (final Violation.Kind k : kinds)
        {
            checker.enable(StrictWarning.Kind.valueOf(k.name()));
        }
        return this;
    }

    /**
     * @param watch a CPU polling a flag, checked after every transfer for {@link Violation.Kind#FLAG_BEFORE_DATA}.
     * @return this.
     */
    public StrictMode watch(final dev.rnicsim.simnic.FlagWatch watch)
    {
        checker.watch(watch, "a flag watch");
        return this;
    }

    /**
     * @return the violations so far, in the order they happened.
     */
    public List<Violation> violations()
    {
        final List<Violation> out = new ArrayList<>();
        final List<StrictWarning> all = checker.warnings();
        for (final StrictWarning w : all)
        {
            out.add(new Violation(Violation.Kind.valueOf(w.kind().name()), w.message(), w.registeredAt(),
                w.releasedAt()));
        }
        return out;
    }

    /**
     * @throws AssertionError listing every violation so far (with stack traces), when there is one.
     */
    public void assertClean()
    {
        final List<Violation> violations = violations();
        if (violations.isEmpty())
        {
            return;
        }
        final StringBuilder sb = new StringBuilder("strict mode: " + violations.size() + " violation"
            + (violations.size() == 1 ? "" : "s"));
        for (final Violation v : violations)
        {
            sb.append("\n  ").append(v.report().replace("\n", "\n  "));
        }
        throw new AssertionError(sb.toString());
    }

    /**
     * Forgets the violations so far (the watch goes on).
     */
    public void clear()
    {
        checker.clear();
    }

    /**
     * Detaches from the devices, then {@link #assertClean()}.
     *
     * @throws AssertionError when there were violations.
     */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            checker.detachAll();
        }
        assertClean();
    }
}
