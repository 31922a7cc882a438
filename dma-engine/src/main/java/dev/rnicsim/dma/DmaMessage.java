package dev.rnicsim.dma;

import java.util.List;

/**
 * An RDMA WRITE or READ message opened by {@link DmaEngine#openMessage}, {@link DmaEngine#openInlineWrite}, {@link
 * DmaEngine#openSend} or {@link DmaEngine#openAtomic}: its checks' outcome and where its next packet starts in both
 * lists. Not thread safe.
 */
public final class DmaMessage
{
    final PacketPath.MessageKind kind;
    final DmaPort local;
    final int localPd;
    final List<Segment> sgl;
    final DmaPort remote;
    final int remotePd;
    final List<Segment> remoteSgl;
    final DmaResult failure;
    final Walk src;
    final Walk dst;
    /** An inline payload, or the original value an atomic response carries; null when the source is a walk. */
    byte[] inline;
    long atomicOriginal;
    long offset;
    /**
     * The requester's and the responder's {@code AdapterTables.keyChanges()} when the first packet's checks of the
     * whole message passed (-1: not taken; every packet checks its keys again). While a side's count stays there, no
     * key check of that side can answer otherwise, and a later packet's check of its part is not made again.
     */
    long localKeysChecked = -1;
    long remoteKeysChecked = -1;
    /**
     * A WRITE from memory whose first packet's checks passed on both sides, over memory no device page fault can
     * reach at that key-change count: its later packets are copied at once while both counts stay where they were.
     */
    boolean streams;
    /** Whether the destination's writes are relaxed ({@link Placement#relaxedTarget}), as at that key-change count. */
    boolean relaxedTarget;
    long relaxedTargetAt = -1;

    DmaMessage(final PacketPath.MessageKind kind, final DmaPort local, final int localPd, final List<Segment> sgl,
        final DmaPort remote, final int remotePd, final List<Segment> remoteSgl, final DmaResult failure,
        final Walk src, final Walk dst, final byte[] inline)
    {
        this.kind = kind;
        this.inline = inline;
        this.local = local;
        this.localPd = localPd;
        this.sgl = sgl;
        this.remote = remote;
        this.remotePd = remotePd;
        this.remoteSgl = remoteSgl;
        this.failure = failure;
        this.src = src;
        this.dst = dst;
    }

    /**
     * @return the failure of the first packet's checks, or null when they passed.
     */
    public DmaResult failure()
    {
        return failure;
    }

    /**
     * @return bytes moved so far.
     */
    public long offset()
    {
        return offset;
    }

    /**
     * @return for an atomic whose request was executed, the original value at the responder (what the response
     * carries); else 0.
     */
    public long atomicOriginal()
    {
        return atomicOriginal;
    }
}
