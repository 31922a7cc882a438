package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import java.util.List;

/**
 * The responder's first packet check: the transport of the packet's BTH opcode (its top three bits: RC, UC, RD, UD,
 * XRC) must be its QP's type, else the packet is dropped without an answer (rxe_recv.c {@code check_type_state}: an RC
 * QP takes only {@code IB_OPCODE_RC} packets, a UC QP only {@code IB_OPCODE_UC} ones; IBA vol. 1 9.6.1.1, a packet of
 * another transport service is silently dropped; hardware checks the same). Nothing modify_qp does compares the two
 * ends' types, so an RC QP connected to a UC QP reaches RTS on both sides; then:
 * <ul>
 * <li>an RC requester's packets never arrive and no acknowledgement comes: after {@code retry_cnt} retries the work
 * request completes with IBV_WC_RETRY_EXC_ERR, priced as {@code retry_cnt + 1} local ACK timeouts
 * ({@link AckTimeout});</li>
 * <li>a UC requester expects no acknowledgement: its work request completes with IBV_WC_SUCCESS and nothing arrives
 * (no data placed, no receive consumed, no completion at the responder).</li>
 * </ul>
 * XRC's routing is {@link XrcRules}'.
 *
 * <p>Stateless.
 */
final class TransportCheck
{
    private TransportCheck()
    {
    }

    /**
     * @param qp   the requester QP.
     * @param peer the responder QP, live and connected back.
     * @return why the responder drops the requester's packets, or null when their transports match (or XRC routes
     *         them).
     */
    static String mismatch(final SimQp qp, final SimQp peer)
    {
        if (qp.type != QpType.RC && qp.type != QpType.UC || peer.type == qp.type)
        {
            return null;
        }
        return qp.type + " QP 0x" + Integer.toHexString(qp.num) + " sends " + qp.type + " packets (BTH opcodes of "
            + "the " + qp.type + " transport) to " + peer.type + " QP 0x" + Integer.toHexString(peer.num) + " on "
            + peer.device.name() + ", which drops every packet whose transport is not its own";
    }

    /**
     * Runs the head WQE whose packets the responder drops ({@link #mismatch}).
     *
     * @param qp   the requester QP.
     * @param p    the head WQE.
     * @param why  what {@link #mismatch} answered.
     * @param ack  the requester's ACK timer.
     * @return the outcome: an RC requester's retries run out (ERROR, or BLOCKED with timeout 0), a UC requester's
     *         work request is done.
     */
    static WqeOutcome dropped(final SimQp qp, final SendWqe p, final String why, final AckTimeout ack)
    {
        final SendWr wr = p.wr();
        if (qp.type == QpType.RC)
        {
            return ack.noAcknowledgement(qp, p, new WcDiagnosis(WcDiagnosis.Check.NO_ACK,
                Diagnoser.vendorErr(qp.device.profile(), WcStatus.RETRY_EXC_ERR), 0, -1, -1, Diagnoser.posted(qp, wr)
                + ": no acknowledgement after retry_cnt=" + qp.retryCount + " retries: " + why, Diagnoser.reported(
                qp.device.profile(), List.of(fix()))));
        }
        qp.device.fabric().span(qp.device, wr.opcode().name(), "dma", qp.device.fabric().costModel()
            .opBaseLatencyNs(), java.util.Map.of("qp_num", qp.num, "dropped", why + "; UC expects no "
            + "acknowledgement: " + fix()));
        if (qp.sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            qp.completions.completeSend(wr, WcStatus.SUCCESS, 0);
        }
        return WqeOutcome.DONE;
    }

    private static String fix()
    {
        return "fix: connect QPs of the same type (create both with qp_type IBV_QPT_RC, or both IBV_QPT_UC)";
    }
}
