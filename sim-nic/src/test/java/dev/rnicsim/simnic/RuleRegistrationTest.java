package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The registration rules of {@code ibv_reg_mr} / {@code ibv_reg_mr_iova} on the simulator (ibv_reg_mr(3),
 * {@code ib_umem_get}, {@code ib_umem_find_best_pgsz}): argument checks, RLIMIT_MEMLOCK, adapter-table exhaustion, keys, page-size choice,
 * the registration trace, and that a failed registration leaves nothing behind.
 */
class RuleRegistrationTest
{
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;
    private static final long GIB = 1024 * MIB;

    private final SimFabric fabric = new SimFabric();
    private final SimHost host = fabric.addHost("h", RuleRig.host(4 * GIB, 16, 0));

    /** What a failed registration must leave unchanged. */
    private record Footprint(long pinnedVmPages, long mrLive, long mttInUse, long pinnedBytes, long registrations,
        int mrsOfPd, int traceSize)
    {
        static Footprint of(final SimDevice device, final SimContext ctx, final ProtectionDomain pd)
        {
            return new Footprint(ctx.process().pinnedVmPages(), device.counter(SimCounter.MR_LIVE),
                device.counter(SimCounter.MTT_ENTRIES_IN_USE), device.counter(SimCounter.PINNED_BYTES),
                device.counter(SimCounter.MR_REGISTRATIONS), ((SimPd)pd).memoryRegions().size(),
                device.recentRegistrations().size());
        }
    }

    private SimContext open(final SimDevice device)
    {
        return device.open(host.host().spawn("app"));
    }

    /** Maps and touches base pages, so that their frames exist and their pin counts can be read. */
    private static long touched(final SimContext ctx, final long lengthBytes)
    {
        final long addr = ctx.memory().allocate(lengthBytes, Backing.BASE_PAGES);
        ctx.process().touch(addr, lengthBytes, true);
        return addr;
    }

    private PhysicalMemory ram()
    {
        return host.host().physicalMemory();
    }

    private static long pfn(final UserProcess process, final long addr)
    {
        final long phys = process.translate(addr);
        assertThat(phys).as("0x%x is mapped", addr).isNotNegative();
        return phys >>> PhysicalMemory.FRAME_SHIFT;
    }

    private void assertPinCounts(final UserProcess process, final long addr, final long lengthBytes,
        final int expected)
    {
        for (long va = addr; va < addr + lengthBytes; va += 4 * KIB)
        {
            assertThat(ram().pinCount(pfn(process, va))).as("pin count of the frame behind 0x%x", va)
                .isEqualTo(expected);
        }
    }

    private static VerbsException regFails(final ProtectionDomain pd, final long addr, final long lengthBytes,
        final Set<Access> access)
    {
        return catchThrowableOfType(VerbsException.class, () -> pd.regMr(addr, lengthBytes, access));
    }

