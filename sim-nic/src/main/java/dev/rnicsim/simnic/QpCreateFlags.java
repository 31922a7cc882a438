package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.VerbsException;

/**
 * The {@code create_flags} of {@code ibv_create_qp_ex} ({@code IBV_QP_INIT_ATTR_CREATE_FLAGS} in comp_mask,
 * ibv_create_qp_ex(3)): the kernel refuses a bit it does not know with EINVAL ({@code ib_uverbs_create_qp} checks
 * them against the {@code IB_QP_CREATE_*} flags it passes on), and the driver refuses a known flag it does not
 * implement with EOPNOTSUPP (mlx5 {@code process_create_flags}, rxe {@code rxe_create_qp}). Which flags a driver
 * implements is a profile property ({@link ProviderRule#BLOCK_MULTICAST_LOOPBACK}); the flags of raw packet QPs
 * (scatter FCS, CVLAN stripping, end padding) and IPoIB's source QPN are refused everywhere, since the simulator has
 * no raw packet or IPoIB QPs. Stateless.
 */
public final class QpCreateFlags
{
    /** {@code IBV_QP_CREATE_BLOCK_SELF_MCAST_LB}: multicast sent by the QP does not loop back to it. */
    public static final long BLOCK_SELF_MCAST_LB = 1L << 1;
    /** {@code IBV_QP_CREATE_SCATTER_FCS}, {@code _CVLAN_STRIPPING}, {@code _SOURCE_QPN},
     * {@code _PCI_WRITE_END_PADDING}: known to the kernel, for raw packet and IPoIB QPs. */
    private static final long RAW_AND_IPOIB = (1L << 8) | (1L << 9) | (1L << 10) | (1L << 11);
    private static final long KNOWN = BLOCK_SELF_MCAST_LB | RAW_AND_IPOIB;

    private QpCreateFlags()
    {
    }

    /**
     * @param profile the device's profile.
     * @param type    the QP's type.
     * @param flags   the create_flags asked.
     * @throws VerbsException EINVAL for a bit the kernel does not know; EOPNOTSUPP for a flag the driver does not
     *                        implement. Nothing is created then.
     */
    public static void check(final DeviceProfile profile, final QpType type, final long flags)
    {
        if ((flags & ~KNOWN) != 0)
        {
            throw Errors.invalid("ibv_create_qp_ex", "create_flags=0x" + Long.toHexString(flags) + " has bits 0x"
                + Long.toHexString(flags & ~KNOWN) + " no kernel knows (ib_uverbs_create_qp); use the IBV_QP_CREATE_* "
                + "flags of <infiniband/verbs.h>");
        }
        long refused = flags & RAW_AND_IPOIB;
        if ((flags & BLOCK_SELF_MCAST_LB) != 0 && !profile.follows(ProviderRule.BLOCK_MULTICAST_LOOPBACK))
        {
            refused |= BLOCK_SELF_MCAST_LB;
        }
        if (refused != 0)
        {
            throw Errors.of("ibv_create_qp_ex", Errno.EOPNOTSUPP, "create_flags 0x" + Long.toHexString(refused)
                + " of a " + type + " QP are not implemented by the driver of " + profile.name() + " ("
                + profile.driver() + "); create the QP without them");
        }
    }
}
