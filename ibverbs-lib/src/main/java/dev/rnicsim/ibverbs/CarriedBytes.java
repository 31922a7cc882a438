package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.Sge;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Small messages travel with their bytes, so the server moves none of them with {@code process_vm_readv/writev}
 * for a small SEND: the library puts the bytes of a SEND or RDMA WRITE of up to {@link #MAX_BYTES} in its
 * doorbell ({@code WIRE_SEND_CARRIED}, read by the doorbell's own {@code writev(2)} from the send buffers at
 * post, as a NIC may read them any time before the completion), and the server hands the bytes of a SEND the model
 * delivered to the receiving process in a {@code PLACE} message queued just before the receive's completion; that
 * process's library writes them into the receive buffer before the completion can be polled ({@code carry.c}).
 * The model still decides first: the requests go to it with the program's own SGEs, so keys, ranges and rights are
 * checked as for any request, and bytes are placed only for a receive the model completed with success.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class CarriedBytes
{
    /** {@code CARRY_MAX_BYTES} of the library: the longest request whose bytes travel in its doorbell. */
    static final int MAX_BYTES = 512;
    /** Most ranges of one PLACE message ({@code CARRY_MAX_SEGS + 1} in the library: a GRH and 32 SGEs). */
    static final int MAX_RANGES = 33;

    private CarriedBytes()
    {
    }

    /**
     * Whether the bytes a doorbell carried are the bytes the request's SGEs name: the library read them at each
     * SGE's address, which is the process's own address only when the MR maps its iova to itself (an MR registered
     * at an iova of its choosing does not; its bytes are then read by the server).
     *
     * @param sgl     the SGEs as the program gave them (iovas).
     * @param local   the same SGEs translated through their MRs to the process's addresses.
     * @param carried the bytes that came with the request.
     * @return true when the carried bytes can stand for a gather of {@code local}.
     */
    static boolean usable(final List<Sge> sgl, final List<ProcessMemory.Range> local, final byte[] carried)
    {
        if (carried.length > MAX_BYTES)
        {
            return false; // not a doorbell of this library's: the server reads the process's memory itself
        }
        long total = 0;
        for (int i = 0; i < sgl.size(); i++)
        {
            if (local.get(i).addr() != sgl.get(i).addr())
            {
                return false;
            }
            total += local.get(i).lengthBytes();
        }
        return total == carried.length;
    }

    /**
     * Queues a PLACE message for the receiving process: the bytes of the SEND a receive took (after a UD
     * receive's GRH), to be written by its library before the completion queued next.
     *
     * @param to          the receiving process.
     * @param recvWrId    the receive's wr_id (the program's), for strict mode's report of an unmapped buffer.
     * @param dst         the receive buffer, as addresses of that process.
     * @param grh         the GRH to write first (a UD receive), or null.
     * @param payload     the SEND's bytes.
     * @param lengthBytes how many of them the receive holds.
     * @return false when the placement has too many ranges for one message (the server writes the bytes itself).
     */
    static boolean place(final Session to, final long recvWrId, final List<ProcessMemory.Range> dst, final byte[] grh,
        final byte[] payload, final long lengthBytes)
    {
        final long len = Math.min(lengthBytes, payload.length);
        final List<ProcessMemory.Range> ranges = new ArrayList<>(4);
        List<ProcessMemory.Range> rest = dst;
        int grhPlaced = 0;
        if (grh != null)
        {
            final List<ProcessMemory.Range> head = ProcessMemory.clip(dst, grh.length);
            grhPlaced = (int) ProcessMemory.total(head);
            ranges.addAll(head);
            rest = ProcessMemory.skip(dst, grh.length);
        }
        final List<ProcessMemory.Range> body = ProcessMemory.clip(rest, len);
        final int payloadPlaced = (int) ProcessMemory.total(body);
        ranges.addAll(body);
        if (ranges.size() > MAX_RANGES)
        {
            return false;
        }
        final int bytes = grhPlaced + payloadPlaced;
        final int msgLen = (Wire.HEADER_BYTES + Wire.PLACE_BYTES + ranges.size() * Wire.RANGE_BYTES + bytes + 7) & ~7;
        final ByteBuffer b = to.reserve(msgLen);
        final int start = b.position();
        b.putInt(msgLen).putShort((short) Wire.OP_PLACE).putShort((short) 0).putInt(0).putInt(0);
        b.putLong(recvWrId).putInt(ranges.size()).putInt(0);
        for (final ProcessMemory.Range r : ranges)
        {
            b.putLong(r.addr()).putLong(r.lengthBytes());
        }
        if (grh != null)
        {
            b.put(grh, 0, grhPlaced);
        }
        b.put(payload, 0, payloadPlaced);
        while (b.position() - start < msgLen)
        {
            b.put((byte) 0);
        }
        return true;
    }
}
