package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.extendedOp;
import static dev.rnicsim.hwnic.Downcalls.pointerHandle;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.Set;

/**
 * {@code ibv_create_qp_ex} (ibv_create_qp_ex(3)) as verbs.h inlines it: with a comp_mask of IBV_QP_INIT_ATTR_PD alone
 * it is {@code ibv_create_qp}; otherwise the call goes through the extended table's {@code create_qp_ex}, and a
 * context without one answers EOPNOTSUPP. The backend uses it for a QP created with {@code send_ops_flags}
 * ({@link dev.rnicsim.verbs.QpInitAttr#withSendOps}), so that the provider decides which operations it takes, as for
 * rdma-core's {@code tests/test_qpex.py} players. Conventions as {@link Libibverbs}.
 *
 * <p>Thread safe: the wrappers keep no state of their own.
 */
final class ExtendedQpVerbs
{
    /** {@code struct ibv_rx_hash_conf}. */
    static final StructLayout IBV_RX_HASH_CONF = MemoryLayout.structLayout(
        JAVA_BYTE.withName("rx_hash_function"), JAVA_BYTE.withName("rx_hash_key_len"), MemoryLayout.paddingLayout(6),
        ADDRESS.withName("rx_hash_key"), JAVA_LONG.withName("rx_hash_fields_mask")).withName("ibv_rx_hash_conf");

    /** {@code struct ibv_qp_init_attr_ex}: {@code struct ibv_qp_init_attr}'s members, then the extensions. */
    static final StructLayout IBV_QP_INIT_ATTR_EX = MemoryLayout.structLayout(
        ADDRESS.withName("qp_context"), ADDRESS.withName("send_cq"), ADDRESS.withName("recv_cq"),
        ADDRESS.withName("srq"), IbvStructs.IBV_QP_CAP.withName("cap"), JAVA_INT.withName("qp_type"),
        JAVA_INT.withName("sq_sig_all"), JAVA_INT.withName("comp_mask"), ADDRESS.withName("pd"),
        ADDRESS.withName("xrcd"), JAVA_INT.withName("create_flags"), JAVA_SHORT.withName("max_tso_header"),
        MemoryLayout.paddingLayout(2), ADDRESS.withName("rwq_ind_tbl"), IBV_RX_HASH_CONF.withName("rx_hash_conf"),
        JAVA_INT.withName("source_qpn"), MemoryLayout.paddingLayout(4), JAVA_LONG.withName("send_ops_flags"))
        .withName("ibv_qp_init_attr_ex");

    static final long INIT_EX_COMP_MASK = IbvStructs.offset(IBV_QP_INIT_ATTR_EX, "comp_mask");
    static final long INIT_EX_PD = IbvStructs.offset(IBV_QP_INIT_ATTR_EX, "pd");
    static final long INIT_EX_XRCD = IbvStructs.offset(IBV_QP_INIT_ATTR_EX, "xrcd");
    static final long INIT_EX_SEND_OPS_FLAGS = IbvStructs.offset(IBV_QP_INIT_ATTR_EX, "send_ops_flags");

    /** {@code IBV_QP_INIT_ATTR_PD} of {@code enum ibv_qp_init_attr_mask}. */
    static final int IBV_QP_INIT_ATTR_PD = 1;
    /** {@code IBV_QP_INIT_ATTR_XRCD}. */
    static final int IBV_QP_INIT_ATTR_XRCD = 1 << 1;
    /** {@code IBV_QP_INIT_ATTR_SEND_OPS_FLAGS}. */
    static final int IBV_QP_INIT_ATTR_SEND_OPS_FLAGS = 1 << 6;

