package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.SegmentationFault;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Fork support as libibverbs gives it (rdma-core libibverbs/memory.c {@code ibv_fork_init},
 * {@code ibv_madvise_range}; init.c {@code ibverbs_init}; verbs.c {@code ibv_reg_mr}, {@code ibv_rereg_mr},
 * {@code ibv_dereg_mr}; ibv_fork_init(3), ibv_is_fork_initialized(3)) over the kernel's madvise and fork
 * (mm/madvise.c, kernel/fork.c {@code dup_mmap}), one rule per test.
 */
class ForkSafetyTest
{
    private static final long PAGE = 4096;
    private static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);

    private final SimFabric fabric = new SimFabric();

    /** A host, one device, one process with {@code env} set before its first device open. */
    private SimContext open(final HostConfig config, final String... env)
    {
        final SimHost host = fabric.addHost("h" + fabric.hosts().size(), config);
        final SimDevice device = host.addDevice("sim:" + host.name() + "/dev0", DeviceProfiles.connectx5());
        final UserProcess p = host.host().spawn("app");
        p.rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        for (int i = 0; i < env.length; i += 2)
        {
            p.setenv(env[i], env[i + 1]);
        }
        return device.open(p);
    }

    private static HostConfig legacy()
    {
        return HostConfig.builder().forkBehaviour(ForkBehaviour.LEGACY).build();
    }

    private static ForkSafety fork(final SimContext c)
    {
        return c.device().host().forkSafety(c.process());
    }

    private static boolean dontcopy(final UserProcess p, final long va)
    {
        return p.vmaAt(va).has(Vma.VM_DONTCOPY);
    }

    @Test
    void rdmavForkSafeInTheEnvironmentTurnsForkSupportOnAtTheFirstDeviceOpen()
    {
        // init.c ibverbs_init: check_env("RDMAV_FORK_SAFE") || check_env("IBV_FORK_SAFE") -> ibv_fork_init().
        assertThat(fork(open(legacy(), "RDMAV_FORK_SAFE", "1")).status()).isEqualTo(ForkSafety.ForkStatus.ENABLED);
        assertThat(fork(open(legacy(), "IBV_FORK_SAFE", "yes")).status()).isEqualTo(ForkSafety.ForkStatus.ENABLED);
        // check_env: set to "0" means off.
        assertThat(fork(open(legacy(), "RDMAV_FORK_SAFE", "0")).status()).isEqualTo(ForkSafety.ForkStatus.DISABLED);
        assertThat(fork(open(legacy())).status()).isEqualTo(ForkSafety.ForkStatus.DISABLED);
    }

    @Test
    void aKernelThatCopiesPinnedPagesAtForkAnswersUnneededAndNothingIsMadvised()
    {
        // ibv_is_fork_initialized(3): UNNEEDED takes precedence; ibv_fork_init returns 0 and sets nothing up.
        final SimContext c = open(HostConfig.builder().forkBehaviour(ForkBehaviour.MODERN).build(),
            "RDMAV_FORK_SAFE", "1");
        assertThat(fork(c).forkInit()).isZero();
        assertThat(fork(c).status()).isEqualTo(ForkSafety.ForkStatus.UNNEEDED);
        final long buf = c.process().mmapAnonymous(4 * PAGE);
        final int vmasBefore = c.process().vmaCount();
        c.allocPd().regMr(buf + PAGE, PAGE, LOCAL);
        assertThat(c.process().vmaCount()).isEqualTo(vmasBefore);
        assertThat(fork(c).dontforkCalls()).isZero();
    }

    @Test
    void rdmavUseMadviseMadvisesEvenWhereTheKernelCopiesPinnedPages()
    {
        // memory.c ibv_fork_init: the UNNEEDED shortcut is skipped when RDMAV_USE_MADVISE is set.
        final SimContext c = open(HostConfig.builder().forkBehaviour(ForkBehaviour.MODERN).build(),
            "RDMAV_FORK_SAFE", "1", "RDMAV_USE_MADVISE", "1");
        assertThat(fork(c).enabled()).isTrue();
        assertThat(fork(c).status()).isEqualTo(ForkSafety.ForkStatus.UNNEEDED);
        final long buf = c.process().mmapAnonymous(4 * PAGE);
        c.allocPd().regMr(buf + PAGE, PAGE, LOCAL);
        assertThat(dontcopy(c.process(), buf + PAGE)).isTrue();
    }

    @Test
    void forkInitAfterARegistrationIsEinvalTooLate()
    {
        // memory.c: ibv_dontfork_range without mm_root sets too_late; ibv_fork_init then returns EINVAL.
        final SimContext c = open(legacy());
        final long buf = c.process().mmapAnonymous(4 * PAGE);
        c.allocPd().regMr(buf, PAGE, LOCAL);
        assertThat(fork(c).forkInit()).isEqualTo(Errno.EINVAL.code());
        assertThat(fork(c).status()).isEqualTo(ForkSafety.ForkStatus.DISABLED);
    }

    @Test
    void forkInitBeforeAnyRegistrationSucceedsAndIsIdempotent()
    {
        final SimContext c = open(legacy());
        assertThat(fork(c).forkInit()).isZero();
        assertThat(fork(c).forkInit()).isZero();
        assertThat(fork(c).status()).isEqualTo(ForkSafety.ForkStatus.ENABLED);
    }

    @Test
    void registrationMadvisesItsPageAlignedRangeDontforkAndDeregistrationGivesItBack()
    {
        // verbs.c ibv_reg_mr: ibv_dontfork_range(addr, length) rounded to whole pages; ibv_dereg_mr: ibv_dofork_range.
        final SimContext c = open(legacy(), "RDMAV_FORK_SAFE", "1");
        final UserProcess p = c.process();
        final long buf = p.mmapAnonymous(4 * PAGE);
        final int vmasBefore = p.vmaCount();
        final MemoryRegion mr = c.allocPd().regMr(buf + PAGE + 100, 200, LOCAL);
        assertThat(p.vmaCount()).as("the DONTFORK page splits its VMA in three").isEqualTo(vmasBefore + 2);
        assertThat(dontcopy(p, buf + PAGE)).isTrue();
        assertThat(p.vmaAt(buf + PAGE).lengthBytes()).isEqualTo(PAGE);
        assertThat(dontcopy(p, buf)).isFalse();
        mr.close();
        assertThat(p.vmaCount()).as("MADV_DOFORK merges the VMAs again").isEqualTo(vmasBefore);
        assertThat(dontcopy(p, buf + PAGE)).isFalse();
    }

    @Test
    void overlappingRegistrationsKeepTheSharedPagesDontforkUntilTheLastGoes()
    {
        // memory.c ibv_madvise_range: a reference count per range; DOFORK only where it falls from 1 to 0.
        final SimContext c = open(legacy(), "RDMAV_FORK_SAFE", "1");
        final UserProcess p = c.process();
        final long buf = p.mmapAnonymous(8 * PAGE);
        final ProtectionDomain pd = c.allocPd();
        final MemoryRegion first = pd.regMr(buf, 2 * PAGE, LOCAL);
        final MemoryRegion second = pd.regMr(buf + PAGE, 2 * PAGE, LOCAL);
        assertThat(fork(c).referenceCount(buf + PAGE)).isEqualTo(2);
        assertThat(fork(c).dontforkCalls()).as("the shared page is madvised once").isEqualTo(2);
        first.close();
        assertThat(dontcopy(p, buf)).isFalse();
        assertThat(dontcopy(p, buf + PAGE)).as("still held by the second MR").isTrue();
        assertThat(dontcopy(p, buf + 2 * PAGE)).isTrue();
        second.close();
        assertThat(fork(c).dontforkBytes()).isZero();
        assertThat(p.vmaCount()).isEqualTo(1);
    }

    @Test
    void registrationsThatSplitPastMaxMapCountFailWithEagainAndLeaveNothingBehind()
    {
        // mm/madvise.c: a VMA split past vm.max_map_count is ENOMEM, which madvise_vma_behavior reports as EAGAIN;
        // ibv_reg_mr returns NULL with that errno.
        final SimContext c = open(HostConfig.builder().forkBehaviour(ForkBehaviour.LEGACY).maxMapCount(8).build(),
            "RDMAV_FORK_SAFE", "1");
        final UserProcess p = c.process();
        final ProtectionDomain pd = c.allocPd();
        final long buf = p.mmapAnonymous(64 * PAGE);
        int registered = 0;
        VerbsException refused = null;
        for (int i = 0; i < 32 && refused == null; i++)
        {
            final long pagesBefore = p.pinnedVmPages();
            final int vmasBefore = p.vmaCount();
            try
            {
                pd.regMr(buf + (2L * i + 1) * PAGE, PAGE, LOCAL);
                registered++;
            }
            catch (final VerbsException e)
            {
                refused = e;
                assertThat(p.vmaCount()).isEqualTo(vmasBefore);
                assertThat(p.pinnedVmPages()).isEqualTo(pagesBefore);
                assertThat(fork(c).referenceCount(buf + (2L * i + 1) * PAGE)).isZero();
            }
        }
        assertThat(refused).isNotNull();
        assertThat(refused.errno()).isEqualTo(Errno.EAGAIN.code());
        assertThat(refused.verb()).isEqualTo("ibv_reg_mr");
        assertThat(refused.getMessage()).contains("vm.max_map_count").contains("MADV_DONTFORK");
        assertThat(registered).as("free memory is plenty; the VMA count ran out").isBetween(1, 8);
        assertThat(((SimPd)pd).memoryRegions()).hasSize(registered);
    }

    @Test
    void withoutForkSupportTheSameRegistrationsFitInOneVma()
    {
        final SimContext c = open(HostConfig.builder().forkBehaviour(ForkBehaviour.LEGACY).maxMapCount(8).build());
        final ProtectionDomain pd = c.allocPd();
        final long buf = c.process().mmapAnonymous(64 * PAGE);
        for (int i = 0; i < 32; i++)
        {
            pd.regMr(buf + (2L * i + 1) * PAGE, PAGE, LOCAL);
        }
        assertThat(c.process().vmaCount()).isEqualTo(1);
    }

    @Test
    void aRangeCuttingAHugetlbPageIsEinvalUnlessHugepagesSafeWidensIt()
    {
        // memory.c: range_page_size is sysconf(_SC_PAGESIZE) unless RDMAV_HUGEPAGES_SAFE (then the VMA's
        // KernelPageSize); mm/hugetlb.c hugetlb_vm_op_split refuses a split inside a huge page with EINVAL.
        final HostConfig config = HostConfig.builder().forkBehaviour(ForkBehaviour.LEGACY).hugepages2M(4).build();
        final SimContext unsafe = open(config, "RDMAV_FORK_SAFE", "1");
        final long huge = unsafe.process().mmap(0, 2L << 20, Prot.READ_WRITE,
            Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB));
        final Throwable t = catchThrowable(() -> unsafe.allocPd().regMr(huge + PAGE, PAGE, LOCAL));
        assertThat(t).isInstanceOf(VerbsException.class);
        assertThat(((VerbsException)t).errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(t.getMessage()).contains("RDMAV_HUGEPAGES_SAFE");
        assertThat(unsafe.process().pinnedVmPages()).isZero();

        final SimContext safe = open(config, "RDMAV_FORK_SAFE", "1", "RDMAV_HUGEPAGES_SAFE", "1");
        final long huge2 = safe.process().mmap(0, 2L << 20, Prot.READ_WRITE,
            Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB));
        safe.allocPd().regMr(huge2 + PAGE, PAGE, LOCAL);
        assertThat(dontcopy(safe.process(), huge2)).isTrue();
        assertThat(fork(safe).dontforkBytes()).isEqualTo(2L << 20);
    }

    @Test
    void aChildFaultsOnEveryByteOfAPartlyRegisteredPageAndSharesTheRest()
    {
        // kernel/fork.c dup_mmap skips VM_DONTCOPY VMAs; the child's access faults (SIGSEGV), the rest is COW.
        final SimContext c = open(legacy(), "RDMAV_FORK_SAFE", "1");
        final UserProcess parent = c.process();
        final long buf = parent.mmapAnonymous(4 * PAGE);
        parent.write(buf, new byte[] {7});
        parent.write(buf + PAGE + 3000, new byte[] {9});
        c.allocPd().regMr(buf + PAGE, 64, LOCAL);
        final UserProcess child = parent.fork("child");
        assertThat(child.read(buf, 1)).containsExactly(7);
        final Throwable t = catchThrowable(() -> child.read(buf + PAGE + 3000, 1));
        assertThat(t).as("a byte the MR does not cover, in the same page").isInstanceOf(SegmentationFault.class);
        assertThat(parent.read(buf + PAGE + 3000, 1)).containsExactly(9);
    }

    @Test
    void queueRingsAreMadvisedLikeRegistrationsAndARefusedRingLeavesNothing()
    {
        // mlx5 mlx5_alloc_buf: ibv_dontfork_range on the ring before the kernel pins it.
        final SimContext c = open(HostConfig.builder().forkBehaviour(ForkBehaviour.LEGACY).maxMapCount(6).build(),
            "RDMAV_FORK_SAFE", "1");
        final UserProcess p = c.process();
        final List<Object> made = new java.util.ArrayList<>();
        VerbsException refused = null;
        for (int i = 0; i < 10 && refused == null; i++)
        {
            final int vmasBefore = p.vmaCount();
            final long pinnedBefore = p.pinnedVmPages();
            try
            {
                made.add(c.createCq(16));
                // An application buffer between rings, so that the next ring's VMA merges with it and must be split.
                p.mmapAnonymous(PAGE);
            }
            catch (final VerbsException e)
            {
                refused = e;
                assertThat(p.vmaCount()).isEqualTo(vmasBefore);
                assertThat(p.pinnedVmPages()).isEqualTo(pinnedBefore);
            }
        }
        assertThat(made).isNotEmpty();
        assertThat(refused).isNotNull();
        assertThat(refused.errno()).isEqualTo(Errno.EAGAIN.code());
        assertThat(refused.verb()).isEqualTo("ibv_create_cq");
        assertThat(fork(c).dontforkCalls()).isEqualTo(made.size());
    }

    @Test
    void reregOfTheTranslationMovesDontforkAndARefusedMadviseIsErrDontForkNew()
    {
        // verbs.c ibv_rereg_mr: dontfork the new range (IBV_REREG_MR_ERR_DONT_FORK_NEW), then dofork the old.
        final SimContext c = open(legacy(), "RDMAV_FORK_SAFE", "1");
        final UserProcess p = c.process();
        final long buf = p.mmapAnonymous(8 * PAGE);
        final MemoryRegion mr = c.allocPd().regMr(buf, PAGE, LOCAL);
        mr.rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, buf + 4 * PAGE, PAGE, Set.of());
        assertThat(dontcopy(p, buf)).isFalse();
        assertThat(dontcopy(p, buf + 4 * PAGE)).isTrue();
        final Throwable t = catchThrowable(() -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null,
            0x1000_0000L, PAGE, Set.of()));
        assertThat(t).isInstanceOf(ReregException.class);
        assertThat(((ReregException)t).reregError()).isEqualTo(ReregException.ERR_DONT_FORK_NEW);
        assertThat(((ReregException)t).errno()).isEqualTo(Errno.ENOMEM.code());
        assertThat(mr.isClosed()).isFalse();
        assertThat(mr.addr()).isEqualTo(buf + 4 * PAGE);
        assertThat(dontcopy(p, buf + 4 * PAGE)).isTrue();
    }

    @Test
    void odpRegistrationsAreNotMadvised()
    {
        // verbs.c ibv_reg_mr: ibv_dontfork_range is skipped for IBV_ACCESS_ON_DEMAND.
        final SimContext c = open(legacy(), "RDMAV_FORK_SAFE", "1");
        final long buf = c.process().mmapAnonymous(4 * PAGE);
        c.allocPd().regMr(buf, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
        assertThat(fork(c).dontforkCalls()).isZero();
        assertThat(dontcopy(c.process(), buf)).isFalse();
    }

    @Test
    void aDeregistrationAfterMunmapIgnoresTheRefusedDofork()
    {
        // memory.c do_madvise: a failed MADV_DOFORK is not reported.
        final SimContext c = open(legacy(), "RDMAV_FORK_SAFE", "1");
        final UserProcess p = c.process();
        final long buf = p.mmapAnonymous(4 * PAGE);
        final MemoryRegion mr = c.allocPd().regMr(buf, PAGE, LOCAL);
        p.munmap(buf, 4 * PAGE);
        mr.close();
        assertThat(mr.isClosed()).isTrue();
        assertThat(fork(c).refusedDoforks()).isEqualTo(1);
        assertThat(fork(c).dontforkBytes()).isZero();
    }

    @Test
    void aChildInheritsForkSupportAndItsRangeCountsWithItsMemory()
    {
        // libibverbs' mm_root and its tree are ordinary process memory: fork copies them into the child.
        final SimContext c = open(legacy(), "RDMAV_FORK_SAFE", "1");
        final UserProcess parent = c.process();
        final long buf = parent.mmapAnonymous(4 * PAGE);
        c.allocPd().regMr(buf + PAGE, PAGE, LOCAL);
        final UserProcess child = parent.fork("child");
        assertThat(child.parent()).isSameAs(parent);
        assertThat(child.environment()).containsEntry("RDMAV_FORK_SAFE", "1");
        final ForkSafety inChild = c.device().host().forkSafety(child);
        assertThat(inChild.status()).isEqualTo(ForkSafety.ForkStatus.ENABLED);
        assertThat(inChild.referenceCount(buf + PAGE)).isEqualTo(1);
        assertThat(inChild.forkInit()).isZero();
    }
}
