package dev.rnicsim.simnic;

import dev.rnicsim.dma.Segment;
import dev.rnicsim.verbs.SendWr;
import java.util.List;

/**
 * The requester's state of one RC RDMA WRITE or READ message in flight: its segmentation into packets of the path
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
    private final List<Segment> local;
    private final SimDevice responderDevice;
    private final long remoteAddr;
    private final long lengthBytes;
    private final int mtuBytes;
    private final int packetCount;
    private final long missesBefore;
    private int nextPacket;
    private final Segment[] slice;

    InflightMessage(final SimQp requester, final SendWr wr, final List<Segment> local,
        final SimDevice responderDevice, final long remoteAddr, final long lengthBytes, final int mtuBytes,
        final long missesBefore)
    {
        this.requester = requester;
        this.wr = wr;
        this.local = local;
        this.responderDevice = responderDevice;
        this.remoteAddr = remoteAddr;
        this.lengthBytes = lengthBytes;
        this.mtuBytes = mtuBytes;
        this.packetCount = packets(lengthBytes, mtuBytes);
        this.missesBefore = missesBefore;
        this.slice = new Segment[local.size()];
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

    long missesBefore()
    {
        return missesBefore;
    }

    boolean firstPacket()
    {
        return nextPacket == 0;
    }

    boolean lastPacket()
    {
        return nextPacket == packetCount - 1;
    }

    void advance()
    {
        nextPacket++;
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

    /** First remote address of the next packet. */
    long packetRemoteAddr()
    {
        return remoteAddr + offset();
    }

    /** The whole local gather (WRITE) or scatter (READ) list. */
    List<Segment> local()
    {
        return local;
    }

    /** The part of the local list that the next packet gathers or scatters. */
    List<Segment> packetLocal()
    {
        final long from = offset();
        final long to = from + packetBytes();
        int n = 0;
        long at = 0;
        for (final Segment s : local)
        {
            final long start = Math.max(from, at);
            final long end = Math.min(to, at + s.lengthBytes());
            if (start < end)
            {
                slice[n++] = new Segment(s.addr() + (start - at), end - start, s.key());
            }
            at += s.lengthBytes();
            if (at >= to)
            {
                break;
            }
        }
        return java.util.Arrays.asList(slice).subList(0, n);
    }

    @Override
    public String toString()
    {
        return wr.opcode() + " wr_id=" + wr.wrId() + " qp 0x" + Integer.toHexString(requester.qpNum()) + " packet "
            + nextPacket + "/" + packetCount + " (" + bytesPlaced() + "/" + lengthBytes + " bytes)";
    }
}
