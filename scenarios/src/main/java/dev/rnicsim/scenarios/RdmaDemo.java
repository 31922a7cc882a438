package dev.rnicsim.scenarios;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;

/**
 * The built-in RDMA demo: two simulated hosts with a ConnectX-5 each, connected by an RC QP pair. It registers
 * buffers (showing page size, MTT entries and the simulated cost of each registration), moves bytes with RDMA WRITE
 * and READ from an SGL of one pool MR, shows the S9 flag rule and the memlock limit refusing registrations, and a
 * stale rkey after deregistration failing with IBV_WC_REM_ACCESS_ERR while the target bytes stay unchanged.
 *
 * <p>Every number printed comes out of the model. Not thread safe.
 */
public final class RdmaDemo
{
    private static final long MIB = 1L << 20;

    private RdmaDemo()
    {
    }

    /**
     * Runs the demo.
     *
     * @param out where to print.
     * @return the fabric at the end, for inspection.
     */
    public static SimFabric run(final PrintStream out)
    {
        final SimFabric fabric = new SimFabric();
        final SimHost hostA = fabric.addHost("alpha", HostConfig.builder().physicalMemoryBytes(8L << 30)
            .hugepages2M(64).build());
        final SimHost hostB = fabric.addHost("beta", HostConfig.builder().physicalMemoryBytes(8L << 30).build());
        final SimDevice nicA = hostA.addDevice("sim:alpha/mlx5_0", DeviceProfiles.connectx5());
        final SimDevice nicB = hostB.addDevice("sim:beta/mlx5_0", DeviceProfiles.connectx5());
        out.println("# rnic-sim RDMA demo: hosts alpha and beta, a ConnectX-5 profile in each, RC QP pair");
        try (Context a = nicA.open(); Context b = nicB.open())
        {
            final ProtectionDomain pdA = a.allocPd();
            final ProtectionDomain pdB = b.allocPd();
            final CompletionQueue cqA = a.createCq(64);
            final CompletionQueue cqB = b.createCq(64);
            final QueuePair qpA = pdA.createQp(QpInitAttr.rc(cqA));
            final QueuePair qpB = pdB.createQp(QpInitAttr.rc(cqB));
            qpA.connect(qpB.address(), EnumSet.noneOf(Access.class));
            qpB.connect(qpA.address(), EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
            out.println("  QP 0x" + Integer.toHexString(qpA.qpNum()) + " on alpha <-> QP 0x"
                + Integer.toHexString(qpB.qpNum()) + " on beta, both " + qpA.state());
            out.println();

            out.println("## ibv_reg_mr: pin, choose the page size, write MTT entries (simulated cost from the model)");
            final long pool = a.memory().allocate(MIB, Backing.BASE_PAGES);
            final MemoryRegion poolMr = pdA.regMr(pool, MIB, EnumSet.of(Access.LOCAL_WRITE));
            describe(out, nicA, "alpha: 1 MiB pool on 4 KiB base pages", poolMr);
            if (((SimMr)poolMr).pageSizeBytes() > 4096)
            {
                out.println("    (MR pages larger than the CPU's: neighbouring frames that agree with the virtual"
                    + " addresses in their low bits let ib_umem_find_best_pgsz pick a larger page)");
            }
            final long huge = a.memory().allocate(4 * MIB, Backing.HUGETLB_2M);
            final MemoryRegion hugeMr = pdA.regMr(huge, 4 * MIB, EnumSet.of(Access.LOCAL_WRITE));
            describe(out, nicA, "alpha: 4 MiB on hugetlbfs 2 MiB pages", hugeMr);
            final long target = b.memory().allocate(MIB, Backing.BASE_PAGES);
            final MemoryRegion targetMr = pdB.regMr(target, MIB, EnumSet.of(Access.LOCAL_WRITE,
                Access.REMOTE_WRITE, Access.REMOTE_READ));
            describe(out, nicB, "beta: 1 MiB target with REMOTE_WRITE|REMOTE_READ", targetMr);
            out.println();

            out.println("## RDMA WRITE of an SGL of three fragments of one pool MR"
                + " (one registration serves many buffers)");
            a.memory().write(pool, "[header]".getBytes(StandardCharsets.UTF_8));
            a.memory().write(pool + 4096, "[payload]".getBytes(StandardCharsets.UTF_8));
            a.memory().write(pool + 65536, "[trailer]".getBytes(StandardCharsets.UTF_8));
            final List<Sge> sgl = List.of(new Sge(pool, 8, poolMr.lkey()), new Sge(pool + 4096, 9, poolMr.lkey()),
                new Sge(pool + 65536, 9, poolMr.lkey()));
            qpA.postSend(SendWr.write(1, sgl, target + 128, targetMr.rkey()));
            completions(out, cqA);
            out.println("  beta's memory at target+128: \""
                + new String(b.memory().read(target + 128, 26), StandardCharsets.UTF_8) + "\"");
            qpA.postSend(SendWr.read(2, List.of(new Sge(huge, 26, hugeMr.lkey())), target + 128, targetMr.rkey()));
            completions(out, cqA);
            out.println("  RDMA READ back into alpha's huge-page MR: \""
                + new String(a.memory().read(huge, 26), StandardCharsets.UTF_8) + "\"");
            out.println();

            out.println("## Registration rules");
            try
            {
                pdB.regMr(target, 4096, EnumSet.of(Access.REMOTE_WRITE));
            }
            catch (final VerbsException e)
            {
                out.println("  REMOTE_WRITE without LOCAL_WRITE: " + e.getMessage());
            }
            final long big = b.memory().allocate(16 * MIB, Backing.BASE_PAGES);
            try
            {
                pdB.regMr(big, 16 * MIB, EnumSet.of(Access.LOCAL_WRITE));
            }
            catch (final VerbsException e)
            {
                out.println("  16 MiB with the default RLIMIT_MEMLOCK of 8 MiB: " + e.getMessage());
            }
            out.println("  beta pinned after the refusals: " + nicB.counter(SimCounter.PINNED_BYTES)
                + " bytes (MR and queue rings), MRs live: " + nicB.counter(SimCounter.MR_LIVE));
            out.println();

            out.println("## A stale rkey after ibv_dereg_mr");
            final int staleRkey = targetMr.rkey();
            targetMr.close();
            qpA.postSend(SendWr.write(3, sgl, target + 128, staleRkey));
            completions(out, cqA);
            out.println("  beta's memory at target+128 is unchanged: \""
                + new String(b.memory().read(target + 128, 26), StandardCharsets.UTF_8) + "\"");
            out.println("  QP states after the NAK: alpha " + qpA.state() + ", beta " + qpB.state());
            out.println();

            out.println("## Counters (sysfs port counters, hw_counters, MR statistics)");
            printCounters(out, "alpha", nicA);
            printCounters(out, "beta", nicB);
            out.println("  simulated time: " + fabric.clock().nowNs() + " ns");
        }
        out.println("  after closing both contexts: pinned bytes alpha=" + nicA.counter(SimCounter.PINNED_BYTES)
            + " beta=" + nicB.counter(SimCounter.PINNED_BYTES) + ", MTT entries in use alpha="
            + nicA.counter(SimCounter.MTT_ENTRIES_IN_USE));
        return fabric;
    }

    private static void describe(final PrintStream out, final SimDevice nic, final String what,
        final MemoryRegion mr)
    {
        final SimMr sim = (SimMr)mr;
        final List<RegistrationEvent> trace = nic.recentRegistrations();
        final RegistrationEvent reg = trace.get(trace.size() - 1);
        out.printf("  %-48s lkey=0x%08x rkey=0x%08x page size %d kB, %d MTT entries, %d pages pinned, %.1f us%n",
            what, mr.lkey(), mr.rkey(), sim.pageSizeBytes() >> 10, sim.mttEntries(), sim.pinnedPages(),
            reg.durationNs() / 1000.0);
    }

    private static void completions(final PrintStream out, final CompletionQueue cq)
    {
        for (final WorkCompletion wc : cq.poll(16))
        {
            out.println("  completion wr_id=" + wc.wrId() + " " + wc.status().cName() + " opcode=" + wc.opcode()
                + (wc.ok() ? " byte_len=" + wc.byteLen() : ""));
        }
    }

    private static void printCounters(final PrintStream out, final String name, final SimDevice nic)
    {
        final StringBuilder sb = new StringBuilder("  " + name + ":");
        nic.counters().forEach((k, v) ->
        {
            if (v != 0)
            {
                sb.append(' ').append(k).append('=').append(v);
            }
        });
        out.println(sb);
    }
}
