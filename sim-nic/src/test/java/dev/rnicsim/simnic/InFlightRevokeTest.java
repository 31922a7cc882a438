package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A peer-memory MR revoked (cudaFree: the peer-memory client's invalidation callback zaps its MTT entries) while an
 * RDMA message to or from it is in flight. The revocation is a key change: the next packet checks the key again,
 * finds no translation and fails as the device fails an access through a revoked mkey (mlx5r_umr_revoke_mr): the
 * requester completes with REM_ACCESS_ERR for the rkey, LOC_PROT_ERR for its own lkey; the packets before the
 * revocation stay placed and no byte after it reaches the freed VRAM. A dma-buf move under a dynamic MR, by contrast,
 * is a page fault the next packet resolves: the message completes in the new VRAM. A SEND into a receive buffer of a
 * revoked MR fails as one into a deregistered buffer: REM_OP_ERR at the requester, LOC_PROT_ERR at the responder.
 */
class InFlightRevokeTest
{
    private static final int KIB = 1024;
    private static final int MIB = 1024 * KIB;
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int PLACED = 4;
    private static final int BYTES = MIB;
    private static final Set<Access> RW = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);

    /** A GPU on b with a buffer of {@code bytes} and a peer-memory MR over it. */
    private record Gpu(RuleRig rig, SimGpu gpu, GpuBuffer buf, SimPeerMr mr, long vramOffset)
    {
        /** On connectx5 with the given page_size_cap (0: the profile's own). */
        static Gpu of(final int bytes, final long pageSizeCap)
        {
            final DeviceProfile cx5 = DeviceProfiles.connectx5();
            final RuleRig rig = RuleRig.connected(pageSizeCap == 0 ? cx5 : cx5.withAttributes(cx5.attributes()
                .toBuilder().pageSizeCap(pageSizeCap).build()), RuleRig.ALL_REMOTE);
            final SimGpu gpu = rig.deviceB.host().addGpu("gpu0", 64L * MIB, SimGpu.DEFAULT_BAR1_BYTES,
                GpuTopology.PIX);
            final GpuBuffer buf = gpu.allocate(bytes);
            rig.deviceB.host().peerMemoryClient(true);
            final SimPeerMr mr = (SimPeerMr)rig.pdB.regMr(buf.gpuVa(), bytes, RW);
            return new Gpu(rig, gpu, buf, mr, buf.vramOffset());
        }

        byte[] vram(final int bytes)
        {
            final byte[] out = new byte[bytes];
            gpu.memory().read(vramOffset, out, 0, bytes);
            return out;
        }

        /** Moves PLACED packets of the message just posted, then frees the buffer under the MR. */
        void revokeAfterSomePackets()
        {
            assertThat(rig.fabric.progress(PLACED)).isEqualTo(PLACED);
            assertThat(((SimQp)rig.qpA).inflight() != null || ((SimQp)rig.qpB).inflight() != null)
                .as("the message is in flight").isTrue();
            gpu.free(buf);
            assertThat(mr.isRevoked()).isTrue();
        }
    }

    private static void assertRevokedDiagnosis(final WorkCompletion wc, final SimPeerMr mr, final String keyKind,
        final int failedAt)
    {
        final WcDiagnosis d = wc.diagnosis();
        assertThat(d).isNotNull();
        assertThat(d.key()).isEqualTo(mr.lkey());
        assertThat(d.check()).as("revoked, not an ODP fault").isEqualTo(WcDiagnosis.Check.REVOKED);
        assertThat(d.summary()).contains(keyKind, "translation was revoked", "peer memory freed (cudaFree",
            "a packet at offset " + failedAt);
        assertThat(d.toString()).contains("fix: free GPU memory only after");
    }

    /**
     * page_size_cap 0: connectx5's own (the whole VRAM buffer in one MTT entry); 64 KiB (and 4 KiB for host buffers): a GPU page per entry, the
     * message enters new pages after the revocation; 4 KiB: every packet enters a new page.
     */
    @ParameterizedTest(name = "page_size_cap 0x{0}")
    @ValueSource(longs = {0, 0x11000, 0x1000})
    void aWriteInFlightToARevokedPeerMemoryMrFailsWithRemAccessErrAndStopsAtTheRevocation(final long pageSizeCap)
    {
        final Gpu g = Gpu.of(BYTES, pageSizeCap);
        final int bytes = BYTES;
        final RuleRig rig = g.rig();
        final long src = rig.bufferA(bytes);
        final byte[] data = RuleRig.pattern(bytes, 3);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, bytes, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, bytes, srcMr.lkey())), g.buf().gpuVa(),
            g.mr().rkey()));

        g.revokeAfterSomePackets();

        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
        assertRevokedDiagnosis(wcs.get(0), g.mr(), "rkey", PLACED * MTU);
        assertThat(g.mr().mttEntries()).as("MTT entries").isEqualTo(pageSizeCap == 0 ? 1 : MIB / Long.highestOneBit(pageSizeCap));
        final byte[] vram = g.vram(bytes);
        assertThat(Arrays.copyOf(vram, PLACED * MTU)).as("the packets before the revocation")
            .isEqualTo(Arrays.copyOf(data, PLACED * MTU));
        assertThat(Arrays.copyOfRange(vram, PLACED * MTU, bytes)).as("no byte after it reaches the freed VRAM")
            .isEqualTo(new byte[bytes - PLACED * MTU]);
    }

    /**
     * page_size_cap 0: connectx5's own (the whole VRAM buffer in one MTT entry); 64 KiB (and 4 KiB for host buffers): a GPU page per entry, the
     * message enters new pages after the revocation; 4 KiB: every packet enters a new page.
     */
    @ParameterizedTest(name = "page_size_cap 0x{0}")
    @ValueSource(longs = {0, 0x11000, 0x1000})
    void aReadInFlightFromARevokedPeerMemoryMrFailsWithRemAccessErr(final long pageSizeCap)
    {
        final Gpu g = Gpu.of(BYTES, pageSizeCap);
        final int bytes = BYTES;
        final RuleRig rig = g.rig();
        g.gpu().write(g.buf().gpuVa(), RuleRig.pattern(bytes, 5));
        final long dst = rig.bufferA(bytes);
        final MemoryRegion dstMr = rig.pdA.regMr(dst, bytes, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.read(1, List.of(new Sge(dst, bytes, dstMr.lkey())), g.buf().gpuVa(),
            g.mr().rkey()));

        g.revokeAfterSomePackets();

        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
        // The first packet was the request: three responses came back before the revocation.
        assertRevokedDiagnosis(wcs.get(0), g.mr(), "rkey", (PLACED - 1) * MTU);
    }

    /**
     * page_size_cap 0: connectx5's own (the whole VRAM buffer in one MTT entry); 64 KiB (and 4 KiB for host buffers): a GPU page per entry, the
     * message enters new pages after the revocation; 4 KiB: every packet enters a new page.
     */
    @ParameterizedTest(name = "page_size_cap 0x{0}")
    @ValueSource(longs = {0, 0x11000, 0x1000})
    void aWriteInFlightFromARevokedPeerMemoryMrFailsWithLocProtErr(final long pageSizeCap)
    {
        final Gpu g = Gpu.of(BYTES, pageSizeCap);
        final int bytes = BYTES;
        final RuleRig rig = g.rig();
        final long dst = rig.bufferA(bytes);
        final MemoryRegion dstMr = rig.pdA.regMr(dst, bytes, RuleRig.REMOTE_ALL);
        rig.qpB.postSend(SendWr.write(1, List.of(new Sge(g.buf().gpuVa(), bytes, g.mr().lkey())), dst,
            dstMr.rkey()));

        g.revokeAfterSomePackets();

        final List<WorkCompletion> wcs = rig.pollB();
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_PROT_ERR);
        assertRevokedDiagnosis(wcs.get(0), g.mr(), "lkey", PLACED * MTU);
    }

    @ParameterizedTest(name = "page_size_cap 0x{0}")
    @ValueSource(longs = {0, 0x11000, 0x1000})
    void aDmabufMoveUnderAWriteInFlightIsAPageFaultAndTheMessageLandsInTheNewVram(final long pageSizeCap)
    {
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final RuleRig rig = RuleRig.connected(pageSizeCap == 0 ? cx5 : cx5.withAttributes(cx5.attributes()
            .toBuilder().pageSizeCap(pageSizeCap).build()), RuleRig.ALL_REMOTE);
        final SimGpu gpu = rig.deviceB.host().addGpu("gpu0", 64L * MIB, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final GpuBuffer buf = gpu.allocate(BYTES);
        final int fd = gpu.exportDmabuf(buf, 0, BYTES);
        final SimPeerMr mr = (SimPeerMr)rig.pdB.regDmabufMr(0, BYTES, 0x4000_0000L, fd, RW);
        final long src = rig.bufferA(BYTES);
        final byte[] data = RuleRig.pattern(BYTES, 11);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, BYTES, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, BYTES, srcMr.lkey())), 0x4000_0000L, mr.rkey()));
        assertThat(rig.fabric.progress(PLACED)).isEqualTo(PLACED);
        final long oldOffset = buf.vramOffset();

        gpu.move(buf);

        assertThat(buf.vramOffset()).isNotEqualTo(oldOffset);
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(mr.pageFaults()).as("the next packet faulted and re-mapped the MR").isEqualTo(1);
        assertThat(Arrays.equals(gpu.read(buf.gpuVa(), BYTES), data)).as("every byte where the buffer lives now")
            .isTrue();
    }

    @Test
    void aSendInFlightIntoAReceiveBufferOfARevokedPeerMemoryMrFailsWithRemOpErrAndLocProtErr()
    {
        final Gpu g = Gpu.of(BYTES, 0x1000);
        final RuleRig rig = g.rig();
        rig.qpB.postRecv(List.of(RecvWr.of(7, new Sge(g.buf().gpuVa(), BYTES, g.mr().lkey()))));
        final long src = rig.bufferA(BYTES);
        final MemoryRegion srcMr = rig.pdA.regMr(src, BYTES, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(1, List.of(new Sge(src, BYTES, srcMr.lkey()))));

        g.revokeAfterSomePackets();

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_OP_ERR);
        final List<WorkCompletion> recv = rig.pollB();
        assertThat(recv).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_PROT_ERR);
        assertRevokedDiagnosis(recv.get(0), g.mr(), "lkey", PLACED * MTU);
    }
}
