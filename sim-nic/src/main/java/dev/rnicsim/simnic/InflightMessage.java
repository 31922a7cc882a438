package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaEngine;
import dev.rnicsim.dma.DmaMessage;
import dev.rnicsim.verbs.SendWr;

/**
 * The requester's state of one RC message in flight (RDMA WRITE or READ, SEND, an atomic): its segmentation into packets of the path
 * MTU and how far it got. The message is cut at MTU boundaries of its payload: {@code ceil(length / mtu)} packets,
 * each but the last carrying {@code mtu} bytes (IBA 9.7.1, "packet sequencing": FIRST, MIDDLE, LAST packets; a READ
 * request is one packet and its responses are {@code ceil(length / mtu)} packets, IBA 9.7.4.1.5).
 *
 * <p>Not thread safe.
 */
public final class InflightMessage
{
    private final SimQp requester;
    private final SendWr wr;
    private final DmaMessage dma;
    private final SimDevice responderDevice;
    private final long lengthBytes;
    private final int mtuBytes;
    private final int packetCount;
    private final long missesBefore;
    private final boolean needsRecv;
    private final long startNs;
    private final String postSite;
    private long advancedNs;
    private int nextPacket;
    private boolean relaxed;
    private int rnrNaks;
    private long pendingRnrNaks;
    private dev.rnicsim.dma.DmaResult rnrNak;
    /** Prices the packets of a message of several packets one after the other (made at its first packet). */
    private WirePricer pricer;

    InflightMessage(final SimQp requester, final SendWr wr, final DmaMessage dma,
        final SimDevice responderDevice, final long lengthBytes, final int mtuBytes, final long missesBefore,
        final boolean needsRecv, final long startNs)
    {
        this.needsRecv = needsRecv;
        this.startNs = startNs;
        this.requester = requester;
        this.wr = wr;
        this.dma = dma;
        this.responderDevice = responderDevice;
        this.lengthBytes = lengthBytes;
        this.mtuBytes = mtuBytes;
        this.packetCount = packets(lengthBytes, mtuBytes);
        this.missesBefore = missesBefore;
        // The message starts while its WQE executes.
        this.postSite = requester.requester.postSite(wr);
    }

    /**
     * @param lengthBytes a message's payload.
     * @param mtuBytes    the path MTU.
     * @return its packets: at least one (a zero-length message is one packet).
     */
    public static int packets(final long lengthBytes, final int mtuBytes)
    {
        return (int)Math.max(1, (lengthBytes + mtuBytes - 1) / mtuBytes);
    }

    /**
     * @return the QP that posted the message.
     */
    public SimQp requester()
    {
        return requester;
    }

    /**
     * @return the work request.
     */
    public SendWr wr()
    {
        return wr;
    }

    /**
     * @return where its work request was posted (a script line, {@link SimFabric#origin()} at post time), or null.
     */
    public String postSite()
    {
        return postSite;
    }

    /**
     * @return the device of the responder.
     */
    public SimDevice responderDevice()
    {
        return responderDevice;
    }

    /**
     * @return the remote key the responder checked at the first packet.
     */
    public int rkey()
    {
        return wr.rkey();
    }

    /**
     * @return the message's payload in bytes.
     */
    public long lengthBytes()
    {
        return lengthBytes;
    }

    /**
     * @return its packets.
     */
    public int packetCount()
    {
        return packetCount;
    }

    /**
     * @return packets placed so far (the next packet's index).
     */
    public int packetsPlaced()
    {
        return nextPacket;
    }

    /**
     * @return bytes placed so far.
     */
    public long bytesPlaced()
    {
        return Math.min(lengthBytes, (long)nextPacket * mtuBytes);
    }

    /** True when the message consumes a receive at the responder (SEND, WRITE with immediate). */
    boolean needsRecv()
    {
        return needsRecv;
    }

    /**
     * @return the simulated time its first packet started at, in ns.
     */
    public long startNs()
    {
        return startNs;
    }

    /**
     * @return simulated ns its packets advanced the clock by so far.
     */
    public long advancedNs()
    {
        return advancedNs;
    }

    void advanced(final long ns)
    {
        advancedNs += ns;
    }

    /**
     * {@link CostModel#packetNs} of the next packet, priced after the packet before ({@link WirePricer}: the same
     * value).
     */
    long packetNs(final CostModel cost, final long packetBytes, final double linkGbps)
    {
        if (packetCount == 1)
        {
            return cost.packetNs(offset(), packetBytes, linkGbps);
        }
        if (pricer == null)
        {
            pricer = new WirePricer();
        }
        return pricer.packetNs(cost, offset(), packetBytes, linkGbps);
    }

    long missesBefore()
    {
        return missesBefore;
    }

    boolean lastPacket()
    {
        return nextPacket == packetCount - 1;
    }

    void advance()
    {
        if (nextPacket++ == 0)
        {
            final SimDevice device = requester.simDevice();
            device.observe(o -> o.firstPacketPlaced(this));
            if (responderDevice != device)
            {
                responderDevice.observe(o -> o.firstPacketPlaced(this));
            }
        }
    }

    /** Offset in the payload of the next packet. */
    long offset()
    {
        return (long)nextPacket * mtuBytes;
    }

    /** Payload of the next packet in bytes. */
    long packetBytes()
    {
        return Math.min(mtuBytes, lengthBytes - offset());
    }

    /** The message's DMA state: checked keys and where the next packet starts in both lists. */
    DmaMessage dma()
    {
        return dma;
    }

    @Override
    public String toString()
    {
        return wr.opcode() + " wr_id=" + Long.toUnsignedString(wr.wrId()) + " qp 0x" + Integer.toHexString(requester.qpNum()) + " packet "
            + nextPacket + "/" + packetCount + " (" + bytesPlaced() + "/" + lengthBytes + " bytes)";
    }

    /** @return true when the placing device applies relaxed ordering to the message's writes (priced per packet). */
    boolean relaxed()
    {
        return relaxed;
    }

    void relaxed(final boolean relaxedPlacement)
    {
        this.relaxed = relaxedPlacement;
    }

    /** @return RNR NAKs the message's packets took for page faults at the responder so far. */
    int rnrNaks()
    {
        return rnrNaks;
    }

    void rnrNaks(final int naks)
    {
        this.rnrNaks = naks;
    }

    /** @return RNR NAKs the next packet still takes while the responder resolves its page fault. */
    long pendingRnrNaks()
    {
        return pendingRnrNaks;
    }

    /** @return the RNR NAK outcome of the page fault the next packet waits for, or null. */
    dev.rnicsim.dma.DmaResult rnrNak()
    {
        return rnrNak;
    }

    /** The next packet met a responder page fault that takes {@code naks} RNR NAKs to resolve. */
    void rnrNak(final dev.rnicsim.dma.DmaResult nak, final long naks)
    {
        this.rnrNak = nak;
        this.pendingRnrNaks = naks;
    }

    /** One of the pending RNR NAKs was taken. */
    void rnrNakTaken()
    {
        pendingRnrNaks--;
    }
}