    static Stream<Arguments> remoteRightsWithoutLocalWrite()
    {
        return Stream.of(Arguments.of(EnumSet.of(Access.REMOTE_WRITE)), Arguments.of(EnumSet.of(Access.REMOTE_ATOMIC)),
            Arguments.of(EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ)),
            Arguments.of(EnumSet.of(Access.REMOTE_ATOMIC, Access.REMOTE_READ, Access.MW_BIND)));
    }

    @ParameterizedTest
    @MethodSource("remoteRightsWithoutLocalWrite")
    void shouldFailWithEinvalAndPinNothingWhenRemoteWriteOrAtomicLacksLocalWrite(final Set<Access> access)
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 64 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException e = regFails(pd, addr, 64 * KIB, access);

        assertThat(e).isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.verb()).isEqualTo("ibv_reg_mr");
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
        assertThat(device.counter(SimCounter.MR_REGISTRATION_FAILURES)).isEqualTo(1);
        assertPinCounts(ctx.process(), addr, 64 * KIB, 0);
    }

    static Stream<Arguments> rightsThatNeedNoLocalWrite()
    {
        return Stream.of(Arguments.of(EnumSet.of(Access.REMOTE_READ)), Arguments.of(EnumSet.of(Access.MW_BIND)),
            Arguments.of(EnumSet.of(Access.REMOTE_READ, Access.MW_BIND)), Arguments.of(EnumSet.noneOf(Access.class)),
            Arguments.of(EnumSet.of(Access.RELAXED_ORDERING)));
    }

    @ParameterizedTest
    @MethodSource("rightsThatNeedNoLocalWrite")
    void shouldRegisterWithoutLocalWriteWhenOnlyReadOrBindRightsAreAsked(final Set<Access> access)
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 16 * KIB);

        final MemoryRegion mr = pd.regMr(addr, 16 * KIB, access);

        assertThat(mr.access()).isEqualTo(access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
        assertThat(mr.addr()).isEqualTo(addr);
        assertThat(mr.lengthBytes()).isEqualTo(16 * KIB);
        assertThat(mr.iova()).isEqualTo(addr);
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(4);
        assertThat(device.counter(SimCounter.MR_LIVE)).isEqualTo(1);
        assertPinCounts(ctx.process(), addr, 16 * KIB, 1);
    }

    @Test
    void shouldFailWithEinvalWhenLengthIsZero()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 4 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException e = regFails(pd, addr, 0, RuleRig.LOCAL);

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
    }

    @Test
    void shouldFailWithEinvalWhenAddrPlusLengthWrapsPast2To64()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 4 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        // max_mr_size is 2^64-1 on mlx5, so only the wrap can refuse this length.
        final VerbsException e = regFails(pd, addr, -addr + 4 * KIB, RuleRig.LOCAL);

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
        assertThat(regFails(pd, addr, -1L, RuleRig.LOCAL).errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Test
    void shouldFailWithEinvalWhenLengthExceedsMaxMrSizeOnE810()
    {
        final SimDevice device = host.addDevice("irdma0", DeviceProfiles.e810());
        final SimContext ctx = open(device);
        ctx.process().capIpcLock(true);
        final ProtectionDomain pd = ctx.allocPd();
        final long maxMrSize = ctx.queryDevice().maxMrSizeBytes();
        assertThat(maxMrSize).isEqualTo(32L << 40);
        final long addr = touched(ctx, 4 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException e = regFails(pd, addr, maxMrSize + 1, RuleRig.LOCAL);

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e).hasMessageContaining("max_mr_size");
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
    }

    @Test
    void shouldFailWithEinvalWhenIovaAndAddrDifferInPageOffset()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 16 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> pd.regMr(addr + 0x10, 4 * KIB, 0x20_0000L + 0x20, RuleRig.LOCAL));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
        assertPinCounts(ctx.process(), addr, 16 * KIB, 0);
        final MemoryRegion same = pd.regMr(addr + 0x10, 4 * KIB, 0x20_0000L + 0x10, RuleRig.LOCAL);
        assertThat(same.iova()).isEqualTo(0x20_0010L);
    }

    @Test
    void shouldFailWithEnomemNamingRlimitMemlockAndPinNothingWhenBufferExceedsDefaultLimit()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        assertThat(ctx.process().rlimitMemlockBytes()).isEqualTo(8 * MIB);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 8 * MIB + 4 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException e = regFails(pd, addr, 8 * MIB + 4 * KIB, RuleRig.LOCAL);

        assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(e).hasMessageContaining("RLIMIT_MEMLOCK");
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
        assertPinCounts(ctx.process(), addr, 8 * MIB + 4 * KIB, 0);
        final MemoryRegion exactlyAtLimit = pd.regMr(addr, 8 * MIB, RuleRig.LOCAL);
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(2048);
        assertThat(regFails(pd, addr, 4 * KIB, RuleRig.LOCAL).errnoName()).isEqualTo(Errno.ENOMEM);
        exactlyAtLimit.close();
        assertThat(ctx.process().pinnedVmPages()).isZero();
    }

    @Test
    void shouldFailWithEpermWhenRlimitMemlockIsZero()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        ctx.process().rlimitMemlockBytes(0);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 4 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException e = regFails(pd, addr, 4 * KIB, RuleRig.LOCAL);

        assertThat(e.errnoName()).isEqualTo(Errno.EPERM);
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
        assertPinCounts(ctx.process(), addr, 4 * KIB, 0);
    }

    @Test
    void shouldRegisterBeyondRlimitMemlockWhenCapIpcLockIsHeld()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        ctx.process().capIpcLock(true).rlimitMemlockBytes(0);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 32 * MIB);

        final MemoryRegion mr = pd.regMr(addr, 32 * MIB, RuleRig.LOCAL);

        assertThat(mr.lengthBytes()).isEqualTo(32 * MIB);
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(32 * MIB / (4 * KIB));
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo(32 * MIB);
    }

    @Test
    void shouldFailWithEfaultAndPinNothingWhenRangeIsUnmapped()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long gone = ctx.memory().allocate(16 * KIB, Backing.BASE_PAGES);
        ctx.memory().free(gone, 16 * KIB);
        final long half = touched(ctx, 16 * KIB);
        ctx.memory().free(half + 8 * KIB, 8 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException unmapped = regFails(pd, gone, 16 * KIB, RuleRig.LOCAL);
        final VerbsException partly = regFails(pd, half, 16 * KIB, RuleRig.LOCAL);

        assertThat(unmapped.errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(partly.errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
        assertPinCounts(ctx.process(), half, 8 * KIB, 0);
    }

    @Test
    void shouldFailWithEnomemWhenMttIsExhaustedAlthoughRamIsFreeAndKeepEarlierMrsWorking()
    {
        final SimDevice device = host.addDevice("mlx4_0", DeviceProfiles.connectx3().withMtt(MttConfig.buddy(4, 3)));
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long mttCapacity = device.tables().mtt().counters().capacityEntries();
        assertThat(mttCapacity).isEqualTo(128);
        final List<MemoryRegion> mrs = new ArrayList<>();
        VerbsException failure = null;
        while (failure == null && mrs.size() <= mttCapacity)
        {
            final long addr = touched(ctx, 64 * KIB);
            try
            {
                mrs.add(pd.regMr(addr, 64 * KIB, RuleRig.REMOTE_ALL));
            }
            catch (final VerbsException e)
            {
                failure = e;
            }
        }

        assertThat(failure).isNotNull();
        assertThat(failure.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(failure).hasMessageContaining("MTT");
        assertThat(device.counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mttCapacity);
        assertThat(ctx.process().pinnedVmPages()).as("memlock is not what ran out")
            .isEqualTo(mrs.size() * 16L).isLessThan(ctx.process().rlimitMemlockBytes() / (4 * KIB));
        assertThat(ram().freeFrames()).as("RAM is not what ran out").isGreaterThan(GIB / (4 * KIB));
        assertThat(device.counter(SimCounter.MR_LIVE)).isEqualTo(mrs.size());
        // An earlier MR still works: a loopback WRITE from the first MR into the last one.
        final MemoryRegion first = mrs.get(0);
        final MemoryRegion last = mrs.get(mrs.size() - 1);
        ctx.memory().write(first.addr(), RuleRig.pattern(100, 7));
        final CompletionQueue cq = ctx.createCq(8);
        final QueuePair qp1 = pd.createQp(QpInitAttr.rc(cq));
        final QueuePair qp2 = pd.createQp(QpInitAttr.rc(cq));
        qp1.connect(qp2.address(), RuleRig.ALL_REMOTE);
        qp2.connect(qp1.address(), RuleRig.ALL_REMOTE);
        qp1.postSend(SendWr.write(1, RuleRig.sgl(RuleRig.sge(first, first.addr(), 100)), last.addr() + 50,
            last.rkey()));
        assertThat(cq.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(ctx.memory().read(last.addr() + 50, 100)).isEqualTo(RuleRig.pattern(100, 7));
        // Freeing one MR's entries lets a registration of the same memory in again.
        final SimMr freed = (SimMr)mrs.get(1);
        freed.close();
        final SimMr again = (SimMr)pd.regMr(freed.addr(), 64 * KIB, RuleRig.LOCAL);
        assertThat(again.mttEntries()).isEqualTo(freed.mttEntries());
        assertThat(device.counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mttCapacity);
    }

    @Test
    void shouldFailWithEnomemWhenMaxMrMrsAreLive()
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final int maxMr = 4;
        final SimDevice device = host.addDevice("mlx5_0",
            cx5.withAttributes(cx5.attributes().toBuilder().maxMr(maxMr).build()));
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 4 * KIB);
        final List<MemoryRegion> mrs = new ArrayList<>();
        VerbsException failure = null;
        while (failure == null && mrs.size() <= maxMr)
        {
            try
            {
                mrs.add(pd.regMr(addr, 4 * KIB, RuleRig.LOCAL));
            }
            catch (final VerbsException e)
            {
                failure = e;
            }
        }
        final Footprint full = Footprint.of(device, ctx, pd);

        assertThat(failure).isNotNull();
        assertThat(failure.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(failure).hasMessageContaining("max_mr");
        // A device reporting max_mr=N takes N MRs (ibv_query_device(3): the maximum number of MRs).
        assertThat(mrs).hasSize(maxMr);
        assertThat(regFails(pd, addr, 4 * KIB, RuleRig.LOCAL).errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(full);
        assertPinCounts(ctx.process(), addr, 4 * KIB, mrs.size());
        mrs.get(0).close();
        assertThat(pd.regMr(addr, 4 * KIB, RuleRig.LOCAL).isClosed()).isFalse();
    }

    @Test
    void shouldFailWithEopnotsuppForOnDemandOnADeviceWithoutOdp()
    {
        final SimDevice device = host.addDevice("mlx4_0", DeviceProfiles.connectx3());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 16 * KIB);
        final Footprint before = Footprint.of(device, ctx, pd);

        final VerbsException e = regFails(pd, addr, 16 * KIB, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));

        assertThat(e.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(Footprint.of(device, ctx, pd)).isEqualTo(before);
        assertPinCounts(ctx.process(), addr, 16 * KIB, 0);
    }

    @Test
    void shouldGiveRkeyZeroOnRxeWithoutRemoteRightsAndRkeyEqualToLkeyWithThem()
    {
        final SimDevice device = host.addDevice("rxe0", DeviceProfiles.rxe());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 16 * KIB);

        final MemoryRegion local = pd.regMr(addr, 4 * KIB, RuleRig.LOCAL);
        final MemoryRegion bind = pd.regMr(addr, 4 * KIB, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND));
        final MemoryRegion read = pd.regMr(addr, 4 * KIB, EnumSet.of(Access.REMOTE_READ));
        final MemoryRegion write = pd.regMr(addr, 4 * KIB, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        final MemoryRegion atomic = pd.regMr(addr, 4 * KIB, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_ATOMIC));

        assertThat(local.lkey()).isNotZero();
        assertThat(local.rkey()).isZero();
        assertThat(bind.lkey()).isNotZero();
        assertThat(bind.rkey()).isZero();
        for (final MemoryRegion mr : List.of(read, write, atomic))
        {
            assertThat(mr.rkey()).as("rkey of %s", mr).isEqualTo(mr.lkey()).isNotZero();
        }
        assertThat(List.of(local.lkey(), bind.lkey(), read.lkey(), write.lkey(), atomic.lkey()))
            .doesNotHaveDuplicates();
    }

    @Test
    void shouldGiveRkeyEqualToLkeyOnMlx5WhateverTheRights()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 16 * KIB);

        for (final Set<Access> access : List.of(EnumSet.noneOf(Access.class), RuleRig.LOCAL,
            EnumSet.of(Access.REMOTE_READ), RuleRig.REMOTE_ALL))
        {
            final MemoryRegion mr = pd.regMr(addr, 4 * KIB, access);
            assertThat(mr.rkey()).as("rkey of %s", mr).isEqualTo(mr.lkey()).isNotZero();
        }
    }

    @Test
    void shouldUse2MiBPagesAndOneEntryPer2MiBForAHugetlbBufferOnConnectx5AndE810()
    {
        final SimDevice cx5 = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimDevice e810 = host.addDevice("irdma0", DeviceProfiles.e810());
        final SimContext ctx5 = open(cx5);
        final SimContext ctxE = open(e810);
        final long buf5 = ctx5.memory().allocate(2 * MIB, Backing.HUGETLB_2M);
        final long bufE = ctxE.memory().allocate(2 * MIB, Backing.HUGETLB_2M);
        final long bigE = ctxE.memory().allocate(6 * MIB, Backing.HUGETLB_2M);

        final SimMr mr5 = (SimMr)ctx5.allocPd().regMr(buf5, 2 * MIB, RuleRig.LOCAL);
        final ProtectionDomain pdE = ctxE.allocPd();
        final SimMr mrE = (SimMr)pdE.regMr(bufE, 2 * MIB, RuleRig.LOCAL);
        final SimMr bigMrE = (SimMr)pdE.regMr(bigE, 6 * MIB, RuleRig.LOCAL);

        assertThat(mr5.pageSizeBytes()).isEqualTo(2 * MIB);
        assertThat(mr5.mttEntries()).isEqualTo(1);
        assertThat(mr5.pinnedPages()).isEqualTo(512);
        assertThat(mrE.pageSizeBytes()).isEqualTo(2 * MIB);
        assertThat(mrE.mttEntries()).isEqualTo(1);
        // E810's page_size_cap is 4K | 2M | 1G: however contiguous the three huge pages are, 2 MiB is the most.
        assertThat(bigMrE.pageSizeBytes()).isEqualTo(2 * MIB);
        assertThat(bigMrE.mttEntries()).isEqualTo(3);
        assertThat(ctx5.process().mappedPageSize(buf5).bytes()).isEqualTo(2 * MIB);
    }

    @Test
    void shouldFallBackTo4KiBPagesWhenIovaIsMisalignedBy4KiB()
    {
        // the ib_umem_find_best_pgsz worked example: the same 2 MiB-backed memory, once at its own address and once at iova 0x1000.
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long buf = ctx.memory().allocate(4 * MIB, Backing.HUGETLB_2M);

        final SimMr aligned = (SimMr)pd.regMr(buf, 2 * MIB, RuleRig.LOCAL);
        final SimMr shifted = (SimMr)pd.regMr(buf, 4 * MIB, 0x1000, RuleRig.LOCAL);

        assertThat(aligned.pageSizeBytes()).isEqualTo(2 * MIB);
        assertThat(aligned.mttEntries()).isEqualTo(1);
        assertThat(shifted.iova()).isEqualTo(0x1000);
        assertThat(shifted.pageSizeBytes()).isEqualTo(4 * KIB);
        assertThat(shifted.mttEntries()).isEqualTo(1024);
    }

    @Test
    void shouldRecordRegAndDeregWithTheirCountsInTheRegistrationTrace()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 64 * KIB);
        final long t0 = fabric.clock().nowNs();

        final SimMr mr = (SimMr)pd.regMr(addr + 100, 40 * KIB, RuleRig.REMOTE_ALL);
        final long t1 = fabric.clock().nowNs();
        mr.close();
        final long t2 = fabric.clock().nowNs();

        final List<RegistrationEvent> trace = device.recentRegistrations();
        assertThat(trace).hasSize(2);
        final RegistrationEvent reg = trace.get(0);
        final RegistrationEvent dereg = trace.get(1);
        assertThat(reg.kind()).isEqualTo(RegistrationEvent.Kind.REG);
        assertThat(reg.lkey()).isEqualTo(mr.lkey());
        assertThat(reg.addr()).isEqualTo(addr + 100);
        assertThat(reg.lengthBytes()).isEqualTo(40 * KIB);
        assertThat(reg.iova()).isEqualTo(addr + 100);
        assertThat(reg.access()).isEqualTo(Access.toBits(RuleRig.REMOTE_ALL));
        assertThat(reg.pagesPinned()).as("[addr+100, addr+100+40K) touches 11 pages").isEqualTo(11);
        assertThat(reg.mttEntries()).isEqualTo(mr.mttEntries()).isPositive();
        assertThat(reg.pageSizeBytes()).isEqualTo(mr.pageSizeBytes());
        assertThat(reg.startNs()).isEqualTo(t0);
        assertThat(reg.durationNs()).isPositive().isEqualTo(t1 - t0);
        assertThat(dereg.kind()).isEqualTo(RegistrationEvent.Kind.DEREG);
        assertThat(dereg.lkey()).isEqualTo(mr.lkey());
        assertThat(dereg.pagesPinned()).isEqualTo(11);
        assertThat(dereg.mttEntries()).isEqualTo(reg.mttEntries());
        assertThat(dereg.startNs()).isEqualTo(t1);
        assertThat(dereg.durationNs()).isPositive().isEqualTo(t2 - t1);
        assertThat(device.counter(SimCounter.MR_REGISTRATIONS)).isEqualTo(1);
        assertThat(device.counter(SimCounter.MR_DEREGISTRATIONS)).isEqualTo(1);
    }

    @Test
    void shouldUnpinEveryPageAndReturnPinnedVmOnDereg()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 64 * KIB);
        final long pinnedBefore = ctx.process().pinnedVmPages();

        final MemoryRegion whole = pd.regMr(addr, 64 * KIB, RuleRig.LOCAL);
        final MemoryRegion overlap = pd.regMr(addr + 32 * KIB, 32 * KIB, EnumSet.of(Access.REMOTE_READ));

        assertThat(ctx.process().pinnedVmPages()).isEqualTo(pinnedBefore + 16 + 8);
        assertPinCounts(ctx.process(), addr, 32 * KIB, 1);
        assertPinCounts(ctx.process(), addr + 32 * KIB, 32 * KIB, 2);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo(96 * KIB);

        whole.close();
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(pinnedBefore + 8);
        assertPinCounts(ctx.process(), addr, 32 * KIB, 0);
        assertPinCounts(ctx.process(), addr + 32 * KIB, 32 * KIB, 1);

        overlap.close();
        overlap.close();
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(pinnedBefore);
        assertPinCounts(ctx.process(), addr, 64 * KIB, 0);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isZero();
        assertThat(device.counter(SimCounter.MR_LIVE)).isZero();
        assertThat(device.counter(SimCounter.MTT_ENTRIES_IN_USE)).isZero();
        assertThat(whole.isClosed()).isTrue();
        assertThat(((SimPd)pd).memoryRegions()).isEmpty();
        assertThat(device.counter(SimCounter.MR_DEREGISTRATIONS)).as("a second close does nothing").isEqualTo(2);
    }

    @Test
    void shouldRefuseRegistrationOnAClosedPdWithEinval()
    {
        final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctx = open(device);
        final ProtectionDomain pd = ctx.allocPd();
        final long addr = touched(ctx, 4 * KIB);
        pd.close();

        assertThatThrownBy(() -> pd.regMr(addr, 4 * KIB, RuleRig.LOCAL)).isInstanceOfSatisfying(
            VerbsException.class, e -> assertThat(e.errnoName()).isEqualTo(Errno.EINVAL));
        assertThat(ctx.process().pinnedVmPages()).isZero();
    }
}
