package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.WrOpcode;
import java.util.EnumSet;
import java.util.Set;

/**
 * The {@code send_ops_flags} of {@code ibv_create_qp_ex} (ibv_create_qp_ex(3), {@code IBV_QP_INIT_ATTR_SEND_OPS_FLAGS}):
 * the provider builds the {@code ibv_wr_*} functions of the QP for the opcodes asked and refuses the QP with
 * EOPNOTSUPP when one of them is not in its table for the QP type. The table is a device-profile property: mlx5's
 * ({@link ProviderRule#SEND_OPS_MLX5}), rxe's ({@link ProviderRule#SEND_OPS_RXE}), hns's ({@link
 * ProviderRule#SEND_OPS_HNS}), none where the provider has no
 * {@code create_qp_ex} at all ({@link ProviderRule#CREATE_QP_EX_UNSUPPORTED}) or one that takes no send_ops_flags
 * ({@link ProviderRule#CREATE_QP_EX_WITHOUT_SEND_OPS}), and for a driver whose provider
 * table was not read (assumed) the opcodes the QP type carries (IBA 9.8.3, {@link Datagrams#opcodeRefusal}) that the
 * device reports, with FLUSH and ATOMIC_WRITE only where it has those capabilities. Stateless.
 */
final class SendOps
{
    private static final Set<WrOpcode> UD = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM);
    private static final Set<WrOpcode> MLX5_UC = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_INV,
        WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.LOCAL_INV, WrOpcode.BIND_MW);
    private static final Set<WrOpcode> MLX5_RC = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_INV,
        WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ,
        WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.LOCAL_INV, WrOpcode.BIND_MW);
    private static final Set<WrOpcode> RXE_UC = EnumSet.of(WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM,
        WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.BIND_MW, WrOpcode.SEND_WITH_INV);
    private static final Set<WrOpcode> RXE_RC = EnumSet.of(WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM,
        WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_CMP_AND_SWP,
        WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.LOCAL_INV, WrOpcode.BIND_MW, WrOpcode.SEND_WITH_INV);
    private static final Set<WrOpcode> ATOMICS = EnumSet.of(WrOpcode.ATOMIC_CMP_AND_SWP,
        WrOpcode.ATOMIC_FETCH_AND_ADD);
    private static final Set<WrOpcode> HNS_RC = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_INV,
        WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ,
        WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD);

    /** The inline data mlx4's {@code create_qp_ex} takes at most (providers/mlx4/verbs.c). */
    private static final int MLX4_MAX_INLINE_BYTES = 1024;

    private SendOps()
    {
    }

    /**
     * @param profile the device's profile.
     * @param type    the QP type.
     * @return the opcodes {@code ibv_create_qp_ex} takes in send_ops_flags for a QP of that type.
     */
    static Set<WrOpcode> supported(final DeviceProfile profile, final QpType type)
    {
        final DeviceAttributes a = profile.attributes();
        final Set<WrOpcode> ops = EnumSet.noneOf(WrOpcode.class);
        if (profile.follows(ProviderRule.SEND_OPS_MLX5))
        {
            // MLX5_SUPPORTED_SEND_OPS_FLAGS_XRC is the RC set
            ops.addAll(type == QpType.RC || type == QpType.XRC_SEND ? MLX5_RC : type == QpType.UC ? MLX5_UC : UD);
            if (a.atomicCap() == AtomicCap.NONE)
            {
                // mlx5_qp_fill_wr_pfns: atomics need the QP's atomics_enabled, which a device without atomics lacks.
                ops.removeAll(ATOMICS);
            }
            return ops;
        }
        if (profile.follows(ProviderRule.SEND_OPS_HNS))
        {
            // fill_send_wr_ops: RC and XRC_SEND share a table, UD has its own, any other type is EOPNOTSUPP
            ops.addAll(type == QpType.RC || type == QpType.XRC_SEND ? HNS_RC : type == QpType.UD ? UD : Set.of());
            return ops;
        }
        if (profile.follows(ProviderRule.SEND_OPS_RXE))
        {
            ops.addAll(type == QpType.RC ? RXE_RC : type == QpType.UC ? RXE_UC : UD);
        }
        else
        {
            for (final WrOpcode op : WrOpcode.values())
            {
                if (op != WrOpcode.REG_MR && Datagrams.opcodeRefusal(type, op) == null)
                {
                    ops.add(op);
                }
            }
            ops.removeAll(EnumSet.of(WrOpcode.FLUSH, WrOpcode.ATOMIC_WRITE));
            if (a.atomicCap() == AtomicCap.NONE)
            {
                ops.removeAll(ATOMICS);
            }
        }
        if (type == QpType.RC && a.has(DeviceCap.FLUSH_GLOBAL) && a.has(DeviceCap.FLUSH_PERSISTENT))
        {
            ops.add(WrOpcode.FLUSH);
        }
        if (type == QpType.RC && a.has(DeviceCap.ATOMIC_WRITE))
        {
            ops.add(WrOpcode.ATOMIC_WRITE);
        }
        return ops;
    }

    /**
     * Refuses a QP whose send_ops_flags ask for an opcode the provider has no {@code ibv_wr_*} function for:
     * EOPNOTSUPP before anything is created (mlx5 {@code mlx5_qp_fill_wr_pfns}; rxe {@code check_qp_init_attr}; rdma-core
     * tests/test_qpex.py skips on it: "Extended QP is not supported on this device").
     *
     * @throws dev.rnicsim.verbs.VerbsException EOPNOTSUPP.
     */
    static void check(final String verb, final SimDevice device, final QpInitAttr attr)
    {
        if (attr.sendOps() == null)
        {
            return;
        }
        if (device.profile().follows(ProviderRule.CREATE_QP_EX_UNSUPPORTED))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, "send_ops_flags: the " + device.profile().driver() + " provider "
                + "has no create_qp_ex (rdma-core 44), so libibverbs answers ibv_create_qp_ex with more than a PD "
                + "itself; nothing was created. Create the QP with ibv_create_qp and post with ibv_post_send, or use a "
                + "device whose provider builds ibv_wr_* functions (mlx5, rxe, hns, efa)");
        }
        if (device.profile().follows(ProviderRule.CREATE_QP_EX_WITHOUT_SEND_OPS))
        {
            // mlx4 create_qp_ex sizes the queues against max_qp_wr, max_sge and 1024 inline bytes (EINVAL) first
            final dev.rnicsim.verbs.QpCap c = attr.cap();
            final DeviceAttributes a = device.profile().attributes();
            if (c.maxSendWr() > a.maxQpWr() || c.maxRecvWr() > a.maxQpWr() || c.maxSendSge() > a.maxSge()
                || c.maxRecvSge() > a.maxSge() || c.maxInlineDataBytes() > MLX4_MAX_INLINE_BYTES)
            {
                throw Errors.invalid(verb, "cap " + c + " is past max_qp_wr=" + a.maxQpWr() + ", max_sge="
                    + a.maxSge() + " or " + MLX4_MAX_INLINE_BYTES + " inline bytes, which mlx4's create_qp_ex checks "
                    + "before its comp_mask (providers/mlx4/verbs.c); ask for less");
            }
            throw Errors.of(verb, Errno.EOPNOTSUPP, "send_ops_flags: the " + device.profile().driver() + " provider's "
                + "create_qp_ex takes comp_mask PD, XRCD, CREATE_FLAGS and MAX_TSO_HEADER only (providers/mlx4/verbs.c "
                + "MLX4_CREATE_QP_SUP_COMP_MASK) and answers IBV_QP_INIT_ATTR_SEND_OPS_FLAGS with ENOTSUP: it builds no "
                + "ibv_wr_* functions; nothing was created. Create the QP without send_ops_flags and post with "
                + "ibv_post_send, or use a device whose provider builds them (mlx5, rxe, hns, efa)");
        }
        final Set<WrOpcode> supported = supported(device.profile(), attr.type());
        final Set<WrOpcode> missing = EnumSet.noneOf(WrOpcode.class);
        for (final WrOpcode op : attr.sendOps())
        {
            if (!supported.contains(op))
            {
                missing.add(op);
            }
        }
        if (!missing.isEmpty())
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, "send_ops_flags " + missing + " on a " + attr.type() + " QP: the "
                + device.profile().driver() + " provider builds ibv_wr_* functions for " + supported + " only on this "
                + "QP type (ibv_create_qp_ex(3); " + source(device.profile()) + "); nothing was created. Leave those "
                + "flags out, or use a QP type or device that has them");
        }
    }

    private static String source(final DeviceProfile profile)
    {
        if (profile.follows(ProviderRule.SEND_OPS_MLX5))
        {
            return "providers/mlx5/qp.c mlx5_qp_fill_wr_pfns";
        }
        if (profile.follows(ProviderRule.SEND_OPS_RXE))
        {
            return "providers/rxe/rxe.c check_qp_init_attr";
        }
        if (profile.follows(ProviderRule.SEND_OPS_HNS))
        {
            return "providers/hns/hns_roce_u_hw_v2.c fill_send_wr_ops";
        }
        return "the opcodes of the QP type, IBA 9.8.3, and the device's FLUSH and ATOMIC_WRITE capabilities";
    }
}
