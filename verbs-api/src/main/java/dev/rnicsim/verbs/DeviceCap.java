package dev.rnicsim.verbs;

import java.util.EnumSet;

/**
 * Bits of {@code device_cap_flags} ({@code enum ibv_device_cap_flags}, libibverbs/verbs.h), named as
 * {@code ibv_devinfo -v} prints them.
 *
 * <p>Immutable and thread safe.
 */
public enum DeviceCap
{
    /** IBV_DEVICE_RESIZE_MAX_WR. */
    RESIZE_MAX_WR(0),
    /** IBV_DEVICE_BAD_PKEY_CNTR. */
    BAD_PKEY_CNTR(1),
    /** IBV_DEVICE_BAD_QKEY_CNTR. */
    BAD_QKEY_CNTR(2),
    /** IBV_DEVICE_RAW_MULTI. */
    RAW_MULTI(3),
    /** IBV_DEVICE_AUTO_PATH_MIG. */
    AUTO_PATH_MIG(4),
    /** IBV_DEVICE_CHANGE_PHY_PORT. */
    CHANGE_PHY_PORT(5),
    /** IBV_DEVICE_UD_AV_PORT_ENFORCE. */
    UD_AV_PORT_ENFORCE(6),
    /** IBV_DEVICE_CURR_QP_STATE_MOD. */
    CURR_QP_STATE_MOD(7),
    /** IBV_DEVICE_SHUTDOWN_PORT. */
    SHUTDOWN_PORT(8),
    /** IBV_DEVICE_INIT_TYPE. */
    INIT_TYPE(9),
    /** IBV_DEVICE_PORT_ACTIVE_EVENT. */
    PORT_ACTIVE_EVENT(10),
    /** IBV_DEVICE_SYS_IMAGE_GUID. */
    SYS_IMAGE_GUID(11),
    /** IBV_DEVICE_RC_RNR_NAK_GEN. */
    RC_RNR_NAK_GEN(12),
    /** IBV_DEVICE_SRQ_RESIZE. */
    SRQ_RESIZE(13),
    /** IBV_DEVICE_N_NOTIFY_CQ. */
    N_NOTIFY_CQ(14),
    /** IBV_DEVICE_MEM_WINDOW: memory windows exist (max_mw may still be 0, as on ConnectX-3 and E810). */
    MEM_WINDOW(17),
    /** IBV_DEVICE_UD_IP_CSUM. */
    UD_IP_CSUM(18),
    /** IBV_DEVICE_XRC. */
    XRC(20),
    /** IBV_DEVICE_MEM_MGT_EXTENSIONS: fast registration and local invalidation. */
    MEM_MGT_EXTENSIONS(21),
    /** IBV_DEVICE_MEM_WINDOW_TYPE_2A. */
    MEM_WINDOW_TYPE_2A(23),
    /** IBV_DEVICE_MEM_WINDOW_TYPE_2B. */
    MEM_WINDOW_TYPE_2B(24),
    /** IBV_DEVICE_RC_IP_CSUM. */
    RC_IP_CSUM(25),
    /** IBV_DEVICE_RAW_IP_CSUM. */
    RAW_IP_CSUM(26),
    /** IBV_DEVICE_MANAGED_FLOW_STEERING. */
    MANAGED_FLOW_STEERING(29),
    /** IB_UVERBS_DEVICE_FLUSH_GLOBAL (device_cap_flags_ex bit 38): MRs may take IBV_ACCESS_FLUSH_GLOBAL and the
     * FLUSH work request may target the global visibility point. */
    FLUSH_GLOBAL(38),
    /** IB_UVERBS_DEVICE_FLUSH_PERSISTENT (bit 39): FLUSH to the persistence point. */
    FLUSH_PERSISTENT(39),
    /** IB_UVERBS_DEVICE_ATOMIC_WRITE (bit 40): the ATOMIC_WRITE work request (an 8-byte write placed atomically). */
    ATOMIC_WRITE(40);

    private final int shift;

    DeviceCap(final int shift)
    {
        this.shift = shift;
    }

    /**
     * @return the flag's bit in {@code device_cap_flags}.
     */
    public long bit()
    {
        return 1L << shift;
    }

    /**
     * @param flags a {@code device_cap_flags} value.
     * @return the named flags it has (bits without a name are dropped).
     */
    public static EnumSet<DeviceCap> fromBits(final long flags)
    {
        final EnumSet<DeviceCap> set = EnumSet.noneOf(DeviceCap.class);
        for (final DeviceCap c : values())
        {
            if ((flags & c.bit()) != 0)
            {
                set.add(c);
            }
        }
        return set;
    }
}
