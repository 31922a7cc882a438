package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Strict mode's STALE_MAPPING after a fork on a kernel that shares pinned pages (before Linux 5.9): the parent's
 * first write after the fork gives it a copy, the MR keeps the frame the child now maps, and the warning names that
 * copy-on-write and ibv_fork_init (ibv_fork_init(3)) instead of a munmap; a munmap and mmap again is still named as
 * such.
 */
class StrictCowAfterForkTest
{
    private static final long PAGE = 4096;
    private static final byte[] BEFORE = "before the fork".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] AFTER = "after the fork!".getBytes(StandardCharsets.US_ASCII);

    /** a reads from b over RC; b's host forks the legacy way. */
    private record Rig(QueuePair qpA, CompletionQueue cqA, MemoryRegion sink, SimContext ctxB, ProtectionDomain pdB,
                       StrictChecker strict)
    {
        static Rig legacyResponder()
        {
            final SimFabric fabric = new SimFabric();
            final SimDevice a = fabric.addHost("a").addDevice("sim:a/dev0", DeviceProfiles.connectx5());
            final SimDevice b = fabric.addHost("b", HostConfig.builder().physicalMemoryBytes(256L << 20)
                .forkBehaviour(ForkBehaviour.LEGACY).build()).addDevice("sim:b/dev0", DeviceProfiles.connectx5());
            final SimContext ctxA = a.open(a.host().host().spawn("requester"));
            final SimContext ctxB = b.open(b.host().host().spawn("responder"));
            final ProtectionDomain pdA = ctxA.allocPd();
            final ProtectionDomain pdB = ctxB.allocPd();
            final CompletionQueue cqA = ctxA.createCq(16);
            final QueuePair qpA = pdA.createQp(QpInitAttr.rc(cqA));
            final QueuePair qpB = pdB.createQp(QpInitAttr.rc(ctxB.createCq(16)));
            qpA.connect(qpB.address(), EnumSet.of(Access.REMOTE_READ));
            qpB.connect(qpA.address(), EnumSet.of(Access.REMOTE_READ));
            final long sinkVa = ctxA.memory().allocate(PAGE, Backing.BASE_PAGES);
            final MemoryRegion sink = pdA.regMr(sinkVa, PAGE, EnumSet.of(Access.LOCAL_WRITE));
            final StrictChecker strict = new StrictChecker(false).attach(a).attach(b);
            return new Rig(qpA, cqA, sink, ctxB, pdB, strict);
        }

        WcStatus read(final MemoryRegion source)
        {
            qpA.postSend(SendWr.read(1, List.of(new Sge(sink.addr(), BEFORE.length, sink.lkey())), source.addr(),
                source.rkey()));
            final List<WorkCompletion> wcs = cqA.poll(4);
            assertThat(wcs).hasSize(1);
            return wcs.get(0).status();
        }

        List<String> staleMappings()
        {
            return strict.warnings().stream().filter(w -> w.kind() == StrictWarning.Kind.STALE_MAPPING)
                .map(StrictWarning::message).toList();
        }
    }

    @Test
    void theParentsWriteAfterAForkIsNamedACopyOnWriteWithIbvForkInitAsTheFix()
    {
        final Rig rig = Rig.legacyResponder();
        final UserProcess parent = rig.ctxB().process();
        final long buf = rig.ctxB().memory().allocate(4 * PAGE, Backing.BASE_PAGES);
        parent.write(buf, BEFORE);
        final MemoryRegion mr = rig.pdB().regMr(buf, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        final UserProcess child = parent.fork("child");
        parent.write(buf, AFTER);

        assertThat(rig.read(mr)).isEqualTo(WcStatus.SUCCESS);

        assertThat(rig.staleMappings()).hasSize(1);
        assertThat(rig.staleMappings().get(0)).contains("a copy-on-write after fork")
            .contains("forking process " + child.pid()).contains("call ibv_fork_init() or set RDMAV_FORK_SAFE=1")
            .doesNotContain("munmap");
    }

    @Test
    void aMunmapAndMmapAgainIsStillNamedAsSuch()
    {
        final Rig rig = Rig.legacyResponder();
        final UserProcess process = rig.ctxB().process();
        final long buf = rig.ctxB().memory().allocate(4 * PAGE, Backing.BASE_PAGES);
        final MemoryRegion mr = rig.pdB().regMr(buf, 4 * PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        process.munmap(buf, 4 * PAGE);
        process.mmap(buf, 4 * PAGE, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.FIXED));
        process.write(buf, AFTER);

        assertThat(rig.read(mr)).isEqualTo(WcStatus.SUCCESS);

        assertThat(rig.staleMappings()).hasSize(1);
        assertThat(rig.staleMappings().get(0)).contains("the MR outlived its memory (munmap and mmap again")
            .doesNotContain("ibv_fork_init");
    }
}
