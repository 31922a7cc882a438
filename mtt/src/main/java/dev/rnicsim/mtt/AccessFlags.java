package dev.rnicsim.mtt;

/**
 * Access-right bits stored in an MPT entry, with the values of {@code enum ibv_access_flags}
 * (libibverbs/verbs.h) so that keys and rights read the same as in rdma-core.
 *
 * <p>Stateless and thread safe.
 */
public final class AccessFlags
{
    /** IBV_ACCESS_LOCAL_WRITE. */
    public static final int LOCAL_WRITE = 1;
    /** IBV_ACCESS_REMOTE_WRITE. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** IBV_ACCESS_REMOTE_READ. */
    public static final int REMOTE_READ = 1 << 2;
    /** IBV_ACCESS_REMOTE_ATOMIC. */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** IBV_ACCESS_MW_BIND. */
    public static final int MW_BIND = 1 << 4;
    /** IBV_ACCESS_FLUSH_GLOBAL: the target of a FLUSH to the global visibility point. */
    public static final int FLUSH_GLOBAL = 1 << 8;
    /** IBV_ACCESS_FLUSH_PERSISTENT: the target of a FLUSH to the persistence point. */
    public static final int FLUSH_PERSISTENT = 1 << 9;
    /** IBV_ACCESS_ON_DEMAND. */
    public static final int ON_DEMAND = 1 << 6;
    /** IBV_ACCESS_RELAXED_ORDERING. */
    public static final int RELAXED_ORDERING = 1 << 20;

    private AccessFlags()
    {
    }
}
