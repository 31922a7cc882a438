package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Strict mode's reason for a control verb the model refused: the program gets the errno in the answer, as from a real
 * stack, and in strict mode a REFUSAL message just before it carries the verb and the model's reason (the rule, the
 * objects, the fix), which the library prints on the program's stderr with the verb's C call site, once per refusal
 * (strict.c, {@code rnicsim_report_refusal}). A real libibverbs says nothing beyond the errno; strict mode is where a
 * program asks for more.
 *
 * <p>Stateless; runs on the failure path only.
 */
final class Refusal
{
    private static final int EINVAL = 22;

    private Refusal()
    {
    }

    /**
     * Queues the REFUSAL message of {@code e} for the request {@code op}, ahead of its answer.
     *
     * @param s  the program's session (in strict mode).
     * @param op the request's wire op.
     * @param e  the model's refusal.
     */
    static void send(final Session s, final int op, final VerbsException e)
    {
        final String text = verbOf(op, e) + "\n" + e.detail();
        s.send(Wire.OP_REFUSAL, 0, 0, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * A model refusal that is not a verbs error: the program gets EINVAL, and its stderr says why under the verb it
     * called, with the errno, as strict mode reports every refusal (never the wire's request number).
     *
     * @param s  the program's session.
     * @param op the request's wire op.
     * @param e  the model's refusal.
     * @return the errno the program gets, EINVAL.
     */
    static int modelRefusal(final Session s, final int op, final RuntimeException e)
    {
        final VerbsException v = new VerbsException(verbOf(op), EINVAL, e.getMessage(), e);
        if (s.strict)
        {
            send(s, op, v);
        }
        else
        {
            s.sendText("rnicsim: " + v.verb() + " refused with EINVAL (errno " + EINVAL + "): " + v.detail() + "\n");
        }
        return EINVAL;
    }

    /**
     * The C verb the program called: the refusal's own when it names an ibv_ verb, else the verb of the request
     * (a check shared by several verbs names itself, e.g. {@code access} for the flags of ibv_reg_mr).
     */
    static String verbOf(final int op, final VerbsException e)
    {
        if (e.verb().startsWith("ibv_"))
        {
            return e.verb();
        }
        final String verb = verbOf(op);
        return verb.startsWith("ibv_") ? verb : e.verb();
    }

    /**
     * @param op a request's wire op.
     * @return the C verb that sends it, or "a verb" for an op of none of the verbs named here.
     */
    static String verbOf(final int op)
    {
        return switch (op)
        {
            case Wire.OP_REG_MR -> "ibv_reg_mr";
            case Wire.OP_REREG_MR -> "ibv_rereg_mr";
            case Wire.OP_DEREG_MR -> "ibv_dereg_mr";
            case Wire.OP_ADVISE_MR -> "ibv_advise_mr";
            case Wire.OP_ALLOC_MW -> "ibv_alloc_mw";
            case Wire.OP_DEALLOC_MW -> "ibv_dealloc_mw";
            case Wire.OP_CREATE_QP -> "ibv_create_qp";
            case Wire.OP_MODIFY_QP -> "ibv_modify_qp";
            case Wire.OP_QUERY_QP -> "ibv_query_qp";
            case Wire.OP_DESTROY_QP -> "ibv_destroy_qp";
            case Wire.OP_CREATE_CQ -> "ibv_create_cq";
            case Wire.OP_DESTROY_CQ -> "ibv_destroy_cq";
            case Wire.OP_ALLOC_PD -> "ibv_alloc_pd";
            case Wire.OP_DEALLOC_PD -> "ibv_dealloc_pd";
            case Wire.OP_CREATE_SRQ -> "ibv_create_srq";
            case Wire.OP_MODIFY_SRQ -> "ibv_modify_srq";
            case Wire.OP_DESTROY_SRQ -> "ibv_destroy_srq";
            case Wire.OP_CREATE_AH -> "ibv_create_ah";
            case Wire.OP_DESTROY_AH -> "ibv_destroy_ah";
            case Wire.OP_RESIZE_CQ -> "ibv_resize_cq";
            default -> "a verb";
        };
    }
}