    /** {@code IBV_QP_EX_WITH_RDMA_WRITE} of {@code enum ibv_qp_create_send_ops_flags}. */
    static final long IBV_QP_EX_WITH_RDMA_WRITE = 1;
    /** {@code IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM}. */
    static final long IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM = 1 << 1;
    /** {@code IBV_QP_EX_WITH_SEND}. */
    static final long IBV_QP_EX_WITH_SEND = 1 << 2;
    /** {@code IBV_QP_EX_WITH_SEND_WITH_IMM}. */
    static final long IBV_QP_EX_WITH_SEND_WITH_IMM = 1 << 3;
    /** {@code IBV_QP_EX_WITH_RDMA_READ}. */
    static final long IBV_QP_EX_WITH_RDMA_READ = 1 << 4;
    /** {@code IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP}. */
    static final long IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP = 1 << 5;
    /** {@code IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD}. */
    static final long IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD = 1 << 6;
    /** {@code IBV_QP_EX_WITH_LOCAL_INV}. */
    static final long IBV_QP_EX_WITH_LOCAL_INV = 1 << 7;
    /** {@code IBV_QP_EX_WITH_BIND_MW}. */
    static final long IBV_QP_EX_WITH_BIND_MW = 1 << 8;
    /** {@code IBV_QP_EX_WITH_SEND_WITH_INV}. */
    static final long IBV_QP_EX_WITH_SEND_WITH_INV = 1 << 9;

    private final MethodHandle createQpExPtr = pointerHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));

    /**
     * The {@code send_ops_flags} bits of a set of operations.
     *
     * @param ops operations the QP will post; each must be one ibv_post_send can carry (see {@link #postable}).
     * @return the IBV_QP_EX_WITH_* bits.
     */
    static long sendOpsFlags(final Set<WrOpcode> ops)
    {
        long bits = 0;
        for (final WrOpcode op : ops)
        {
            bits |= switch (op)
            {
                case RDMA_WRITE -> IBV_QP_EX_WITH_RDMA_WRITE;
                case RDMA_WRITE_WITH_IMM -> IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
                case SEND -> IBV_QP_EX_WITH_SEND;
                case SEND_WITH_IMM -> IBV_QP_EX_WITH_SEND_WITH_IMM;
                case RDMA_READ -> IBV_QP_EX_WITH_RDMA_READ;
                case ATOMIC_CMP_AND_SWP -> IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
                case ATOMIC_FETCH_AND_ADD -> IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
                case LOCAL_INV -> IBV_QP_EX_WITH_LOCAL_INV;
                case BIND_MW -> IBV_QP_EX_WITH_BIND_MW;
                case SEND_WITH_INV -> IBV_QP_EX_WITH_SEND_WITH_INV;
                default -> throw new IllegalArgumentException(op + " is not postable through ibv_post_send");
            };
        }
        return bits;
    }

    /**
     * @param op an operation.
     * @return true when ibv_post_send carries it, so a QP created with it in send_ops_flags can post it here; FLUSH
     *     and ATOMIC_WRITE need the {@code ibv_wr_*} builders, REG_MR is a kernel verb.
     */
    static boolean postable(final WrOpcode op)
    {
        return op != WrOpcode.FLUSH && op != WrOpcode.ATOMIC_WRITE && op != WrOpcode.REG_MR;
    }

    /**
     * {@code ibv_create_qp_ex(context, init_attr_ex)} as verbs.h inlines it, for a comp_mask other than PD alone.
     *
     * @param ctx    the context.
     * @param initEx a {@code struct ibv_qp_init_attr_ex}; the provider writes the granted capacities back.
     * @return the QP address, or 0 with errno (EOPNOTSUPP without calling when the context has no create_qp_ex).
     */
    Result createQpEx(final MemorySegment ctx, final MemorySegment initEx)
    {
        final MemorySegment fn = extendedOp(ctx, IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "create_qp_ex"));
        if (fn.address() == 0)
        {
            return new Result(0, Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment qp = (MemorySegment)createQpExPtr.invokeExact(fn, state, ctx, initEx);
            return new Result(qp.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_create_qp_ex", t);
        }
    }
}
