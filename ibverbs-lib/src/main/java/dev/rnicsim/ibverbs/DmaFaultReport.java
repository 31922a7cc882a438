package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.AddressRangeText;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;
import java.util.Locale;

/**
 * The words of strict mode's report of DMA into memory no longer mapped: a program unmapped (munmap, free) a buffer
 * it had registered and a work request then reached it. The pages stay pinned for the NIC until ibv_dereg_mr
 * (ib_umem_get pinned them with FOLL_LONGTERM), so on a real stack the DMA lands in pages the program no longer
 * sees and the request completes successfully; the report names the request and where it was posted, the range,
 * the MR over it with its keys and where it was registered, and the fix.
 *
 * <p>Stateless; runs on the failure path only.
 */
final class DmaFaultReport
{
    private static final int EFAULT = 14;

    private DmaFaultReport()
    {
    }

    /**
     * @param server the fabric server (its MRs).
     * @param q      the QP whose process owns the memory.
     * @param what   what the device could not do, e.g. {@code write the target of an RDMA WRITE}.
     * @param at     the ranges of the process it could not reach (translated to the process's addresses).
     * @param ps     the request, or null when the report has no request of its own.
     * @param errno  the errno of the process-memory access.
     * @return the report, one line, without a line break.
     */
    static String text(final FabricServer server, final Session.QpInfo q, final String what,
        final List<ProcessMemory.Range> at, final Completions.PostedSend ps, final int errno)
    {
        final StringBuilder t = new StringBuilder("rnicsim strict: ");
        if (ps != null)
        {
            t.append(opcodeName(ps.opcode())).append(" wr_id ").append(Long.toUnsignedString(ps.wrId())).append(" on QP 0x")
                .append(Integer.toHexString(ps.qp().qp.qpNum()));
            if (ps.postSite() != null)
            {
                t.append(" (posted by ").append(ps.postSite()).append(')');
            }
            t.append(": ");
        }
        t.append("the device could not ").append(what);
        final ProcessMemory.Range first = at.stream().filter(r -> r.lengthBytes() > 0).findFirst().orElse(null);
        if (first != null)
        {
            t.append(' ').append(AddressRangeText.of(first.addr(), first.lengthBytes()));
        }
        t.append(" in process ").append(q.session.pid);
        final Session.MrInfo mr = first == null ? null : covering(server, q.session, first);
        if (mr != null)
        {
            t.append(String.format(Locale.ROOT, ", under the MR of %d bytes at 0x%x (lkey 0x%08x, rkey 0x%08x) "
                + "registered by %s", mr.lengthBytes(), mr.addr(), mr.mr().lkey(), mr.mr().rkey(),
                mr.regSite() == null || mr.regSite().isEmpty() ? "ibv_reg_mr" : mr.regSite()));
        }
        t.append(" (errno ").append(errno).append(errno == EFAULT ? ", EFAULT: no mapping there now" : "")
            .append("): the range was unmapped after it was registered; the pages stay pinned for the NIC, but the "
                + "program no longer sees them (DMA into memory no longer mapped); fix: keep a registered buffer "
                + "mapped until ibv_dereg_mr has returned (deregister, then munmap or free), or register it with "
                + "IBV_ACCESS_ON_DEMAND if its mapping must change");
        return t.toString();
    }

    /** The MR of the session whose range holds the start of {@code r}, or null. */
    private static Session.MrInfo covering(final FabricServer server, final Session session,
        final ProcessMemory.Range r)
    {
        for (final Session.MrInfo m : server.mrs.values())
        {
            if (m.session() == session && Long.compareUnsigned(r.addr() - m.addr(), m.lengthBytes()) < 0)
            {
                return m;
            }
        }
        return null;
    }

    /** The name of an {@code enum ibv_wr_opcode} number, e.g. {@code RDMA_WRITE}. */
    private static String opcodeName(final int code)
    {
        for (final WrOpcode o : WrOpcode.values())
        {
            if (o.code() == code)
            {
                return o.name();
            }
        }
        return "opcode " + code;
    }
}
