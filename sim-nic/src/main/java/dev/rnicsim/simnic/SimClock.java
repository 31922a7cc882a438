package dev.rnicsim.simnic;

/**
 * The simulated clock of a fabric, in nanoseconds since the fabric was created. Only the NIC model advances it, by
 * the durations the {@link CostModel} gives; nothing reads wall-clock time, so a run is deterministic.
 *
 * <p>Not thread safe.
 */
public final class SimClock
{
    private long nowNs;

    /**
     * @return simulated time in ns.
     */
    public long nowNs()
    {
        return nowNs;
    }

    /**
     * @param durationNs how far to advance, 0 or more.
     * @return the new time in ns.
     * @throws IllegalArgumentException when durationNs is negative.
     */
    public long advance(final long durationNs)
    {
        if (durationNs < 0)
        {
            throw new IllegalArgumentException("durationNs=" + durationNs + " < 0: simulated time never goes back");
        }
        nowNs += durationNs;
        return nowNs;
    }
}
