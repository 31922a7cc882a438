package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WrOpcode;
import java.util.EnumSet;
import java.util.Set;

/**
 * The {@code send_ops_flags} of {@code ibv_create_qp_ex} as CREATE_QP carries them (wire.h: the low 30 bits of the
 * program's flags, {@code WIRE_SEND_OPS_GIVEN} when {@code IBV_QP_INIT_ATTR_SEND_OPS_FLAGS} was in comp_mask,
 * {@code WIRE_SEND_OPS_UNKNOWN} for a bit above them), turned into the opcodes the model's provider table checks
 * ({@code dev.rnicsim.simnic.SendOps}). Stateless.
 */
final class SendOpsFlags
{
    private static final int GIVEN = 0x80000000;
    private static final int UNKNOWN = 0x40000000;
    /** {@code IBV_QP_EX_WITH_*} bit by bit: 0 to 9 are the opcodes of the same number, 10 TSO, 11 FLUSH, 12
     * ATOMIC_WRITE (&lt;infiniband/verbs.h&gt;, {@code enum ibv_qp_create_send_ops_flags}). */
    private static final int TSO_BIT = 10;
    private static final int FLUSH_BIT = 11;
    private static final int ATOMIC_WRITE_BIT = 12;

    private SendOpsFlags()
    {
    }

    /**
     * @param wire the wire's field.
     * @return the opcodes asked, or null when the program gave no send_ops_flags.
     * @throws VerbsException EOPNOTSUPP for TSO (the simulator has no TSO) or a bit no provider knows, as the
     *                        providers refuse a flag outside their tables.
     */
    static Set<WrOpcode> opcodes(final int wire)
    {
        if ((wire & GIVEN) == 0)
        {
            return null;
        }
        final Set<WrOpcode> ops = EnumSet.noneOf(WrOpcode.class);
        for (int bit = 0; bit < 30; bit++)
        {
            if ((wire & (1 << bit)) == 0)
            {
                continue;
            }
            if (bit < TSO_BIT)
            {
                for (final WrOpcode o : WrOpcode.values())
                {
                    if (o.code() == bit)
                    {
                        ops.add(o);
                    }
                }
            }
            else if (bit == FLUSH_BIT)
            {
                ops.add(WrOpcode.FLUSH);
            }
            else if (bit == ATOMIC_WRITE_BIT)
            {
                ops.add(WrOpcode.ATOMIC_WRITE);
            }
            else
            {
                throw unsupported(bit == TSO_BIT ? "IBV_QP_EX_WITH_TSO (the simulator has no TSO)"
                    : "bit " + bit + ", which no provider knows");
            }
        }
        if ((wire & UNKNOWN) != 0)
        {
            throw unsupported("a bit above 30, which no provider knows");
        }
        return ops;
    }

    private static VerbsException unsupported(final String what)
    {
        return new VerbsException("ibv_create_qp_ex", 95, "send_ops_flags has " + what + "; ask only for the "
            + "IBV_QP_EX_WITH_* opcodes the device's provider builds"); // EOPNOTSUPP
    }
}
