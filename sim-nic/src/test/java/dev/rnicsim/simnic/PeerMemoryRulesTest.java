package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rules of MRs over GPU memory: ibv_reg_dmabuf_mr's argument checks and errnos (ibv_reg_mr(3),
 * ib_umem_dmabuf_get), ibv_reg_mr on a GPU address with and without a peer-memory client, the BAR1 aperture, the
 * exporter's move against dynamic, pinned and peer-memory MRs, cudaFree under a peer-memory MR, the dma-buf's
 * lifetime against its importers, and data moved to and from VRAM peer to peer. Every refused registration is also
 * checked to change nothing but sim_mr_registration_failures.
 */
class PeerMemoryRulesTest
{
    private static final int KIB = 1024;
    private static final long MIB = 1024L * KIB;
    private static final long GPU_PAGE = SimGpu.GPU_PAGE_BYTES;
    private static final long VRAM = 64 * MIB;
    private static final String REG_DMABUF = "ibv_reg_dmabuf_mr";
    private static final String REG = "ibv_reg_mr";
    private static final Set<Access> RW = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
    private static final Set<Access> RW_RO = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.RELAXED_ORDERING);

    /** How a test registers GPU memory. */
    enum Kind
    {
        PEER_MEMORY, DMABUF_DYNAMIC, DMABUF_PINNED
    }

    // ------------------------------------------------------------------ fixture

    /** connectx5 with DMABUF_DYNAMIC swapped for DMABUF_PINNED. */
    static DeviceProfile pinnedDmabufProfile()
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final Set<ProviderRule> rules = EnumSet.copyOf(cx5.providerRules());
        rules.remove(ProviderRule.DMABUF_DYNAMIC);
        rules.add(ProviderRule.DMABUF_PINNED);
        return cx5.withProviderRules(rules).withName("connectx5-dmabuf-pinned");
    }

    private static DeviceProfile profileFor(final Kind kind)
    {
        return kind == Kind.DMABUF_PINNED ? pinnedDmabufProfile() : DeviceProfiles.connectx5();
    }

    private static SimGpu gpuB(final RuleRig rig, final long bar1Bytes)
    {
        return rig.deviceB.host().addGpu("gpu0", VRAM, bar1Bytes, GpuTopology.PIX);
    }

    private static SimGpu gpuB(final RuleRig rig)
    {
        return gpuB(rig, SimGpu.DEFAULT_BAR1_BYTES);
    }

    private static SimPd pdB(final RuleRig rig)
    {
        return (SimPd)rig.pdB;
    }

    /**
     * Registers [bufferOffset, bufferOffset + length) of a buffer on b the given way; dma-bufs export the whole
     * buffer and are addressed by iova {@code 0x4000_0000 + bufferOffset}.
     */
    private static MemoryRegion register(final RuleRig rig, final Kind kind, final GpuBuffer buf,
        final long bufferOffset, final long length, final Set<Access> access)
    {
        if (kind == Kind.PEER_MEMORY)
        {
            rig.deviceB.host().peerMemoryClient(true);
            return rig.pdB.regMr(buf.gpuVa() + bufferOffset, length, access);
        }
        final int fd = buf.gpu().exportDmabuf(buf, 0, buf.sizeBytes());
        return rig.pdB.regDmabufMr(bufferOffset, length, 0x4000_0000L + bufferOffset, fd, access);
    }

    /** The address a peer uses for byte {@code bufferOffset} of an MR made by {@link #register}. */
    private static long remoteAddr(final Kind kind, final GpuBuffer buf, final long bufferOffset)
    {
        return kind == Kind.PEER_MEMORY ? buf.gpuVa() + bufferOffset : 0x4000_0000L + bufferOffset;
    }

    /** A source buffer on a holding {@code data}, registered for local access. */
    private static Sge sourceA(final RuleRig rig, final byte[] data)
    {
        final long addr = rig.bufferA(data.length);
        rig.ctxA.memory().write(addr, data);
        final MemoryRegion mr = rig.pdA.regMr(addr, data.length, RuleRig.LOCAL);
        return new Sge(addr, data.length, mr.lkey());
    }

    private static List<WcStatus> statuses(final List<WorkCompletion> wcs)
    {
        return wcs.stream().map(WorkCompletion::status).toList();
    }

    /** Compares byte arrays by their first differing index: keeps failure messages short. */
    private static void assertSameBytes(final String what, final byte[] actual, final byte[] expected)
    {
        assertThat(actual).as(what).hasSameSizeAs(expected);
        assertThat(Arrays.mismatch(actual, expected)).as(what + ": first differing byte").isEqualTo(-1);
    }

    private static VerbsException verbsFailure(final ThrowingCallable call)
    {
        final Throwable t = catchThrowable(call);
        assertThat(t).as("the call throws a VerbsException").isInstanceOf(VerbsException.class);
        return (VerbsException)t;
    }

    private static void assertErrno(final VerbsException e, final String verb, final Errno errno)
    {
        assertThat(e.verb()).isEqualTo(verb);
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(errno);
        assertThat(e.errno()).isEqualTo(errno.code());
    }

    /** What a refused registration must leave as it was. */
    record State(Map<String, Long> counters, long failures, List<Long> bar1Used, List<Long> vramUsed,
        List<SimPeerMr> peerMrs, long mptInUse)
    {
        static State of(final RuleRig rig)
        {
            final Map<String, Long> c = new LinkedHashMap<>(rig.deviceB.counters());
            final long failures = c.remove(SimCounter.MR_REGISTRATION_FAILURES.label());
            final List<Long> bar1 = new ArrayList<>();
            final List<Long> vram = new ArrayList<>();
            for (final SimGpu g : rig.deviceB.host().gpus())
            {
                bar1.add(g.bar1UsedBytes());
                vram.add(g.vramUsedBytes());
            }
            return new State(c, failures, bar1, vram, pdB(rig).peerMemoryRegions(),
                rig.deviceB.tables().mpt().inUse());
        }
    }

    /** Runs a registration that must fail with errno; checks that nothing but the failure counter moved. */
    private static VerbsException refused(final RuleRig rig, final String verb, final Errno errno,
        final ThrowingCallable call)
    {
        final State before = State.of(rig);
        final VerbsException e = verbsFailure(call);
        assertErrno(e, verb, errno);
        final State after = State.of(rig);
        assertThat(after.counters()).as("counters other than sim_mr_registration_failures")
            .isEqualTo(before.counters());
        assertThat(after.failures()).isEqualTo(before.failures() + 1);
        assertThat(after.bar1Used()).as("BAR1 in use").isEqualTo(before.bar1Used());
        assertThat(after.vramUsed()).as("VRAM in use").isEqualTo(before.vramUsed());
        assertThat(after.peerMrs()).as("MRs over GPU memory").isEqualTo(before.peerMrs());
        assertThat(after.mptInUse()).as("MPT entries").isEqualTo(before.mptInUse());
        return e;
    }

    // ------------------------------------------------------------------ ibv_reg_dmabuf_mr: success

    @Test
    void regDmabufMrOnMlx5GivesADynamicMrMappedThroughBar1()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);
        final long regsBefore = rig.deviceB.counter(SimCounter.MR_REGISTRATIONS);
        final long liveBefore = rig.deviceB.counter(SimCounter.MR_LIVE);

        final MemoryRegion mr = rig.pdB.regDmabufMr(GPU_PAGE + 0x123, 100 * KIB, 0x9000_0123L, fd, RW);

        assertThat(mr).isInstanceOf(SimPeerMr.class);
        final SimPeerMr p = (SimPeerMr)mr;
        assertThat(p.kind()).isEqualTo(SimPeerMr.Kind.DMABUF_DYNAMIC);
        assertThat(p.buffer()).isSameAs(buf);
        assertThat(p.gpu()).isSameAs(gpu);
        assertThat(mr.iova()).isEqualTo(0x9000_0123L);
        assertThat(mr.lengthBytes()).isEqualTo(100 * KIB);
        assertThat(mr.access()).isEqualTo(RW);
        assertThat(mr.rkey()).isEqualTo(mr.lkey());
        // [64 KiB + 0x123, +100 KiB) touches the GPU pages at 64 and 128 KiB.
        assertThat(p.bar1MappedBytes()).isEqualTo(2 * GPU_PAGE);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(2 * GPU_PAGE);
        assertThat(p.isRevoked()).isFalse();
        assertThat(p.moves()).isZero();
        assertThat(pdB(rig).peerMemoryRegions()).containsExactly(p);
        assertThat(rig.deviceB.peerMemoryRegion(mr.lkey())).isSameAs(p);
        assertThat(rig.deviceB.counter(SimCounter.MR_REGISTRATIONS)).isEqualTo(regsBefore + 1);
        assertThat(rig.deviceB.counter(SimCounter.MR_LIVE)).isEqualTo(liveBefore + 1);
    }

    @Test
    void regDmabufMrOnAPinnedProviderGivesAPinnedMr()
    {
        final RuleRig rig = RuleRig.connected(pinnedDmabufProfile(), RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);

        final SimPeerMr p = (SimPeerMr)rig.pdB.regDmabufMr(0, MIB, 0x10_0000L, fd, RW);

        assertThat(p.kind()).isEqualTo(SimPeerMr.Kind.DMABUF_PINNED);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(MIB);
    }

    @Test
    void peerMemoryRegistrationMapsWholeGpuPagesThroughBar1()
    {
        final RuleRig rig = RuleRig.connected();
        rig.deviceB.host().peerMemoryClient(true);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);

        final SimPeerMr one = (SimPeerMr)rig.pdB.regMr(buf.gpuVa() + 8 * KIB, 4 * KIB, RW);
        final SimPeerMr two = (SimPeerMr)rig.pdB.regMr(buf.gpuVa() + GPU_PAGE - 4 * KIB, 8 * KIB, RW);

        assertThat(one.kind()).isEqualTo(SimPeerMr.Kind.PEER_MEMORY);
        assertThat(one.addr()).isEqualTo(buf.gpuVa() + 8 * KIB);
        assertThat(one.bar1MappedBytes()).isEqualTo(GPU_PAGE);
        assertThat(two.bar1MappedBytes()).as("straddles two GPU pages").isEqualTo(2 * GPU_PAGE);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(3 * GPU_PAGE);
        assertThat(pdB(rig).peerMemoryRegions()).containsExactly(one, two);
    }

    @Test
    void relaxedOrderingAndEmptyAccessAreAccepted()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);

        final MemoryRegion none = rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, EnumSet.noneOf(Access.class));
        final MemoryRegion all = rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.RELAXED_ORDERING));

        assertThat(none.access()).isEmpty();
        assertThat(all.access()).contains(Access.RELAXED_ORDERING, Access.REMOTE_ATOMIC);
        rig.deviceB.host().peerMemoryClient(true);
        assertThat(rig.pdB.regMr(buf.gpuVa(), 4 * KIB, RW_RO).access()).contains(Access.RELAXED_ORDERING);
    }

    // ------------------------------------------------------------------ ibv_reg_dmabuf_mr: refusals

    @Test
    void iovaMustHaveTheOffsetsPageOffset()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);

        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(0x1234, 4 * KIB, 0x7000_0000L, fd, RW));
        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0x7000_0001L, fd, RW));
        // Same offset within the page, different pages: fine.
        assertThat(rig.pdB.regDmabufMr(0x1234, 4 * KIB, 0x7777_0234L, fd, RW).iova()).isEqualTo(0x7777_0234L);
    }

    @ParameterizedTest
    @EnumSource(value = Access.class, names = {"MW_BIND", "ZERO_BASED", "ON_DEMAND", "HUGETLB", "FLUSH_GLOBAL",
        "FLUSH_PERSISTENT"})
    void onlyTheFiveDmabufAccessFlagsAreAccepted(final Access flag)
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);
        final Set<Access> access = EnumSet.of(Access.LOCAL_WRITE, flag);

        final VerbsException e = refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd,
            access));
        assertThat(e.getMessage()).contains(flag.name());
    }

    @ParameterizedTest
    @EnumSource(value = Access.class, names = {"REMOTE_WRITE", "REMOTE_ATOMIC"})
    void remoteWriteAndAtomicNeedLocalWrite(final Access flag)
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);

        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, EnumSet.of(flag,
            Access.REMOTE_READ)));
        assertThat(rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, EnumSet.of(flag, Access.LOCAL_WRITE))).isNotNull();
    }

    @Test
    void aRangeThatWrapsOrLeavesTheDmabufIsEinval()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(2 * MIB);
        // A dma-buf of the middle 1 MiB of the buffer.
        final int fd = gpu.exportDmabuf(buf, 512 * KIB, MIB);

        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(8 * KIB, -4 * KIB, 8 * KIB, fd, RW));
        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(0, MIB + 1, 0, fd, RW));
        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(MIB - 4 * KIB, 8 * KIB, 0, fd, RW));
        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(MIB, 4 * KIB, 0, fd, RW));
        refused(rig, REG_DMABUF, Errno.EINVAL, () -> rig.pdB.regDmabufMr(0, 0, 0, fd, RW));
        // The last page and the whole dma-buf fit.
        assertThat(rig.pdB.regDmabufMr(MIB - 4 * KIB, 4 * KIB, 0, fd, RW)).isNotNull();
        assertThat(rig.pdB.regDmabufMr(0, MIB, 0, fd, RW)).isNotNull();
    }

    @Test
    void anFdThatNamesNoOpenDmabufIsEbadf()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);

        refused(rig, REG_DMABUF, Errno.EBADF, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd + 1000, RW));
        refused(rig, REG_DMABUF, Errno.EBADF, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, -1, RW));
        gpu.closeDmabuf(fd);
        refused(rig, REG_DMABUF, Errno.EBADF, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, RW));
    }

    @Test
    void dmabufFdsAreLocalToTheirHost()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpuA = rig.deviceA.host().addGpu("gpuA", VRAM, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpuA.allocate(MIB);
        final int fd = gpuA.exportDmabuf(buf, 0, MIB);
        assertThat(rig.deviceB.host().dmabuf(fd)).isNull();

        refused(rig, REG_DMABUF, Errno.EBADF, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, RW));
        assertThat(rig.pdA.regDmabufMr(0, 4 * KIB, 0, fd, RW)).isNotNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx3", "rxe", "e810"})
    void providersWithoutDmabufSupportAreEopnotsupp(final String profile)
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(profile), RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);

        refused(rig, REG_DMABUF, Errno.EOPNOTSUPP, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, RW));
    }

    @Test
    void aFullBar1ApertureIsEfaultNamingBar1AndChangesNothing()
    {
        final RuleRig rig = RuleRig.connected(pinnedDmabufProfile(), RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig, 4 * GPU_PAGE);
        final GpuBuffer filler = gpu.allocate(4 * GPU_PAGE);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fillerFd = gpu.exportDmabuf(filler, 0, 4 * GPU_PAGE);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);
        final MemoryRegion full = rig.pdB.regDmabufMr(0, 4 * GPU_PAGE, 0, fillerFd, RW);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(4 * GPU_PAGE);

        final VerbsException e = refused(rig, REG_DMABUF, Errno.EFAULT, () -> rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd,
            RW));
        assertThat(e.getMessage()).contains("BAR1");
        // The refused registration left no pin on the dma-buf: the exporter may still move the buffer.
        gpu.move(buf);

        full.close();
        assertThat(gpu.bar1UsedBytes()).isZero();
        assertThat(rig.pdB.regDmabufMr(0, 4 * KIB, 0, fd, RW)).isNotNull();
        assertThat(gpu.bar1UsedBytes()).isEqualTo(GPU_PAGE);
    }

    @Test
    void aFullBar1ApertureRefusesPeerMemoryToo()
    {
        final RuleRig rig = RuleRig.connected();
        rig.deviceB.host().peerMemoryClient(true);
        final SimGpu gpu = gpuB(rig, MIB);
        final GpuBuffer buf = gpu.allocate(2 * MIB);
        final MemoryRegion mr = rig.pdB.regMr(buf.gpuVa(), MIB, RW);

        final VerbsException e = refused(rig, REG, Errno.EFAULT, () -> rig.pdB.regMr(buf.gpuVa() + MIB, 4 * KIB,
            RW));
        assertThat(e.getMessage()).contains("BAR1");
        // The refused registration did not pin the buffer: cudaFree revokes only the live MR.
        mr.close();
        assertThat(gpu.bar1UsedBytes()).isZero();
        gpu.move(buf);
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aFullMptIsEnomemAndGivesTheBar1MappingBack(final Kind kind)
    {
        final DeviceProfile base = profileFor(kind);
        final DeviceProfile small = base.withAttributes(base.attributes().toBuilder().maxMr(4).build());
        final RuleRig rig = RuleRig.connected(small, RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        int registered = 0;
        // A device reporting max_mr 4 holds four MRs.
        while (rig.deviceB.tables().mpt().inUse() < 4)
        {
            register(rig, kind, buf, registered * GPU_PAGE, GPU_PAGE, RW);
            registered++;
        }
        assertThat(gpu.bar1UsedBytes()).isEqualTo(registered * GPU_PAGE);
        final String verb = kind == Kind.PEER_MEMORY ? REG : REG_DMABUF;
        final int fd = gpu.exportDmabuf(buf, 0, MIB);

        refused(rig, verb, Errno.ENOMEM, () ->
        {
            if (kind == Kind.PEER_MEMORY)
            {
                rig.pdB.regMr(buf.gpuVa() + 8 * GPU_PAGE, GPU_PAGE, RW);
            }
            else
            {
                rig.pdB.regDmabufMr(8 * GPU_PAGE, GPU_PAGE, 0, fd, RW);
            }
        });
        assertThat(gpu.bar1UsedBytes()).isEqualTo(registered * GPU_PAGE);
    }

    // ------------------------------------------------------------------ ibv_reg_mr on GPU memory

    @Test
    void regMrOnAGpuAddressWithoutAPeerMemoryClientIsEfaultNamingTheClient()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        assertThat(rig.deviceB.host().peerMemoryClient()).isFalse();

        final VerbsException e = refused(rig, REG, Errno.EFAULT, () -> rig.pdB.regMr(buf.gpuVa(), 64 * KIB, RW));
        assertThat(e.getMessage()).contains("peer-memory client");
        assertThat(gpu.bar1UsedBytes()).isZero();

        rig.deviceB.host().peerMemoryClient(true);
        assertThat(rig.pdB.regMr(buf.gpuVa(), 64 * KIB, RW)).isInstanceOf(SimPeerMr.class);
    }

    @Test
    void aPeerMemoryRangePastTheBufferIsEfault()
    {
        final RuleRig rig = RuleRig.connected();
        rig.deviceB.host().peerMemoryClient(true);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        gpu.allocate(MIB);

        refused(rig, REG, Errno.EFAULT, () -> rig.pdB.regMr(buf.gpuVa() + MIB - 4 * KIB, 8 * KIB, RW));
    }

    @Test
    void aPeerMemoryMrWithAnExplicitIovaIsAddressedByIt()
    {
        final RuleRig rig = RuleRig.connected();
        rig.deviceB.host().peerMemoryClient(true);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = rig.pdB.regMr(buf.gpuVa(), MIB, 0x5000_0000L, RW);
        final byte[] data = RuleRig.pattern(4096, 5);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), 0x5000_0100L, mr.rkey()));

        assertThat(mr.iova()).isEqualTo(0x5000_0000L);
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", gpu.read(buf.gpuVa() + 0x100, data.length), data);
    }

    @Test
    void aZeroBasedPeerMemoryMrIsAddressedByOffsetLikeAHostMr()
    {
        final RuleRig rig = RuleRig.connected();
        rig.deviceB.host().peerMemoryClient(true);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = rig.pdB.regMr(buf.gpuVa(), MIB, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE, Access.ZERO_BASED));
        final byte[] data = RuleRig.pattern(4096, 5);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), 0x100, mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", gpu.read(buf.gpuVa() + 0x100, data.length), data);
    }

    @Test
    void regMrOnAFreedGpuAddressIsNotPeerMemory()
    {
        final RuleRig rig = RuleRig.connected();
        rig.deviceB.host().peerMemoryClient(true);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        gpu.free(buf);
        assertThat(rig.deviceB.host().gpuBufferAt(buf.gpuVa())).isNull();

        // No VMA and no GPU buffer there any more: ib_umem_get fails.
        final VerbsException e = verbsFailure(() -> rig.pdB.regMr(buf.gpuVa(), 64 * KIB, RW));
        assertThat(e.errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(gpu.bar1UsedBytes()).isZero();
    }

    // ------------------------------------------------------------------ the exporter moves the buffer

    @Test
    void aMoveZapsADynamicMrAndTheNextRemoteWriteFaultsWithRnrNakAndLandsInTheNewVram()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final SimPeerMr mr = (SimPeerMr)register(rig, Kind.DMABUF_DYNAMIC, buf, 0, MIB, RW);
        final byte[] before = RuleRig.pattern(64 * KIB, 1);
        gpu.write(buf.gpuVa(), before);
        final long oldOffset = buf.vramOffset();
        final long invalidations = rig.deviceB.counter(SimCounter.KEY_INVALIDATIONS);

        gpu.move(buf);

        final long newOffset = buf.vramOffset();
        assertThat(newOffset).isNotEqualTo(oldOffset);
        assertThat(mr.moves()).isEqualTo(1);
        assertThat(mr.bar1MappedBytes()).isZero();
        assertThat(gpu.bar1UsedBytes()).isZero();
        assertThat(rig.deviceB.counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 1);
        assertSameBytes("the bytes moved with the buffer", gpu.read(buf.gpuVa(), before.length), before);

        final List<TraceEvent> trace = new ArrayList<>();
        rig.fabric.addTraceListener(trace::add);
        final long naks = rig.deviceB.counter(SimCounter.ODP_RNR_NAKS);
        final long faults = rig.deviceB.counter(SimCounter.ODP_PAGE_FAULTS);
        final byte[] data = RuleRig.pattern(8 * KIB, 77);
        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), remoteAddr(Kind.DMABUF_DYNAMIC, buf, 4 * KIB),
            mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.deviceB.counter(SimCounter.ODP_RNR_NAKS)).isGreaterThan(naks);
        assertThat(rig.deviceB.counter(SimCounter.ODP_PAGE_FAULTS)).isEqualTo(faults + 1);
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(trace).anySatisfy(t -> assertThat(t.name()).isEqualTo("rnr_wait"));
        assertThat(trace).anySatisfy(t -> assertThat(t.name()).isEqualTo("dmabuf_page_fault"));
        assertThat(mr.bar1MappedBytes()).isEqualTo(MIB);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(MIB);
        assertSameBytes("bytes", gpu.read(buf.gpuVa() + 4 * KIB, data.length), data);
        final byte[] atNew = new byte[data.length];
        gpu.memory().read(newOffset + 4 * KIB, atNew, 0, atNew.length);
        assertSameBytes("VRAM at the new location", atNew, data);
        final byte[] atOld = new byte[data.length];
        gpu.memory().read(oldOffset + 4 * KIB, atOld, 0, atOld.length);
        assertSameBytes("VRAM at the old location is untouched", atOld, Arrays.copyOfRange(before, 4 * KIB,
            4 * KIB + data.length));
    }

    @Test
    void aFaultAfterAMoveThatFindsBar1FullFailsTheAccessWithRemAccessErr()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig, MIB);
        final GpuBuffer buf = gpu.allocate(MIB);
        final GpuBuffer other = gpu.allocate(MIB);
        final SimPeerMr mr = (SimPeerMr)register(rig, Kind.DMABUF_DYNAMIC, buf, 0, MIB, RW);
        gpu.move(buf);
        // While the moved MR is unmapped, another registration takes the whole aperture.
        register(rig, Kind.DMABUF_DYNAMIC, other, 0, MIB, RW);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(MIB);
        final long failures = rig.deviceB.counter(SimCounter.ODP_PAGE_FAULT_FAILURES);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, RuleRig.pattern(4096, 1))),
            remoteAddr(Kind.DMABUF_DYNAMIC, buf, 0), mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.deviceB.counter(SimCounter.ODP_PAGE_FAULT_FAILURES)).isEqualTo(failures + 1);
        assertThat(mr.bar1MappedBytes()).isZero();
        assertThat(gpu.bar1UsedBytes()).isEqualTo(MIB);
    }

    @Test
    void aMovedDynamicMrFaultsLocallyWithoutRnrForItsOwnWorkRequests()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final SimPeerMr mr = (SimPeerMr)register(rig, Kind.DMABUF_DYNAMIC, buf, 0, MIB, RW);
        final byte[] data = RuleRig.pattern(16 * KIB, 3);
        gpu.write(buf.gpuVa(), data);
        gpu.move(buf);
        final long dst = rig.bufferA(16 * KIB);
        final MemoryRegion dstMr = rig.pdA.regMr(dst, 16 * KIB, RuleRig.REMOTE_ALL);
        final long naks = rig.deviceB.counter(SimCounter.ODP_RNR_NAKS);

        // b writes from its GPU MR (lkey, iova addressed) into a's host memory.
        rig.qpB.postSend(SendWr.write(1, List.of(new Sge(remoteAddr(Kind.DMABUF_DYNAMIC, buf, 0), 16 * KIB,
            mr.lkey())), dst, dstMr.rkey()));

        assertThat(statuses(rig.pollB())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", rig.ctxA.memory().read(dst, 16 * KIB), data);
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(rig.deviceB.counter(SimCounter.ODP_RNR_NAKS)).isEqualTo(naks);
    }

    @Test
    void aMoveNotifiesEveryDynamicImporterOfEveryDmabufOfTheBuffer()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final GpuBuffer other = gpu.allocate(MIB);
        final int fd1 = gpu.exportDmabuf(buf, 0, 512 * KIB);
        final int fd2 = gpu.exportDmabuf(buf, 512 * KIB, 512 * KIB);
        final int fd3 = gpu.exportDmabuf(other, 0, MIB);
        final SimPeerMr a = (SimPeerMr)rig.pdB.regDmabufMr(0, 64 * KIB, 0, fd1, RW);
        final SimPeerMr b = (SimPeerMr)rig.pdB.regDmabufMr(0, 64 * KIB, 0, fd2, RW);
        final SimPeerMr c = (SimPeerMr)rig.pdB.regDmabufMr(0, 64 * KIB, 0, fd3, RW);

        gpu.move(buf);

        assertThat(a.moves()).isEqualTo(1);
        assertThat(b.moves()).isEqualTo(1);
        assertThat(c.moves()).isZero();
        assertThat(c.bar1MappedBytes()).isEqualTo(GPU_PAGE);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(GPU_PAGE);
    }

    @Test
    void aMoveWithoutFreeVramIsEnomemAndNotifiesNobody()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = rig.deviceB.host().addGpu("gpu0", 2 * MIB, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(MIB);
        gpu.allocate(MIB);
        final SimPeerMr mr = (SimPeerMr)register(rig, Kind.DMABUF_DYNAMIC, buf, 0, MIB, RW);
        final long offset = buf.vramOffset();

        assertErrno(verbsFailure(() -> gpu.move(buf)), "move", Errno.ENOMEM);

        assertThat(mr.moves()).isZero();
        assertThat(mr.bar1MappedBytes()).isEqualTo(MIB);
        assertThat(buf.vramOffset()).isEqualTo(offset);
    }

    @Test
    void aPinnedDmabufMrForbidsTheMoveUntilItIsDeregistered()
    {
        final RuleRig rig = RuleRig.connected(pinnedDmabufProfile(), RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.DMABUF_PINNED, buf, 0, MIB, RW);
        final long offset = buf.vramOffset();

        assertErrno(verbsFailure(() -> gpu.move(buf)), "move", Errno.EBUSY);
        assertThat(buf.vramOffset()).isEqualTo(offset);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(MIB);

        mr.close();
        gpu.move(buf);
        assertThat(buf.vramOffset()).isNotEqualTo(offset);
    }

    @Test
    void aPeerMemoryMrForbidsTheMove()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.PEER_MEMORY, buf, 0, 64 * KIB, RW);

        assertErrno(verbsFailure(() -> gpu.move(buf)), "move", Errno.EBUSY);

        mr.close();
        gpu.move(buf);
    }

    @Test
    void aMoveOfAFreedOrForeignBufferIsEinval()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final SimGpu gpu1 = rig.deviceB.host().addGpu("gpu1", VRAM, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(MIB);
        final GpuBuffer foreign = gpu1.allocate(MIB);

        assertErrno(verbsFailure(() -> gpu.move(foreign)), "move", Errno.EINVAL);
        gpu.free(buf);
        assertErrno(verbsFailure(() -> gpu.move(buf)), "move", Errno.EINVAL);
    }

    // ------------------------------------------------------------------ cudaFree under a peer-memory MR

    @Test
    void cudaFreeRevokesAPeerMemoryMrReturnsBar1AndRemoteWritesFailWithRemAccessErr()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final SimPeerMr mr = (SimPeerMr)register(rig, Kind.PEER_MEMORY, buf, 0, MIB, RW);
        final long invalidations = rig.deviceB.counter(SimCounter.KEY_INVALIDATIONS);

        gpu.free(buf);

        assertThat(mr.isRevoked()).isTrue();
        assertThat(mr.isClosed()).isFalse();
        assertThat(mr.bar1MappedBytes()).isZero();
        assertThat(gpu.bar1UsedBytes()).isZero();
        assertThat(gpu.vramUsedBytes()).isZero();
        assertThat(rig.deviceB.counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 1);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, RuleRig.pattern(4096, 1))), buf.gpuVa(), mr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.REM_ACCESS_ERR);

        mr.close();
        assertThat(mr.isClosed()).isTrue();
        assertThat(gpu.bar1UsedBytes()).isZero();
        assertThat(pdB(rig).peerMemoryRegions()).isEmpty();
        assertThat(rig.deviceB.peerMemoryRegion(mr.lkey())).isNull();
    }

    @Test
    void aRevokedPeerMemoryMrFailsRemoteReads()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.PEER_MEMORY, buf, 0, MIB, RW);
        gpu.free(buf);
        final long dst = rig.bufferA(4096);
        final MemoryRegion local = rig.pdA.regMr(dst, 4096, RuleRig.LOCAL);

        rig.qpA.postSend(SendWr.read(1, List.of(new Sge(dst, 4096, local.lkey())), buf.gpuVa(), mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void aRevokedPeerMemoryMrFailsLocalUseWithLocProtErr()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.PEER_MEMORY, buf, 0, MIB, RW);
        final long dst = rig.bufferA(4096);
        final MemoryRegion dstMr = rig.pdA.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        gpu.free(buf);

        rig.qpB.postSend(SendWr.write(1, List.of(new Sge(buf.gpuVa(), 4096, mr.lkey())), dst, dstMr.rkey()));

        assertThat(statuses(rig.pollB())).containsExactly(WcStatus.LOC_PROT_ERR);
    }

    @Test
    void deregistrationReturnsBar1ForEveryKind()
    {
        for (final Kind kind : Kind.values())
        {
            final RuleRig rig = RuleRig.connected(profileFor(kind), RuleRig.ALL_REMOTE);
            final SimGpu gpu = gpuB(rig);
            final GpuBuffer buf = gpu.allocate(MIB);
            final MemoryRegion mr = register(rig, kind, buf, 0, 3 * GPU_PAGE, RW);
            final long deregs = rig.deviceB.counter(SimCounter.MR_DEREGISTRATIONS);
            final long live = rig.deviceB.counter(SimCounter.MR_LIVE);
            assertThat(gpu.bar1UsedBytes()).as(kind.name()).isEqualTo(3 * GPU_PAGE);

            mr.close();
            mr.close();

            assertThat(gpu.bar1UsedBytes()).as(kind.name()).isZero();
            assertThat(pdB(rig).peerMemoryRegions()).as(kind.name()).isEmpty();
            assertThat(rig.deviceB.peerMemoryRegion(mr.lkey())).as(kind.name()).isNull();
            assertThat(rig.deviceB.counter(SimCounter.MR_DEREGISTRATIONS)).as(kind.name()).isEqualTo(deregs + 1);
            assertThat(rig.deviceB.counter(SimCounter.MR_LIVE)).as(kind.name()).isEqualTo(live - 1);
        }
    }

    @Test
    void closingThePdDeregistersItsGpuMrs()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion peer = register(rig, Kind.PEER_MEMORY, buf, 0, GPU_PAGE, RW);
        final MemoryRegion dmabuf = register(rig, Kind.DMABUF_DYNAMIC, buf, GPU_PAGE, GPU_PAGE, RW);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(2 * GPU_PAGE);

        rig.qpB.close();
        rig.pdB.close();

        assertThat(peer.isClosed()).isTrue();
        assertThat(dmabuf.isClosed()).isTrue();
        assertThat(gpu.bar1UsedBytes()).isZero();
    }

    // ------------------------------------------------------------------ GPU allocation and dma-buf export

    @Test
    void cudaMallocRoundsTo64KibAndRunsOutWithEnomem()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = rig.deviceB.host().addGpu("gpu0", MIB, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);

        final GpuBuffer one = gpu.allocate(1);
        final GpuBuffer two = gpu.allocate(GPU_PAGE + 1);

        assertThat(one.sizeBytes()).isEqualTo(GPU_PAGE);
        assertThat(two.sizeBytes()).isEqualTo(2 * GPU_PAGE);
        assertThat(two.gpuVa()).isGreaterThanOrEqualTo(one.gpuVa() + one.sizeBytes());
        assertThat(gpu.vramUsedBytes()).isEqualTo(3 * GPU_PAGE);
        assertThat(rig.deviceB.host().gpuBufferAt(two.gpuVa() + GPU_PAGE + 5)).isSameAs(two);
        assertThat(gpu.buffers()).containsExactly(one, two);

        final VerbsException e = verbsFailure(() -> gpu.allocate(MIB - 2 * GPU_PAGE));
        assertErrno(e, "cudaMalloc", Errno.ENOMEM);
        assertThat(gpu.vramUsedBytes()).isEqualTo(3 * GPU_PAGE);
        assertErrno(verbsFailure(() -> gpu.allocate(0)), "cudaMalloc", Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu.allocate(-1)), "cudaMalloc", Errno.EINVAL);

        final GpuBuffer rest = gpu.allocate(MIB - 3 * GPU_PAGE);
        assertThat(gpu.vramUsedBytes()).isEqualTo(MIB);
        gpu.free(one);
        gpu.free(rest);
        assertThat(gpu.vramUsedBytes()).isEqualTo(2 * GPU_PAGE);
        // 14 pages are free, but split around the buffer still allocated: no range of 14.
        assertErrno(verbsFailure(() -> gpu.allocate(MIB - 2 * GPU_PAGE)), "cudaMalloc", Errno.ENOMEM);
        assertThat(gpu.allocate(MIB - 3 * GPU_PAGE).sizeBytes()).isEqualTo(MIB - 3 * GPU_PAGE);
        assertThat(gpu.allocate(GPU_PAGE).sizeBytes()).isEqualTo(GPU_PAGE);
        assertThat(gpu.vramUsedBytes()).isEqualTo(MIB);
    }

    @Test
    void cudaFreeOfAFreedOrForeignBufferIsEinval()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final SimGpu gpu1 = rig.deviceB.host().addGpu("gpu1", VRAM, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(MIB);

        assertErrno(verbsFailure(() -> gpu1.free(buf)), "cudaFree", Errno.EINVAL);
        gpu.free(buf);
        assertErrno(verbsFailure(() -> gpu.free(buf)), "cudaFree", Errno.EINVAL);
        assertThat(gpu.vramUsedBytes()).isZero();
    }

    @Test
    void exportDmabufNeeds64KibAlignedRangesInsideALiveBufferOfThatGpu()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final SimGpu gpu1 = rig.deviceB.host().addGpu("gpu1", VRAM, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(MIB);
        final GpuBuffer freed = gpu.allocate(MIB);
        gpu.free(freed);
        final String verb = "cuMemGetHandleForAddressRange";

        assertErrno(verbsFailure(() -> gpu.exportDmabuf(buf, 4 * KIB, GPU_PAGE)), verb, Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu.exportDmabuf(buf, 0, GPU_PAGE + 4 * KIB)), verb, Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu.exportDmabuf(buf, 0, 0)), verb, Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu.exportDmabuf(buf, -GPU_PAGE, GPU_PAGE)), verb, Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu.exportDmabuf(buf, MIB - GPU_PAGE, 2 * GPU_PAGE)), verb, Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu.exportDmabuf(buf, MIB, GPU_PAGE)), verb, Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu.exportDmabuf(freed, 0, GPU_PAGE)), verb, Errno.EINVAL);
        assertErrno(verbsFailure(() -> gpu1.exportDmabuf(buf, 0, GPU_PAGE)), verb, Errno.EINVAL);

        final int fd = gpu.exportDmabuf(buf, MIB - GPU_PAGE, GPU_PAGE);
        final SimDmabuf d = rig.deviceB.host().dmabuf(fd);
        assertThat(d.buffer()).isSameAs(buf);
        assertThat(d.offset()).isEqualTo(MIB - GPU_PAGE);
        assertThat(d.sizeBytes()).isEqualTo(GPU_PAGE);
        assertThat(gpu.exportDmabuf(buf, 0, MIB)).isNotEqualTo(fd);
    }

    @Test
    void closeDmabufOfAnUnknownOrForeignFdFails()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final SimGpu gpu1 = rig.deviceB.host().addGpu("gpu1", VRAM, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final int fd = gpu.exportDmabuf(gpu.allocate(MIB), 0, MIB);

        assertThat(verbsFailure(() -> gpu1.closeDmabuf(fd)).verb()).isEqualTo("close");
        gpu.closeDmabuf(fd);
        assertThat(rig.deviceB.host().dmabuf(fd)).isNull();
        assertThat(verbsFailure(() -> gpu.closeDmabuf(fd)).verb()).isEqualTo("close");
    }

    @Test
    void closeDmabufOfAnFdThatIsNotOpenIsEbadf()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final int fd = gpu.exportDmabuf(gpu.allocate(MIB), 0, MIB);
        gpu.closeDmabuf(fd);

        assertErrno(verbsFailure(() -> gpu.closeDmabuf(fd)), "close", Errno.EBADF);
    }

    @Test
    void theVramOfAFreedBufferComesBackOnlyAfterTheLastImporterAndFdAreGone()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);
        final MemoryRegion one = rig.pdB.regDmabufMr(0, MIB, 0x4000_0000L, fd, RW);
        final MemoryRegion two = rig.pdB.regDmabufMr(0, GPU_PAGE, 0x5000_0000L, fd, RW);

        gpu.free(buf);
        assertThat(gpu.buffers()).isEmpty();
        assertThat(gpu.vramUsedBytes()).as("the dma-buf holds the VRAM").isEqualTo(MIB);

        // The importers still reach the memory.
        final byte[] data = RuleRig.pattern(8 * KIB, 11);
        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), 0x4000_0000L + 4 * KIB, one.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        final byte[] landed = new byte[data.length];
        gpu.memory().read(buf.vramOffset() + 4 * KIB, landed, 0, landed.length);
        assertSameBytes("bytes", landed, data);

        gpu.closeDmabuf(fd);
        assertThat(gpu.vramUsedBytes()).as("MRs keep their own reference").isEqualTo(MIB);
        one.close();
        assertThat(gpu.vramUsedBytes()).isEqualTo(MIB);
        two.close();
        assertThat(gpu.vramUsedBytes()).isZero();
        assertThat(gpu.allocate(VRAM).sizeBytes()).isEqualTo(VRAM);
    }

    @Test
    void theVramOfAFreedBufferComesBackWhenTheFdIsClosedAfterTheLastImporter()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);
        final MemoryRegion mr = rig.pdB.regDmabufMr(0, MIB, 0, fd, RW);

        mr.close();
        gpu.free(buf);
        assertThat(gpu.vramUsedBytes()).isEqualTo(MIB);
        gpu.closeDmabuf(fd);
        assertThat(gpu.vramUsedBytes()).isZero();
    }

    @Test
    void aLiveBufferKeepsItsVramAfterItsDmabufsAreGoneUntilCudaFree()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final int fd = gpu.exportDmabuf(buf, 0, MIB);
        final MemoryRegion mr = rig.pdB.regDmabufMr(0, MIB, 0, fd, RW);

        gpu.closeDmabuf(fd);
        mr.close();
        assertThat(gpu.vramUsedBytes()).isEqualTo(MIB);
        gpu.free(buf);
        assertThat(gpu.vramUsedBytes()).isZero();
    }

    // ------------------------------------------------------------------ data to and from VRAM

    @ParameterizedTest
    @EnumSource(Kind.class)
    void remoteWriteAndReadMoveTheBytesToAndFromVram(final Kind kind)
    {
        final RuleRig rig = RuleRig.connected(profileFor(kind), RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final long at = 192 * KIB;
        final MemoryRegion mr = register(rig, kind, buf, at, 256 * KIB, RW);
        final byte[] data = RuleRig.pattern(100_000, 21);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), remoteAddr(kind, buf, at + 1000), mr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", gpu.read(buf.gpuVa() + at + 1000, data.length), data);
        assertSameBytes("bytes before the target untouched", gpu.read(buf.gpuVa() + at, 1000), new byte[1000]);

        final byte[] onGpu = RuleRig.pattern(70_000, 99);
        gpu.write(buf.gpuVa() + at + 50_000, onGpu);
        final long dst = rig.bufferA(onGpu.length);
        final MemoryRegion local = rig.pdA.regMr(dst, onGpu.length, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.read(2, List.of(new Sge(dst, onGpu.length, local.lkey())), remoteAddr(kind, buf,
            at + 50_000), mr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", rig.ctxA.memory().read(dst, onGpu.length), onGpu);
    }

    /** Registers 5000 bytes from byte 0x321 of a GPU page and writes all of them from a. */
    private static void unalignedRegistrationTakesWholePages(final Kind kind)
    {
        final RuleRig rig = RuleRig.connected(profileFor(kind), RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final long at = GPU_PAGE + 0x321;
        final MemoryRegion mr = register(rig, kind, buf, at, 5000, RW);
        assertThat(mr.lengthBytes()).isEqualTo(5000);
        assertThat(gpu.bar1UsedBytes()).isEqualTo(GPU_PAGE);
        final byte[] data = RuleRig.pattern(5000, 2);

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, data)), remoteAddr(kind, buf, at), mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", gpu.read(buf.gpuVa() + at, data.length), data);
        // One byte past the MR is out of bounds.
        rig.qpA.postSend(SendWr.write(2, List.of(sourceA(rig, new byte[1])), remoteAddr(kind, buf, at + 5000),
            mr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void aDynamicDmabufMrNeedsNoPageAlignedStartOrLength()
    {
        unalignedRegistrationTakesWholePages(Kind.DMABUF_DYNAMIC);
    }

    @Test
    void aPinnedDmabufMrNeedsNoPageAlignedStartOrLength()
    {
        unalignedRegistrationTakesWholePages(Kind.DMABUF_PINNED);
    }

    @Test
    void aPeerMemoryMrNeedsNoPageAlignedStartOrLength()
    {
        unalignedRegistrationTakesWholePages(Kind.PEER_MEMORY);
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void gpuMemoryServesAsLocalSourceAndReadTarget(final Kind kind)
    {
        final RuleRig rig = RuleRig.connected(profileFor(kind), RuleRig.ALL_REMOTE);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, kind, buf, 0, MIB, RW);
        final byte[] onGpu = RuleRig.pattern(40_000, 5);
        gpu.write(buf.gpuVa() + 8 * KIB, onGpu);
        final long hostA = rig.bufferA(64 * KIB);
        final MemoryRegion hostMr = rig.pdA.regMr(hostA, 64 * KIB, RuleRig.REMOTE_ALL);

        rig.qpB.postSend(SendWr.write(1, List.of(new Sge(remoteAddr(kind, buf, 8 * KIB), onGpu.length, mr.lkey())),
            hostA, hostMr.rkey()));
        assertThat(statuses(rig.pollB())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", rig.ctxA.memory().read(hostA, onGpu.length), onGpu);

        final byte[] onHost = RuleRig.pattern(30_000, 8);
        rig.ctxA.memory().write(hostA + 1, onHost);
        rig.qpB.postSend(SendWr.read(2, List.of(new Sge(remoteAddr(kind, buf, 500 * KIB), onHost.length, mr.lkey())),
            hostA + 1, hostMr.rkey()));
        assertThat(statuses(rig.pollB())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", gpu.read(buf.gpuVa() + 500 * KIB, onHost.length), onHost);
    }

    @Test
    void gpuToGpuAcrossHostsAndSendIntoAGpuReceiveBuffer()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpuA = rig.deviceA.host().addGpu("gpuA", VRAM, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer src = gpuA.allocate(MIB);
        final GpuBuffer dst = gpu.allocate(MIB);
        final int fdA = gpuA.exportDmabuf(src, 0, MIB);
        final MemoryRegion srcMr = rig.pdA.regDmabufMr(0, MIB, 0x1_0000_0000L, fdA, RW);
        final MemoryRegion dstMr = register(rig, Kind.DMABUF_DYNAMIC, dst, 0, MIB, RW);
        final byte[] data = RuleRig.pattern(300_000, 13);
        gpuA.write(src.gpuVa(), data);

        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(0x1_0000_0000L, data.length, srcMr.lkey())),
            remoteAddr(Kind.DMABUF_DYNAMIC, dst, 0), dstMr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertSameBytes("bytes", gpu.read(dst.gpuVa(), data.length), data);

        final byte[] msg = RuleRig.pattern(5000, 41);
        rig.qpB.postRecv(RecvWr.of(9, new Sge(remoteAddr(Kind.DMABUF_DYNAMIC, dst, 600 * KIB), 8192,
            dstMr.lkey())));
        rig.qpA.postSend(SendWr.send(2, List.of(sourceA(rig, msg))));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.pollB()).singleElement().satisfies(wc -> {
            assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
            assertThat(wc.byteLen()).isEqualTo(msg.length);
        });
        assertSameBytes("bytes", gpu.read(dst.gpuVa() + 600 * KIB, msg.length), msg);
    }

    @Test
    void atomicsWorkOnGpuMemory()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.DMABUF_DYNAMIC, buf, 0, MIB, RuleRig.REMOTE_ALL);
        gpu.write(buf.gpuVa() + 64, new byte[] {5, 0, 0, 0, 0, 0, 0, 0});
        final long result = rig.bufferA(8);
        final MemoryRegion resMr = rig.pdA.regMr(result, 8, RuleRig.LOCAL);

        rig.qpA.postSend(SendWr.fetchAndAdd(1, new Sge(result, 8, resMr.lkey()),
            remoteAddr(Kind.DMABUF_DYNAMIC, buf, 64), mr.rkey(), 37));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.ctxA.memory().readLong(result)).isEqualTo(5);
        assertThat(gpu.read(buf.gpuVa() + 64, 8)).isEqualTo(new byte[] {42, 0, 0, 0, 0, 0, 0, 0});
    }

    @Test
    void aGpuMrWithoutRemoteWriteRefusesRemoteWrites()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.DMABUF_DYNAMIC, buf, 0, MIB, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_READ));

        rig.qpA.postSend(SendWr.write(1, List.of(sourceA(rig, RuleRig.pattern(4096, 1))),
            remoteAddr(Kind.DMABUF_DYNAMIC, buf, 0), mr.rkey()));

        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertSameBytes("bytes", gpu.read(buf.gpuVa(), 4096), new byte[4096]);
    }

    @Test
    void copiesBetweenGpuAndHostMoveTheBytes()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final long host = rig.bufferB(64 * KIB);
        final byte[] data = RuleRig.pattern(50_000, 17);
        rig.ctxB.memory().write(host, data);

        gpu.copyFromHost(rig.processB(), host, buf.gpuVa() + 3, data.length);
        assertSameBytes("bytes", gpu.read(buf.gpuVa() + 3, data.length), data);
        gpu.copyToHost(buf.gpuVa() + 3, rig.processB(), host + 7, data.length);
        assertSameBytes("bytes", rig.ctxB.memory().read(host + 7, data.length), data);

        assertErrno(verbsFailure(() -> gpu.copyToHost(buf.gpuVa() + MIB - 10, rig.processB(), host, 20)),
            "read", Errno.EFAULT);
        assertErrno(verbsFailure(() -> gpu.copyFromHost(rig.processB(), host, buf.gpuVa() + MIB - 10, 20)),
            "cudaMemcpy", Errno.EFAULT);
    }

    // ------------------------------------------------------------------ relaxed writes in flight against the exporter

    /** An unsignaled 64 KiB relaxed WRITE into the MR, leaving chunks in flight on b's device. */
    private static byte[] relaxedWriteInFlight(final RuleRig rig, final MemoryRegion mr, final long remoteAddr)
    {
        final byte[] data = RuleRig.pattern(64 * KIB, 31);
        rig.qpA.postSend(new SendWr(1, WrOpcode.RDMA_WRITE, List.of(sourceA(rig, data)), Set.of(), remoteAddr,
            mr.rkey(), 0, 0, 0, 0));
        rig.fabric.progressAll();
        assertThat(rig.deviceB.writeOrdering().inFlight()).as("chunks in flight").isPositive();
        return data;
    }

    /** A signaled WRITE into a host MR of b: its completion drains b's chunks in flight. */
    private static void drainWithASignaledWrite(final RuleRig rig)
    {
        final long scratch = rig.bufferB(4096);
        final MemoryRegion scratchMr = rig.pdB.regMr(scratch, 4096, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(2, List.of(sourceA(rig, new byte[8])), scratch, scratchMr.rkey()));
        assertThat(statuses(rig.pollA())).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.deviceB.writeOrdering().inFlight()).isZero();
    }

    @Test
    void relaxedWritesInFlightLandBeforeTheExporterMovesTheBuffer()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.DMABUF_DYNAMIC, buf, 0, MIB, RW_RO);
        final byte[] data = relaxedWriteInFlight(rig, mr, remoteAddr(Kind.DMABUF_DYNAMIC, buf, 0));

        gpu.move(buf);
        drainWithASignaledWrite(rig);

        assertSameBytes("every byte written is in the moved buffer", gpu.read(buf.gpuVa(), data.length), data);
    }

    @Test
    void relaxedWritesInFlightDoNotLandInVramFreedUnderAPeerMemoryMr()
    {
        final RuleRig rig = RuleRig.connected();
        final SimGpu gpu = gpuB(rig);
        final GpuBuffer buf = gpu.allocate(MIB);
        final MemoryRegion mr = register(rig, Kind.PEER_MEMORY, buf, 0, MIB, RW_RO);
        relaxedWriteInFlight(rig, mr, remoteAddr(Kind.PEER_MEMORY, buf, 0));

        gpu.free(buf);
        final GpuBuffer next = gpu.allocate(MIB);
        gpu.write(next.gpuVa(), new byte[64 * KIB]);
        drainWithASignaledWrite(rig);

        assertSameBytes("the next owner of the VRAM keeps its bytes", gpu.read(next.gpuVa(), 64 * KIB),
            new byte[64 * KIB]);
    }
}
