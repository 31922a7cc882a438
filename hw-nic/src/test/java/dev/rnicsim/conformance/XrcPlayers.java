package dev.rnicsim.conformance;

import static dev.rnicsim.conformance.Rig.sge;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.XrcDomain;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The two players of rdma-core's XRC cases ({@code tests/base.py XRCResources}), re-expressed on a {@link Rig}: on each
 * side an XRC domain, a CQ, one MR, {@link #QP_COUNT} pairs of an XRC_RECV QP (granting every remote right) and an
 * XRC_SEND QP (granting none), and one XRC SRQ of the domain completing on the CQ. The client's i-th XRC_SEND QP is
 * connected to the server's i-th XRC_RECV QP and the other way round. The players skip where upstream's do: the
 * device has no XRC domains (EOPNOTSUPP), no XRC QPs (EOPNOTSUPP), or the MR's access is not supported
 * (EOPNOTSUPP).
 */
final class XrcPlayers
{
    /** XRCResources' default qp_count. */
    static final int QP_COUNT = 2;

    /** One side: its context's objects for XRC. */
    static final class Side
    {
        final Context ctx;
        final HostMemory mem;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final XrcDomain xrcd;
        final long buf;
        final MemoryRegion mr;
        final SharedReceiveQueue srq;
        final List<QueuePair> recvQps = new ArrayList<>();
        final List<QueuePair> sendQps = new ArrayList<>();

        Side(final Context ctx, final HostMemory mem, final ProtectionDomain pd, final CompletionQueue cq,
            final long buf, final int msgBytes, final Set<Access> mrAccess, final int messages)
        {
            this.ctx = ctx;
            this.mem = mem;
            this.pd = pd;
            this.cq = cq;
            this.buf = buf;
            xrcd = orSkip(ctx::openXrcd, "Create XRCD is not supported");
            mr = orSkip(() -> pd.regMr(buf, msgBytes, mrAccess), "Reg MR with access " + mrAccess
                + " is not supported");
            for (int i = 0; i < QP_COUNT; i++)
            {
                recvQps.add(orSkip(() -> ctx.createXrcRecvQp(xrcd), "Create XRC_RECV QP is not supported"));
                sendQps.add(orSkip(() -> pd.createQp(QpInitAttr.xrcSend(cq)), "Create XRC_SEND QP is not supported"));
            }
            srq = pd.createXrcSrq(xrcd, cq, new SrqAttr(Math.max(1, QP_COUNT * messages), 1, 0));
        }
    }

    final Side client;
    final Side server;
    final int msgBytes;

    /**
     * @param rig      the two contexts (the client is a, the server b).
     * @param msgBytes the message size (and MR length).
     * @param mrAccess the MR's access.
     * @param messages messages per QP pair and direction (the SRQs hold their receives).
     */
    XrcPlayers(final Rig rig, final int msgBytes, final Set<Access> mrAccess, final int messages)
    {
        this.msgBytes = msgBytes;
        client = new Side(rig.ctxA, rig.memA, rig.pdA, rig.cqA, rig.bufferA(Math.max(Rig.PAGE, msgBytes)), msgBytes,
            mrAccess, messages);
        server = new Side(rig.ctxB, rig.memB, rig.pdB, rig.cqB, rig.bufferB(Math.max(Rig.PAGE, msgBytes)), msgBytes,
            mrAccess, messages);
        final Set<Access> target = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE,
            Access.REMOTE_ATOMIC);
        for (int i = 0; i < QP_COUNT; i++)
        {
            client.recvQps.get(i).connect(server.sendQps.get(i).address(), target);
            server.recvQps.get(i).connect(client.sendQps.get(i).address(), target);
            client.sendQps.get(i).connect(server.recvQps.get(i).address(), EnumSet.noneOf(Access.class));
            server.sendQps.get(i).connect(client.recvQps.get(i).address(), EnumSet.noneOf(Access.class));
        }
    }

    private static <T> T orSkip(final java.util.function.Supplier<T> verb, final String why)
    {
        try
        {
            return verb.get();
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, why + ": " + e.detail());
            throw e;
        }
    }

    /**
     * {@code tests/utils.py xrc_traffic}: each SRQ gets a receive per message; then, per message and QP pair, the
     * client fills its MR with 'c' and sends it through its i-th XRC_SEND QP to the server's SRQ, both sides complete,
     * the server's MR holds the 'c's; then the server answers with 's' the same way.
     *
     * @param messages   messages per QP pair and direction.
     * @param sendOfWrId builds the SEND (SEND or SEND_WITH_IMM) over the sender's MR, by wr_id.
     */
    void traffic(final int messages, final SendBuilder sendOfWrId)
    {
        for (final Side s : List.of(client, server))
        {
            for (int i = 0; i < QP_COUNT * messages; i++)
            {
                s.srq.postRecv(List.of(RecvWr.of(i, sge(s.mr, s.buf, msgBytes))));
            }
        }
        for (int m = 0; m < messages; m++)
        {
            for (int i = 0; i < QP_COUNT; i++)
            {
                oneWay(client, server, i, (byte)'c', sendOfWrId, m);
                oneWay(server, client, i, (byte)'s', sendOfWrId, m);
            }
        }
    }

    /** A SEND (or SEND_WITH_IMM) over an SGE list, by wr_id. */
    interface SendBuilder
    {
        SendWr build(long wrId, List<Sge> sgl);
    }

    private void oneWay(final Side from, final Side to, final int pair, final byte fill, final SendBuilder send,
        final int message)
    {
        final byte[] data = new byte[msgBytes];
        java.util.Arrays.fill(data, fill);
        from.mem.write(from.buf, data);
        from.sendQps.get(pair).postSend(send.build(message, List.of(sge(from.mr, from.buf, msgBytes)))
            .withRemoteSrqn(to.srq.srqNum()));
        final WorkCompletion sent = await(from.cq);
        assertThat(sent.status()).as("the send of message %d on pair %d", message, pair).isEqualTo(WcStatus.SUCCESS);
        final WorkCompletion received = await(to.cq);
        assertThat(received.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(received.byteLen()).isEqualTo(msgBytes);
        lastReceived = received;
        assertThat(to.mem.read(to.buf, msgBytes)).as("the receiver's MR").isEqualTo(data);
    }

    /** The receive completion of the last message. */
    WorkCompletion lastReceived;

    static WorkCompletion await(final CompletionQueue cq)
    {
        final long deadline = System.nanoTime() + Rig.COMPLETION_TIMEOUT_NS;
        while (true)
        {
            final List<WorkCompletion> wcs = cq.poll(1);
            if (!wcs.isEmpty())
            {
                return wcs.get(0);
            }
            assertThat(System.nanoTime() - deadline).as("a completion").isNegative();
            Thread.onSpinWait();
        }
    }

    /**
     * {@code tests/utils.py atomic_traffic} on XRC: the sender's MR holds the 8 bytes of sender_val, the receiver's
     * those of receiver_val; the sender's first XRC_SEND QP posts the atomic (compare/add sender_val, swap 0) to the
     * receiver's MR naming the receiver's SRQ; the receiver's MR then holds the result and the sender's the original.
     * Both directions, {@code iterations} times.
     */
    void atomicTraffic(final int iterations, final boolean cmpSwap, final int receiverVal, final int senderVal)
    {
        for (int it = 0; it < iterations; it++)
        {
            atomicOneWay(client, server, cmpSwap, receiverVal, senderVal, it);
            atomicOneWay(server, client, cmpSwap, receiverVal, senderVal, it);
        }
    }

    private static long repeated(final int oneByte)
    {
        return 0x0101_0101_0101_0101L * (oneByte & 0xff);
    }

    private static void atomicOneWay(final Side from, final Side to, final boolean cmpSwap, final int receiverVal,
        final int senderVal, final int wrId)
    {
        from.mem.writeLong(from.buf, repeated(senderVal));
        to.mem.writeLong(to.buf, repeated(receiverVal));
        final SendWr wr = cmpSwap
            ? SendWr.compareAndSwap(wrId, sge(from.mr, from.buf, 8), to.buf, to.mr.rkey(), repeated(senderVal), 0)
            : SendWr.fetchAndAdd(wrId, sge(from.mr, from.buf, 8), to.buf, to.mr.rkey(), repeated(senderVal));
        from.sendQps.get(0).postSend(wr.withRemoteSrqn(to.srq.srqNum()));
        assertThat(await(from.cq).status()).isEqualTo(WcStatus.SUCCESS);
        final long expected = cmpSwap ? (receiverVal == senderVal ? 0 : repeated(receiverVal))
            : repeated(receiverVal) + repeated(senderVal);
        assertThat(to.mem.readLong(to.buf)).as("the target after the atomic").isEqualTo(expected);
        assertThat(from.mem.readLong(from.buf)).as("the original value returned").isEqualTo(repeated(receiverVal));
    }
}
