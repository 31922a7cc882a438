package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WorkCompletion;

/**
 * The strict-mode report of a failed completion, as the program's stderr shows it: the status, the request, and the
 * simulated device's diagnosis (which check failed, the key's index and what it holds now, its history with the C
 * call sites of the verbs that changed it, and how to fix it).
 *
 * <p>Thread safety: stateless.
 */
final class Strict
{
    private Strict()
    {
    }

    /**
     * @param wc      the failed completion, from the model.
     * @param wrId    the program's wr_id.
     * @param qp      the QP it completed on.
     * @param deviceWrId the wr_id the device knew the request by (the server's numbering), replaced in the text
     *                by the program's.
     * @return the report, one line and then indented detail lines, ending in a newline.
     */
    static String describe(final WorkCompletion wc, final long wrId, final Session.QpInfo qp,
        final long deviceWrId)
    {
        final StringBuilder t = new StringBuilder();
        t.append(String.format("rnicsim strict: wr_id %d on QP 0x%x completed with %s (process %d)%n", wrId,
            qp.qp.qpNum(), wc.status().cName(), qp.session.pid));
        final WcDiagnosis d = wc.diagnosis();
        if (d != null)
        {
            t.append("  ").append(d.summary().replace("wr_id " + deviceWrId + " ", "wr_id " + wrId + " "))
                .append(System.lineSeparator());
            for (final String line : d.details())
            {
                t.append("  ").append(line).append(System.lineSeparator());
            }
        }
        return t.toString();
    }
}
