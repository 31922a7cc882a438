package dev.rnicsim.simnic;

import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;

/**
 * The local operations of a send queue (BIND_MW, LOCAL_INV, REG_MR): run by the requester on its own device, no
 * packet leaves the NIC ({@link LocalOps} holds their rules).
 */
final class LocalWqe
{
    private LocalWqe()
    {
    }

    /**
     * Executes BIND_MW, LOCAL_INV or REG_MR on this QP's device; a failure completes it in error. The key events it
     * records (and strict mode's warnings) name the line that posted it, not the one that runs the engine now.
     *
     * @param qp   the QP whose send queue holds it.
     * @param wr   the work request.
     * @param site the script line or call site that posted it, or null.
     * @return DONE, or ERROR after completing it in error.
     */
    static WqeOutcome execute(final SimQp qp, final SendWr wr, final String site)
    {
        final SimDevice device = qp.device;
        qp.localFailure = null;
        final String now = device.fabric().origin();
        device.fabric().origin(site != null ? site : now);
        final WcStatus status;
        try
        {
            status = switch (wr.opcode())
            {
                case BIND_MW -> LocalOps.bind(qp, (SendWr.Bind)wr.localOp());
                case REG_MR -> LocalOps.fastRegister(qp, (SendWr.Reg)wr.localOp());
                default -> LocalOps.invalidate(qp, wr.invalidateRkey()) ? WcStatus.SUCCESS : WcStatus.LOC_QP_OP_ERR;
            };
        }
        finally
        {
            device.fabric().origin(now);
        }
        // The span's arguments are built only for a trace listener (the clock advances either way).
        final boolean tracing = device.fabric().tracing();
        final java.util.Map<String, Object> args = tracing ? new java.util.LinkedHashMap<>() : java.util.Map.of();
        if (tracing)
        {
            args.put("qp_num", qp.num);
            args.put("status", status.cName());
            if (qp.localFailure != null)
            {
                args.put("why", qp.localFailure.toString());
            }
        }
        device.fabric().span(device, wr.opcode().name(), "dma", device.fabric().costModel().opBaseLatencyNs(),
            args);
        if (status != WcStatus.SUCCESS)
        {
            qp.completions.completeSend(wr, status, 0, Diagnoser.local(qp, wr, status, qp.localFailure));
            return WqeOutcome.ERROR;
        }
        if (qp.sqSigAll || wr.flags().contains(SendFlag.SIGNALED))
        {
            qp.completions.completeSend(wr, WcStatus.SUCCESS, 0);
        }
        return WqeOutcome.DONE;
    }
}
