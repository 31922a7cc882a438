package dev.rnicsim.simnic;

/**
 * One registration or deregistration, as a trace records it (what a start-up spends registering): parameters, what
 * the driver did, and the simulated time it took.
 *
 * @param kind         REG or DEREG.
 * @param startNs      simulated time it started.
 * @param durationNs   simulated duration.
 * @param lkey         the MR's lkey.
 * @param addr         first byte registered.
 * @param lengthBytes  bytes registered.
 * @param iova         the MR's iova.
 * @param access       access bits ({@code ibv_access_flags}).
 * @param pagesPinned  4 KiB pages pinned (REG) or unpinned (DEREG).
 * @param leavesWalked page-table leaves (4 KiB, 2 MiB or 1 GiB) the pin walked (REG; 0 for DEREG).
 * @param pageSizeBytes the MR page size chosen.
 * @param mttEntries   MTT entries written (REG) or zapped (DEREG).
 * @param cacheEntriesDropped translation-cache entries dropped (DEREG).
 */
public record RegistrationEvent(Kind kind, long startNs, long durationNs, int lkey, long addr, long lengthBytes,
    long iova, int access, long pagesPinned, long leavesWalked, long pageSizeBytes, long mttEntries,
    long cacheEntriesDropped)
{
    /** The kind of event. */
    public enum Kind
    {
        /** ibv_reg_mr. */
        REG,
        /** ibv_dereg_mr. */
        DEREG
    }

    /**
     * A registration with its counts at 0: give them with {@link #pinned}, {@link #translation} and {@link #dropped}.
     *
     * @param startNs     simulated time it started.
     * @param durationNs  simulated duration.
     * @param lkey        the MR's lkey.
     * @param addr        first byte registered.
     * @param lengthBytes bytes registered.
     * @param iova        the MR's iova.
     * @param access      access bits ({@code ibv_access_flags}).
     * @return the event.
     */
    public static RegistrationEvent reg(final long startNs, final long durationNs, final int lkey, final long addr,
        final long lengthBytes, final long iova, final int access)
    {
        return new RegistrationEvent(Kind.REG, startNs, durationNs, lkey, addr, lengthBytes, iova, access, 0, 0, 0, 0,
            0);
    }

    /**
     * A deregistration with its counts at 0, as {@link #reg}.
     *
     * @param startNs     simulated time it started.
     * @param durationNs  simulated duration.
     * @param lkey        the MR's lkey.
     * @param addr        first byte of the MR.
     * @param lengthBytes bytes of the MR.
     * @param iova        the MR's iova.
     * @param access      access bits ({@code ibv_access_flags}).
     * @return the event.
     */
    public static RegistrationEvent dereg(final long startNs, final long durationNs, final int lkey, final long addr,
        final long lengthBytes, final long iova, final int access)
    {
        return new RegistrationEvent(Kind.DEREG, startNs, durationNs, lkey, addr, lengthBytes, iova, access, 0, 0, 0,
            0, 0);
    }

    /**
     * @param pages  4 KiB pages pinned (REG) or unpinned (DEREG).
     * @param leaves page-table leaves the pin walked (REG; 0 for DEREG).
     * @return this event with those pin counts.
     */
    public RegistrationEvent pinned(final long pages, final long leaves)
    {
        return new RegistrationEvent(kind, startNs, durationNs, lkey, addr, lengthBytes, iova, access, pages, leaves,
            pageSizeBytes, mttEntries, cacheEntriesDropped);
    }

    /**
     * @param pageBytes the MR page size.
     * @param entries   MTT entries written (REG) or zapped (DEREG).
     * @return this event with that translation.
     */
    public RegistrationEvent translation(final long pageBytes, final long entries)
    {
        return new RegistrationEvent(kind, startNs, durationNs, lkey, addr, lengthBytes, iova, access, pagesPinned,
            leavesWalked, pageBytes, entries, cacheEntriesDropped);
    }

    /**
     * @param entries translation-cache entries dropped.
     * @return this event with that count.
     */
    public RegistrationEvent dropped(final long entries)
    {
        return new RegistrationEvent(kind, startNs, durationNs, lkey, addr, lengthBytes, iova, access, pagesPinned,
            leavesWalked, pageSizeBytes, mttEntries, entries);
    }
}
