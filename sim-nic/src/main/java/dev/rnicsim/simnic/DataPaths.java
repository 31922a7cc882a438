package dev.rnicsim.simnic;

import dev.rnicsim.dma.Segment;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.List;

/**
 * Which memory a work request's data crosses: its scatter/gather lists as DMA segments, the GPUs behind its keys,
 * and whether the placing device applies relaxed ordering.
 */
final class DataPaths
{
    private DataPaths()
    {
    }

    static List<Segment> segments(final SimDevice owner, final List<Sge> sgl)
    {
        final List<Segment> out = new ArrayList<>(sgl.size());
        for (final Sge s : sgl)
        {
            if (owner.isNullMrKey(s.lkey()))
            {
                SimNullMr.segments(owner, s, out);
                continue;
            }
            out.add(new Segment(owner.keyAddress(s.lkey(), s.addr()), s.lengthBytes(), s.lkey()));
        }
        return out;
    }

    /**
     * True when the device placing the data applies relaxed ordering to it: the responder for WRITE and SEND (the
     * receive buffer's MR), the requester for the data of a READ response; reads of a responder MR count with
     * {@link ProviderRule#RELAXED_ORDERING_READ}.
     */
    static boolean relaxedPlacement(final SimQp qp, final SendWr wr, final SimQp peer)
    {
        return switch (wr.opcode())
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> peer.device.relaxedWrites(wr.rkey());
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> peer.recvQueue.peekFirst() != null
                && !peer.recvQueue.peekFirst().sgList().isEmpty()
                && peer.device.relaxedWrites(peer.recvQueue.peekFirst().sgList().get(0).lkey());
            case RDMA_READ -> !wr.sgList().isEmpty() && qp.device.relaxedWrites(wr.sgList().get(0).lkey())
                || peer.device.profile().follows(ProviderRule.RELAXED_ORDERING_READ)
                && peer.device.relaxedWrites(wr.rkey());
            default -> false;
        };
    }

    /**
     * The GPUs whose memory the work request reads or writes: its gather list's MRs, the remote MR of a WRITE, READ
     * or atomic, and the receive buffers a SEND or WRITE with immediate consumes.
     */
    static java.util.List<SimGpu> gpusTouched(final SimQp qp, final SendWr wr, final SimQp peer,
        final boolean needsRecv)
    {
        if (!qp.device.hasPeerMemory() && !peer.device.hasPeerMemory())
        {
            return java.util.List.of();
        }
        final java.util.List<SimGpu> gpus = new java.util.ArrayList<>(2);
        for (final Sge s : wr.sgList())
        {
            addGpu(gpus, gpuBehind(qp.device, s.lkey()));
        }
        if (wr.opcode().isRdma() || wr.opcode() == WrOpcode.ATOMIC_CMP_AND_SWP
            || wr.opcode() == WrOpcode.ATOMIC_FETCH_AND_ADD)
        {
            addGpu(gpus, gpuBehind(peer.device, wr.rkey()));
        }
        if (needsRecv && wr.opcode() != WrOpcode.RDMA_WRITE_WITH_IMM && peer.recvQueue.peekFirst() != null)
        {
            for (final Sge s : peer.recvQueue.peekFirst().sgList())
            {
                addGpu(gpus, gpuBehind(peer.device, s.lkey()));
            }
        }
        return gpus;
    }

    static void addGpu(final java.util.List<SimGpu> gpus, final SimGpu gpu)
    {
        if (gpu != null && !gpus.contains(gpu))
        {
            gpus.add(gpu);
        }
    }

    /** The GPU whose memory an lkey or rkey of {@code owner} reaches, or null for host memory. */
    static SimGpu gpuBehind(final SimDevice owner, final int key)
    {
        final SimPeerMr mr = owner.peerMemoryRegion(key);
        return mr == null ? null : mr.gpu();
    }
}
