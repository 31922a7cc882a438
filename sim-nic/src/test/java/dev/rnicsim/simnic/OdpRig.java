package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Fixture of the ODP suites: host "a" (requester) and host "b" (responder, with swap and a small 2 MiB hugetlb
 * pool), one device each, one process, PD and CQ on each side, and an RC QP pair whose requester rnr_retry and
 * responder min_rnr_timer are chosen. After an error completion {@link #reconnect()} gives a new pair. Not a test
 * class itself.
 */
final class OdpRig
{
    static final long PAGE = 4096;
    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;
    /** Rights of a writable, remotely readable and writable ODP MR. */
    static final Set<Access> ODP_RW = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.ON_DEMAND);
    /** Rights of an ODP MR the network may only read. */
    static final Set<Access> ODP_RO = EnumSet.of(Access.REMOTE_READ, Access.ON_DEMAND);
    /** Size of the requester's pinned scratch buffer. */
    static final long SCRATCH_BYTES = 64 * PAGE;

    final SimFabric fabric;
    final SimDevice deviceA;
    final SimDevice deviceB;
    final SimContext ctxA;
    final SimContext ctxB;
    final ProtectionDomain pdA;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    /** Pinned buffer on a for sources and sinks of remote operations. */
    final long scratch;
    final MemoryRegion scratchMr;
    private final int rnrRetry;
    private final int minRnrTimer;
    QueuePair qpA;
    QueuePair qpB;
    private long wrId = 1;

    private OdpRig(final DeviceProfile profile, final CostModel cost, final HostConfig configB, final int rnrRetry,
        final int minRnrTimer)
    {
        fabric = new SimFabric(cost);
        deviceA = fabric.addHost("a", HostConfig.builder().physicalMemoryBytes(256 * MIB).build())
            .addDevice("sim:a/dev0", profile);
        deviceB = fabric.addHost("b", configB).addDevice("sim:b/dev0", profile);
        ctxA = deviceA.open(deviceA.host().host().spawn("requester"));
        ctxB = deviceB.open(deviceB.host().host().spawn("responder"));
        pdA = ctxA.allocPd();
        pdB = ctxB.allocPd();
        cqA = ctxA.createCq(256);
        cqB = ctxB.createCq(256);
        this.rnrRetry = rnrRetry;
        this.minRnrTimer = minRnrTimer;
        scratch = ctxA.process().mmapAnonymous(SCRATCH_BYTES);
        scratchMr = pdA.regMr(scratch, SCRATCH_BYTES, EnumSet.of(Access.LOCAL_WRITE));
        reconnect();
    }

    /** The host configuration of b: 1 GiB, 64 MiB swap, four 2 MiB hugetlb pages, no THP. */
    static HostConfig defaultConfigB()
    {
        return HostConfig.builder().physicalMemoryBytes(GIB).swapBytes(64 * MIB).hugepages2M(4)
            .thpMode(ThpMode.NEVER).build();
    }

    static OdpRig of(final DeviceProfile profile, final int rnrRetry, final int minRnrTimer)
    {
        return new OdpRig(profile, CostModel.defaults(), defaultConfigB(), rnrRetry, minRnrTimer);
    }

    /** Two connectx5 hosts, rnr_retry 7 (unlimited), min_rnr_timer 12 (0.64 ms). */
    static OdpRig connectx5()
    {
        return of(DeviceProfiles.connectx5(), 7, 12);
    }

    static OdpRig connectx5(final int rnrRetry, final int minRnrTimer)
    {
        return of(DeviceProfiles.connectx5(), rnrRetry, minRnrTimer);
    }

    /** A new connected QP pair; the old one, if any, is destroyed. */
    void reconnect()
    {
        if (qpA != null)
        {
            qpA.close();
            qpB.close();
        }
        qpA = pdA.createQp(QpInitAttr.rc(cqA));
        qpB = pdB.createQp(QpInitAttr.rc(cqB));
        qpA.modifyToInit(RuleRig.ALL_REMOTE);
        qpA.modifyToRtr(qpB.address(), 12);
        qpA.modifyToRts(7, rnrRetry);
        qpB.modifyToInit(RuleRig.ALL_REMOTE);
        qpB.modifyToRtr(qpA.address(), minRnrTimer);
        qpB.modifyToRts(7, 7);
    }

    UserProcess processA()
    {
        return ctxA.process();
    }

    UserProcess processB()
    {
        return ctxB.process();
    }

    /** Anonymous read-write base pages in b's process; nothing is faulted in. */
    long bufferB(final long lengthBytes)
    {
        return processB().mmapAnonymous(lengthBytes);
    }

    /** Anonymous read-write memory in b's process at a fixed address (MAP_FIXED). */
    long mapFixedB(final long address, final long lengthBytes)
    {
        return processB().mmap(address, lengthBytes, Prot.READ_WRITE,
            Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.FIXED));
    }

    SimOdpMr odpB(final long addr, final long lengthBytes, final Set<Access> access)
    {
        return (SimOdpMr)pdB.regMr(addr, lengthBytes, access);
    }

    long counterA(final SimCounter c)
    {
        return deviceA.counter(c);
    }

    long counterB(final SimCounter c)
    {
        return deviceB.counter(c);
    }

    /** Posts one work request on a and returns its only completion. */
    WorkCompletion post(final SendWr wr)
    {
        qpA.postSend(wr);
        final List<WorkCompletion> wcs = cqA.poll(256);
        assertThat(wcs).as("completions of %s", wr).hasSize(1);
        return wcs.get(0);
    }

    long nextWrId()
    {
        return wrId++;
    }

    /** RDMA WRITE of {@code data} (staged in the scratch buffer) to {@code remoteAddr} with {@code rkey}. */
    WorkCompletion write(final byte[] data, final long remoteAddr, final int rkey)
    {
        processA().write(scratch, data);
        return post(SendWr.write(nextWrId(), List.of(new Sge(scratch, data.length, scratchMr.lkey())), remoteAddr,
            rkey));
    }

    /** RDMA READ of {@code length} bytes from {@code remoteAddr} into the scratch buffer. */
    WorkCompletion read(final long remoteAddr, final int length, final int rkey)
    {
        return post(SendWr.read(nextWrId(), List.of(new Sge(scratch, length, scratchMr.lkey())), remoteAddr, rkey));
    }

    /** What the last READ left in the scratch buffer. */
    byte[] scratchBytes(final int length)
    {
        return processA().read(scratch, length);
    }

    /** Bytes 1, 2, 3, ... (mod 251, never 0) shifted by seed. */
    static byte[] pattern(final int lengthBytes, final int seed)
    {
        return RuleRig.pattern(lengthBytes, seed);
    }
}
