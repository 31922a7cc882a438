package dev.rnicsim.verbs;

/**
 * On-demand-paging capabilities ({@code struct ibv_odp_caps} in {@code ibv_query_device_ex}, libibverbs/verbs.h):
 * general bits and, per transport, the operations that may fault.
 *
 * @param generalCaps OR of {@link #SUPPORT} and {@link #SUPPORT_IMPLICIT}.
 * @param rcOdpCaps   operations on RC QPs that support ODP (OR of {@link #SEND}, {@link #RECV}, ...).
 * @param ucOdpCaps   the same for UC.
 * @param udOdpCaps   the same for UD.
 * @param xrcOdpCaps  the same for XRC.
 */
public record OdpCaps(int generalCaps, int rcOdpCaps, int ucOdpCaps, int udOdpCaps, int xrcOdpCaps)
{
    /** IBV_ODP_SUPPORT. */
    public static final int SUPPORT = 1;
    /** IBV_ODP_SUPPORT_IMPLICIT. */
    public static final int SUPPORT_IMPLICIT = 2;
    /** IBV_ODP_SUPPORT_SEND. */
    public static final int SEND = 0x1;
    /** IBV_ODP_SUPPORT_RECV. */
    public static final int RECV = 0x2;
    /** IBV_ODP_SUPPORT_WRITE. */
    public static final int WRITE = 0x4;
    /** IBV_ODP_SUPPORT_READ. */
    public static final int READ = 0x8;
    /** IBV_ODP_SUPPORT_ATOMIC. */
    public static final int ATOMIC = 0x10;
    /** IBV_ODP_SUPPORT_SRQ_RECV. */
    public static final int SRQ_RECV = 0x20;
    /** IBV_ODP_SUPPORT_FLUSH. */
    public static final int FLUSH = 0x40;
    /** IBV_ODP_SUPPORT_ATOMIC_WRITE. */
    public static final int ATOMIC_WRITE = 0x80;

    /** No ODP at all. */
    public static final OdpCaps NONE = new OdpCaps(0, 0, 0, 0, 0);

    /**
     * @return true when the device supports ODP MRs at all.
     */
    public boolean supported()
    {
        return (generalCaps & SUPPORT) != 0;
    }

    /**
     * @return true when the device supports implicit ODP (an MR over the whole address space).
     */
    public boolean implicitSupported()
    {
        return (generalCaps & SUPPORT_IMPLICIT) != 0;
    }
}
