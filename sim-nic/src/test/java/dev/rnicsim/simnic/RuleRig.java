package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Test fixture of the Rule* and Lifecycle* suites: two simulated hosts "a" (requester) and "b" (responder), one
 * device each, one process, PD, CQ and RC QP on each side. Not a test class itself.
 */
final class RuleRig
{
    /** Every remote right a responder QP can grant. */
    static final Set<Access> ALL_REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    /** Rights of a local buffer that receives data. */
    static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);
    /** Rights of a target buffer for WRITE, READ and atomics. */
    static final Set<Access> REMOTE_ALL = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    final SimFabric fabric;
    final SimDevice deviceA;
    final SimDevice deviceB;
    final SimContext ctxA;
    final SimContext ctxB;
    final ProtectionDomain pdA;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final QueuePair qpA;
    final QueuePair qpB;

    private RuleRig(final DeviceProfile profileA, final DeviceProfile profileB)
    {
        fabric = new SimFabric();
        deviceA = fabric.addHost("a").addDevice("sim:a/dev0", profileA);
        deviceB = fabric.addHost("b").addDevice("sim:b/dev0", profileB);
        ctxA = deviceA.open(deviceA.host().host().spawn("requester"));
        ctxB = deviceB.open(deviceB.host().host().spawn("responder"));
        pdA = ctxA.allocPd();
        pdB = ctxB.allocPd();
        cqA = ctxA.createCq(64);
        cqB = ctxB.createCq(64);
        // A driver without RC QPs (EFA) gets none here; its tests create the QPs of its types.
        final boolean rc = profileA.traits().acceptsQpType(dev.rnicsim.verbs.QpType.RC);
        qpA = rc ? pdA.createQp(QpInitAttr.rc(cqA)) : null;
        qpB = rc ? pdB.createQp(QpInitAttr.rc(cqB)) : null;
    }

    /**
     * @param profile       both devices' profile.
     * @param responderRights qp_access_flags of the responder QP b.
     * @return a rig whose QPs are connected (RTS, infinite RNR retry); a grants every remote right.
     */
    static RuleRig connected(final DeviceProfile profile, final Set<Access> responderRights)
    {
        final RuleRig rig = new RuleRig(profile, profile);
        rig.qpA.connect(rig.qpB.address(), ALL_REMOTE);
        rig.qpB.connect(rig.qpA.address(), responderRights);
        return rig;
    }

    /**
     * @return two connectx5 hosts, connected, the responder granting every remote right.
     */
    static RuleRig connected()
    {
        return connected(DeviceProfiles.connectx5(), ALL_REMOTE);
    }

    /**
     * @param profile both devices' profile.
     * @return a rig whose QPs are still in RESET.
     */
    static RuleRig unconnected(final DeviceProfile profile)
    {
        return new RuleRig(profile, profile);
    }

    /**
     * @param profileA the requester host's device.
     * @param profileB the responder host's device.
     * @return a rig of two different devices whose QPs are still in RESET.
     */
    static RuleRig unconnectedPair(final DeviceProfile profileA, final DeviceProfile profileB)
    {
        return new RuleRig(profileA, profileB);
    }

    UserProcess processA()
    {
        return ctxA.process();
    }

    UserProcess processB()
    {
        return ctxB.process();
    }

    /** Maps base pages in the requester's process. */
    long bufferA(final long lengthBytes)
    {
        return ctxA.memory().allocate(lengthBytes, Backing.BASE_PAGES);
    }

    /** Maps base pages in the responder's process. */
    long bufferB(final long lengthBytes)
    {
        return ctxB.memory().allocate(lengthBytes, Backing.BASE_PAGES);
    }

    List<WorkCompletion> pollA()
    {
        return cqA.poll(64);
    }

    List<WorkCompletion> pollB()
    {
        return cqB.poll(64);
    }

    static List<Sge> sgl(final Sge... sges)
    {
        return List.of(sges);
    }

    static Sge sge(final MemoryRegion mr, final long addr, final long lengthBytes)
    {
        return new Sge(addr, lengthBytes, mr.lkey());
    }

    /** Bytes 1, 2, 3, ... (mod 251, never 0) so that a shifted or truncated copy shows. */
    static byte[] pattern(final int lengthBytes, final int seed)
    {
        final byte[] b = new byte[lengthBytes];
        for (int i = 0; i < lengthBytes; i++)
        {
            b[i] = (byte)(1 + (i + seed) % 251);
        }
        return b;
    }

    /**
     * A single host with RAM for large and huge-page buffers.
     *
     * @param ramBytes physical memory.
     * @param hugepages2M 2 MiB pages reserved.
     * @param hugepages1G 1 GiB pages reserved.
     * @return the host's configuration.
     */
    static HostConfig host(final long ramBytes, final long hugepages2M, final long hugepages1G)
    {
        return HostConfig.builder().physicalMemoryBytes(ramBytes).hugepages2M(hugepages2M).hugepages1G(hugepages1G)
            .build();
    }
}
