package dev.rnicsim.simnic;

/**
 * One registration or deregistration, as a trace records it (what a start-up spends registering): parameters, what the driver did, and the
 * simulated time it took.
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
    long iova, int access, long pagesPinned, long leavesWalked, long pageSizeBytes, long mttEntries, long cacheEntriesDropped)
{
    /** The kind of event. */
    public enum Kind
    {
        /** ibv_reg_mr. */
        REG,
        /** ibv_dereg_mr. */
        DEREG
    }
}
