package dev.rnicsim.dma;

import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.ResolvedFrames;

/**
 * The copy of a later packet of an RDMA WRITE from memory that streams ({@link DmaMessage#streams}: both sides'
 * checks of the first packet stand, no observer): what {@link Placement#copy(Walk, Walk, long, boolean)} does, with
 * each run's bytes found through the frames of both sides found once for the message ({@link PreparedFrames})
 * instead of through the hosts' frame tables per packet. The walks still move as they do there (each MTT entry
 * fetched through the translation cache as a packet enters its page, counted), and a run whose frames are not the ones
 * found, or whose memory dropped a frame's bytes since, is copied by {@link PhysicalMemory#copy} as before: the
 * same bytes, checks, counts and errors.
 *
 * <p>A message of one packet finds no frames (the finding would cost what it saves). The frames found for the last
 * message serve the next one over the same keys and ranges while nothing changed on either side (the same buffers
 * written again, as a bandwidth test does).
 *
 * <p>Not thread safe: one per {@link DmaEngine}.
 */
final class StreamedCopy
{
    private final DmaEngine engine;
    private final Placement placement;
    /** The frames found for the last message's source and destination, kept for the next one. */
    private PreparedFrames lastSource;
    private PreparedFrames lastTarget;

    StreamedCopy(final DmaEngine engine, final Placement placement)
    {
        this.engine = engine;
        this.placement = placement;
    }

    /**
     * Moves the next {@code bytes} of a streaming WRITE.
     *
     * @param m       the message.
     * @param bytes   the packet's payload.
     * @param relaxed what {@link Placement#relaxedTarget} answers for the destination.
     */
    void copy(final DmaMessage m, final long bytes, final boolean relaxed)
    {
        final Walk src = m.src;
        final Walk dst = m.dst;
        final WriteOrdering ordering = dst.port.ordering();
        if (ordering != null && ordering.engaged(relaxed))
        {
            placement.copy(src, dst, bytes, relaxed);
            return;
        }
        if (!m.framesSought)
        {
            seek(m, bytes);
        }
        final PreparedFrames from = m.sourceFrames;
        final PreparedFrames to = m.targetFrames;
        long remaining = bytes;
        while (remaining > 0)
        {
            final int n = (int)Math.min(Math.min(src.run(), dst.run()), Math.min(remaining, Integer.MAX_VALUE));
            final long s = src.phys();
            final long d = dst.phys();
            if (from == null || !ResolvedFrames.copy(from.frames, from.place(src.addr), s, to.frames,
                to.place(dst.addr), d, n))
            {
                copyAside(m, s, d, n);
            }
            src.advance(n);
            dst.advance(n);
            remaining -= n;
        }
        engine.bytesMoved += bytes;
    }

    /**
     * A run the frames found do not serve: {@link PhysicalMemory#copy}; past the frames found for a long message, the
     * next ones are found for the next packet.
     */
    private void copyAside(final DmaMessage m, final long srcPhys, final long dstPhys, final int n)
    {
        PhysicalMemory.copy(m.src.port.memory(), srcPhys, m.dst.port.memory(), dstPhys, n);
        final PreparedFrames from = m.sourceFrames;
        final PreparedFrames to = m.targetFrames;
        if (from != null && (!from.covers(m.src.addr + n) || !to.covers(m.dst.addr + n)))
        {
            m.framesSought = false;
        }
    }

    /**
     * Finds both sides' frames from the walks' next byte to the end of the message (or takes the last message's),
     * unless the message is one packet or a side is not one segment.
     */
    private void seek(final DmaMessage m, final long bytes)
    {
        m.framesSought = true;
        m.sourceFrames = null;
        m.targetFrames = null;
        final long left = m.lengthBytes() - m.offset;
        if (m.offset == 0 && bytes >= left || m.src.segments.size() != 1 || m.dst.segments.size() != 1)
        {
            return;
        }
        final Segment s = m.src.segments.get(0);
        final Segment d = m.dst.segments.get(0);
        final long srcIova = s.addr() + m.offset;
        final long dstIova = d.addr() + m.offset;
        PreparedFrames from = lastSource;
        if (from == null || !from.serves(m.src.port, s.key(), srcIova, left))
        {
            from = PreparedFrames.find(m.src.port, s.key(), srcIova, left, false);
        }
        PreparedFrames to = lastTarget;
        if (to == null || !to.serves(m.dst.port, d.key(), dstIova, left))
        {
            to = PreparedFrames.find(m.dst.port, d.key(), dstIova, left, true);
        }
        if (from != null && to != null)
        {
            m.sourceFrames = from;
            m.targetFrames = to;
            lastSource = from;
            lastTarget = to;
        }
    }
}
