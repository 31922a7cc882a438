package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WrOpcode;
import java.util.EnumSet;
import java.util.Set;

/**
 * The {@code send_ops_flags} of {@code ibv_create_qp_ex} as the library carries them ({@code wire_create_qp}'s
 * {@code cap.pad}: the flags with {@link #GIVEN} set when the program gave IBV_QP_INIT_ATTR_SEND_OPS_FLAGS), decoded
 * into the opcodes the model's provider table is checked against (sim-nic's {@code SendOps}: EOPNOTSUPP for an
 * opcode the device's provider builds no {@code ibv_wr_*} function for, as mlx5's {@code mlx5_qp_fill_wr_pfns} and
 * rxe's {@code check_qp_init_attr} answer). Stateless.
 */
final class SendOpsFlags
{
    /** Set in the carried word when the program gave send_ops_flags (a QP created with none takes every opcode). */
    static final int GIVEN = 1 << 31;
    private static final int EOPNOTSUPP = 95;

    /** {@code enum ibv_qp_create_send_ops_flags} bit by bit: bits 0 to 9 are the opcodes of the same numbers;
     * bit 10 TSO, 11 FLUSH, 12 ATOMIC_WRITE. */
    private static final WrOpcode[] BITS = {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.SEND,
        WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD,
        WrOpcode.LOCAL_INV, WrOpcode.BIND_MW, WrOpcode.SEND_WITH_INV, null, WrOpcode.FLUSH, WrOpcode.ATOMIC_WRITE};

    private SendOpsFlags()
    {
    }

    /**
     * @param carried the word the library carried.
     * @return the opcodes asked, or null when the program gave no send_ops_flags.
     * @throws VerbsException EOPNOTSUPP for IBV_QP_EX_WITH_TSO (the simulated devices have no raw-packet QPs, the
     *                        only QPs a provider builds it for) or a bit libibverbs does not define.
     */
    static Set<WrOpcode> decode(final int carried)
    {
        if ((carried & GIVEN) == 0)
        {
            return null;
        }
        final int flags = carried & ~GIVEN;
        final Set<WrOpcode> ops = EnumSet.noneOf(WrOpcode.class);
        for (int bit = 0; bit < 31; bit++)
        {
            if ((flags & (1 << bit)) == 0)
            {
                continue;
            }
            if (bit >= BITS.length || BITS[bit] == null)
            {
                throw new VerbsException("ibv_create_qp_ex", EOPNOTSUPP, "send_ops_flags bit 0x"
                    + Integer.toHexString(1 << bit) + " names no work request the simulated devices build an ibv_wr_* "
                    + "function for (TSO is for raw-packet QPs); leave it out");
            }
            ops.add(BITS[bit]);
        }
        return ops;
    }
}
