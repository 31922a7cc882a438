package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import java.nio.ByteBuffer;

/**
 * A send-queue request the simulated device refused after {@code ibv_post_send} had returned 0 (the library checks
 * at post what the provider checks, with the limits and rules of the device; what only the model knows comes
 * later). The hardware's answer to a work request it cannot execute is an error completion, never a silent drop:
 * the request completes with IBV_WC_LOC_QP_OP_ERR (mlx5's syndrome for a malformed WQE, "local QP operation
 * error", IBA 10.8.3.1 local errors), signalled or not, and the QP moves to ERR, so the requests after it flush with
 * IBV_WC_WR_FLUSH_ERR. In strict mode the model's reason goes to the program's stderr beside it.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class PostRefusal
{
    /** {@code enum ibv_wc_opcode} of each {@code enum ibv_wr_opcode} (0 .. 9), as the providers report them. */
    private static final int[] WC_OPCODE_OF_WR = {1, 1, 0, 0, 2, 3, 4, 6, 5, 0};

    private PostRefusal()
    {
    }

    /**
     * Completes the refused request with IBV_WC_LOC_QP_OP_ERR on its QP's send CQ and moves the QP to ERR.
     *
     * @param completions the data path (to flush the session's messages).
     * @param s           the program's session.
     * @param q           the QP the request was posted on.
     * @param appWrId     the program's wr_id.
     * @param wrOpcode    the request's {@code ibv_wr_opcode}.
     * @param why         the model's refusal.
     */
    static void complete(final Completions completions, final Session s, final Session.QpInfo q, final long appWrId,
        final int wrOpcode, final RuntimeException why)
    {
        final int wcOpcode = wrOpcode >= 0 && wrOpcode < WC_OPCODE_OF_WR.length ? WC_OPCODE_OF_WR[wrOpcode] : 0;
        final Session to = q.sendCq.session();
        final ByteBuffer b = to.reserve(Wire.HEADER_BYTES + 8 + Wire.WC_BYTES);
        b.putInt(Wire.HEADER_BYTES + 8 + Wire.WC_BYTES).putShort((short) Wire.OP_WC).putShort((short) 0).putInt(0)
            .putInt(0).putInt(0).putInt(1);
        b.putLong(appWrId).putInt(q.sendCq.handle()).putInt(q.handle).putInt(WcStatus.LOC_QP_OP_ERR.code())
            .putInt(wcOpcode).putInt(0).putInt(0).putInt(0).putInt(q.qp.qpNum()).putInt(0).putInt(0).putInt(0)
            .putInt(0).putLong(0);
        completions.owed(to);
        if (s.strict)
        {
            s.sendText("rnicsim strict: wr_id " + appWrId + " on QP 0x" + Integer.toHexString(q.qp.qpNum())
                + " completed with IBV_WC_LOC_QP_OP_ERR: the device refused it after ibv_post_send returned: "
                + (why instanceof VerbsException v ? v.getMessage() : why.toString()) + "\n");
        }
        try
        {
            q.qp.modifyToError();
        }
        catch (final RuntimeException e)
        {
            // a QP already in ERR (or being destroyed) stays as it is
        }
    }
}
