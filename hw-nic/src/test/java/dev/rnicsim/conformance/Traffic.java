package dev.rnicsim.conformance;

import static dev.rnicsim.conformance.Rig.sge;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.Arrays;
import java.util.List;

/**
 * {@code tests/utils.py traffic} re-expressed: per iteration the client fills its MR with 'c' and SENDs it, the server's
 * posted receive takes it and holds the 'c's; then the server answers with 's'. On UD each receive buffer starts with
 * the 40-byte GRH and the send comes from the MR past its first 40 bytes, as upstream's UD resources lay them out.
 */
final class Traffic
{
    /** The GRH a UD receive starts with. */
    static final int GRH_BYTES = 40;

    /** One side of the traffic. */
    record Side(QueuePair qp, CompletionQueue cq, HostMemory mem, long buf, MemoryRegion mr, AddressHandle ahToPeer,
        int qkey)
    {
    }

    private Traffic()
    {
    }

    /**
     * @param client     the side that sends first.
     * @param server     the other.
     * @param msgBytes   the message size.
     * @param iterations round trips.
     */
    static void run(final Side client, final Side server, final int msgBytes, final int iterations)
    {
        for (int i = 0; i < iterations; i++)
        {
            oneWay(client, server, msgBytes, (byte)'c', i);
            oneWay(server, client, msgBytes, (byte)'s', i);
        }
    }

    private static void oneWay(final Side from, final Side to, final int msgBytes, final byte fill, final int id)
    {
        final boolean ud = from.ahToPeer() != null;
        final int offset = ud ? GRH_BYTES : 0;
        final byte[] data = new byte[msgBytes];
        Arrays.fill(data, fill);
        from.mem().write(from.buf() + offset, data);
        to.qp().postRecv(RecvWr.of(id, sge(to.mr(), to.buf(), msgBytes + offset)));
        final SendWr send = SendWr.send(id, List.of(sge(from.mr(), from.buf() + offset, msgBytes)));
        if (ud)
        {
            from.qp().postSendUd(List.of(new UdSendWr(send, from.ahToPeer(), to.qp().qpNum(), to.qkey())));
        }
        else
        {
            from.qp().postSend(send);
        }
        assertThat(XrcPlayers.await(from.cq()).status()).isEqualTo(WcStatus.SUCCESS);
        final WorkCompletion wc = XrcPlayers.await(to.cq());
        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.byteLen()).isEqualTo(msgBytes + offset);
        assertThat(to.mem().read(to.buf() + offset, msgBytes)).as("the receiver's buffer").isEqualTo(data);
    }
}
