package dev.rnicsim.dma;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.MKey;
import java.util.List;

/**
 * The page faults of a message that moves packet by packet over on-demand-paging memory (ODP MRs, and dma-buf MRs,
 * which are ODP MRs on mlx5). Before each packet is placed the device walks the blocks that packet touches on both
 * sides; a block with no translation (or a read-only one, for a write) is a page fault, resolved by the side's
 * {@link PageFaultHandler} for the rest of the data segment, not just the packet (mlx5 {@code
 * pagefault_single_data_segment}; for a responder RDMA fault {@code mlx5_ib_mr_rdma_pfault_handler} maps the packet's
 * pages, then prefetches the rest of the RDMA range). When the rest cannot be mapped (a page of it has no VMA, or is
 * read-only for a writable MR), the fault fails and so does the packet that took it; the packets before it stay
 * placed. (mlx5 would place that packet and fail at the packet that needs the missing page; the model fails one
 * packet earlier at most.) A fault on the requester's own memory stalls the requester until it is resolved, then the
 * packet goes on; a fault at the responder is answered with an RNR NAK ({@link DmaStatus#RNR_NAK}) and nothing of
 * the packet is placed: the requester waits and sends it again (IBA 9.7.5.2.8, RNR NAK; the driver resolves the
 * fault meanwhile). So a page invalidated between two packets of a message (munmap, migration, reclaim, a dma-buf's
 * {@code move_notify}) faults again at the next packet that touches it, as on hardware.
 *
 * <p>Not thread safe: one per {@link DmaEngine}.
 */
final class PacketFaults
{
    /** IBV_ODP_SUPPORT_* bits (libibverbs/verbs.h) naming what faulted, as {@link DmaEngine} names them. */
    private static final int ODP_SEND = 0x1;
    private static final int ODP_RECV = 0x2;
    private static final int ODP_WRITE = 0x4;
    private static final int ODP_READ = 0x8;
    private static final int ODP_ATOMIC = 0x10;

    private final DmaEngine engine;

    PacketFaults(final DmaEngine engine)
    {
        this.engine = engine;
    }

    /**
     * The device page faults of the next packet of an open message ({@code bytes} from {@link DmaMessage#offset()}),
     * after its keys were re-checked. When nothing faults (or after every requester fault was resolved) the walks
     * stand on translations that are current: a walk in the middle of an ODP page is translated again.
     *
     * @return null when the packet may be placed now; {@link DmaResult#rnrNak} when the responder faulted; else the
     * failure of a fault the driver could not resolve.
     */
    DmaResult beforePacket(final DmaMessage m, final long bytes)
    {
        if (!FaultPass.faultsPossible(m.local, m.remote))
        {
            return null;
        }
        final boolean atomic = m.kind == PacketPath.MessageKind.ATOMIC;
        final long offset = atomic ? 0 : m.offset;
        final FaultPass.Side local = m.local == null || m.inline != null && !atomic ? null : new FaultPass.Side(
            m.local, m.localPd, m.sgl, m.kind == PacketPath.MessageKind.READ || atomic ? AccessFlags.LOCAL_WRITE : 0,
            false, true, switch (m.kind)
            {
                case READ -> ODP_READ;
                case ATOMIC -> ODP_ATOMIC;
                default -> ODP_SEND;
            });
        final FaultPass.Side remote = atomic ? null : switch (m.kind)
        {
            case WRITE -> new FaultPass.Side(m.remote, m.remotePd, m.remoteSgl, AccessFlags.REMOTE_WRITE, true, true,
                ODP_WRITE);
            case READ -> new FaultPass.Side(m.remote, m.remotePd, m.remoteSgl, AccessFlags.REMOTE_READ, true, true,
                ODP_READ);
            default -> new FaultPass.Side(m.remote, m.remotePd, m.remoteSgl, AccessFlags.LOCAL_WRITE, true, true,
                ODP_RECV);
        };
        for (int pass = 0; pass < FaultPass.MAX_FAULT_PASSES; pass++)
        {
            boolean faulted = false;
            String remoteFault = null;
            // The requester gathers before the packet goes out; a READ's responder reads before the response lands.
            final FaultPass.Side[] order = m.kind == PacketPath.MessageKind.READ ? new FaultPass.Side[] {remote, local}
                : new FaultPass.Side[] {local, remote};
            for (final FaultPass.Side side : order)
            {
                if (side == null || side.port().faults() == null || !side.port().tables().hasOnDemand())
                {
                    continue;
                }
                final boolean write = (side.access() & (AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
                    | AccessFlags.REMOTE_ATOMIC)) != 0;
                final AdapterTables tables = side.port().tables();
                final List<Segment> segments = side.segments();
                long at = 0;
                for (int i = 0; i < segments.size() && at < offset + bytes; i++)
                {
                    final Segment s = segments.get(i);
                    final long from = Math.max(offset, at);
                    final long to = Math.min(offset + bytes, at + s.lengthBytes());
                    at += s.lengthBytes();
                    if (from >= to || !tables.isOnDemand(s.key()))
                    {
                        continue;
                    }
                    final long start = s.addr() + (from - (at - s.lengthBytes()));
                    final long missing = tables.firstUnmapped(s.key(), start, to - from, write);
                    if (missing < 0)
                    {
                        continue;
                    }
                    faulted = true;
                    // The driver maps the rest of the data segment, not only this packet's part.
                    final long left = s.addr() + s.lengthBytes() - missing;
                    if (side.remote())
                    {
                        engine.remotePageFaults++;
                    }
                    else
                    {
                        engine.pageFaults++;
                    }
                    final String why = side.port().faults().resolve(s.key(), missing, left, write, side.remote(),
                        side.odpOperation());
                    final String what = (side.remote() ? "responder" : "requester") + " page fault on ODP key "
                        + MKey.toHex(s.key()) + " at 0x" + Long.toHexString(missing) + "+" + left
                        + " (a packet at offset " + offset + ")";
                    if (why != null)
                    {
                        return FaultPass.failedFault(side, i, what + " failed: " + why);
                    }
                    if (side.remote() && remoteFault == null)
                    {
                        remoteFault = what + " (" + (write ? "write" : "read") + "): RNR NAK while it is handled";
                    }
                }
            }
            if (remoteFault != null)
            {
                return DmaResult.rnrNak(remoteFault);
            }
            if (!faulted)
            {
                break;
            }
        }
        if (m.src != null)
        {
            m.src.refault();
        }
        if (m.dst != null)
        {
            m.dst.refault();
        }
        return null;
    }
}
