package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.WrOpcode;
import java.util.EnumSet;
import java.util.Set;

/**
 * Where an opcode that the QP's type does not carry (IBA 9.8.3: UD carries SEND and SEND_WITH_IMM, UC adds RDMA
 * WRITE but has no RDMA READ and no atomics) is refused: at {@code ibv_post_send} with EINVAL, or by the device (the
 * provider posted it unchecked) with an IBV_WC_LOC_QP_OP_ERR completion that moves the QP to the error state.
 *
 * <ul>
 * <li>mlx5 ({@link ProviderRule#UD_OPCODES_UNCHECKED_AT_POST}, {@link ProviderRule#UC_OPCODES_UNCHECKED_AT_POST}):
 * {@code _mlx5_post_send} checks the opcode only against the size of its opcode table; for a UD QP it adds the
 * datagram segment, for a UC QP the remote-address segment of an RDMA WRITE, and posts whatever else the opcode is.
 * The device refuses the WQE; its completion status is not public (IBV_WC_LOC_QP_OP_ERR assumed).</li>
 * <li>rxe ({@link ProviderRule#OPCODES_CHECKED_BY_RXE_REQUESTER}): librxe's {@code validate_send_wr} (providers/rxe)
 * refuses only BIND_MW on a QP that is not RC, UC or XRC_SEND (EINVAL); everything else goes into the send queue.
 * The kernel's {@code rxe_requester} then takes the WQE's mask from {@code rxe_wr_opcode_info} per QP type and its
 * packet opcode from {@code next_opcode}: LOCAL_INV and REG_MR run as local operations on RC only, BIND_MW on RC and
 * UC; on UC only SEND, SEND_WITH_IMM and RDMA WRITE (with immediate) build a packet ({@code next_opcode_uc}), on UD
 * only SEND and SEND_WITH_IMM; anything else completes with IBV_WC_LOC_QP_OP_ERR ("opcode &lt; 0") and the QP goes to
 * the error state. So on rxe a UC SEND_WITH_INV, LOCAL_INV or REG_MR fails too, though its send_ops table offers
 * SEND_WITH_INV on UC. FLUSH and ATOMIC_WRITE keep their own checks ({@link PlacementOps}).</li>
 * <li>Other profiles: refused at post with EINVAL by the IBA table ({@link Datagrams#opcodeRefusal(QpType,
 * WrOpcode)}; assumed where the provider was not read).</li>
 * </ul>
 * Stateless.
 */
final class QpTypeOpcodes
{
    /** What rxe's requester builds a packet for, or runs as a local operation, on a UC QP. */
    private static final Set<WrOpcode> RXE_UC = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM,
        WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.BIND_MW);
    /** What rxe's requester builds a packet for on a UD QP. */
    private static final Set<WrOpcode> RXE_UD = EnumSet.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM);
    /** Opcodes whose type checks are {@link PlacementOps}'. */
    private static final Set<WrOpcode> PLACEMENT = EnumSet.of(WrOpcode.FLUSH, WrOpcode.ATOMIC_WRITE);

    private QpTypeOpcodes()
    {
    }

    /**
     * @return why {@code ibv_post_send} refuses the opcode on this QP type (EINVAL), or null when it is posted.
     */
    static String postRefusal(final DeviceProfile profile, final QpType type, final WrOpcode opcode)
    {
        if (opcode != null && !PLACEMENT.contains(opcode) && (type == QpType.UD || type == QpType.UC))
        {
            if (profile.follows(ProviderRule.OPCODES_CHECKED_BY_RXE_REQUESTER))
            {
                return opcode == WrOpcode.BIND_MW && type == QpType.UD ? "BIND_MW on a UD QP: "
                    + profile.driver() + " binds windows through RC, UC and XRC_SEND QPs only (librxe "
                    + "validate_send_wr); bind through an RC or UC QP" : null;
            }
            if (type == QpType.UD && profile.follows(ProviderRule.UD_OPCODES_UNCHECKED_AT_POST)
                || type == QpType.UC && profile.follows(ProviderRule.UC_OPCODES_UNCHECKED_AT_POST))
            {
                return null;
            }
        }
        return Datagrams.opcodeRefusal(type, opcode);
    }

    /**
     * @return why the device (or rxe's requester) refuses a posted work request of this opcode on this QP type
     *         (IBV_WC_LOC_QP_OP_ERR, the QP to the error state), or null when it runs.
     */
    static String deviceRefusal(final DeviceProfile profile, final QpType type, final WrOpcode opcode)
    {
        if (PLACEMENT.contains(opcode) || type != QpType.UD && type != QpType.UC)
        {
            return null;
        }
        if (profile.follows(ProviderRule.OPCODES_CHECKED_BY_RXE_REQUESTER))
        {
            if ((type == QpType.UC ? RXE_UC : RXE_UD).contains(opcode))
            {
                return null;
            }
            return "opcode " + opcode + " on a " + type + " QP: librxe posted it unchecked and rxe_requester finds no "
                + "packet opcode for it (next_opcode: " + (type == QpType.UC ? "UC carries SEND, SEND_WITH_IMM and "
                + "RDMA WRITE; LOCAL_INV and REG_MR are local operations of RC QPs only" : "UD carries SEND and "
                + "SEND_WITH_IMM only") + "); use an RC QP";
        }
        final String why = Datagrams.opcodeRefusal(type, opcode);
        return why == null ? null : why + "; the provider posted it unchecked (mlx5 _mlx5_post_send) and the device "
            + "refuses the WQE. Post what the QP type carries, or use an RC QP";
    }
}
