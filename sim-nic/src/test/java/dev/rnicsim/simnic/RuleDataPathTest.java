package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.pattern;
import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The data-path rules of RC work requests between two simulated hosts (rxe's check order, ibv_post_send(3)):
 * which bytes move, which work completion and status each side gets, the QP states left behind, and what stays
 * unchanged when an operation fails.
 */
class RuleDataPathTest
{
    private static final int PAGE = 4096;
    private static final Set<SendFlag> UNSIGNALED = EnumSet.noneOf(SendFlag.class);

    /** A requester source MR and a responder target MR on a connected rig. */
    private static final class Pair
    {
        final RuleRig rig;
        final long src;
        final long dst;
        final MemoryRegion srcMr;
        final MemoryRegion dstMr;

        Pair(final RuleRig rig, final Set<Access> dstAccess)
        {
            this.rig = rig;
            src = rig.bufferA(4 * PAGE);
            dst = rig.bufferB(4 * PAGE);
            rig.ctxA.memory().write(src, pattern(4 * PAGE, 0));
            srcMr = rig.pdA.regMr(src, 4 * PAGE, RuleRig.LOCAL);
            dstMr = rig.pdB.regMr(dst, 4 * PAGE, dstAccess);
        }

        Pair(final RuleRig rig)
        {
            this(rig, RuleRig.REMOTE_ALL);
        }

        byte[] dstBytes()
        {
            return rig.ctxB.memory().read(dst, 4 * PAGE);
        }
    }

    private static WorkCompletion only(final List<WorkCompletion> wcs)
    {
        assertThat(wcs).hasSize(1);
        return wcs.get(0);
    }

    private static void assertBothInErrorAndFlushing(final RuleRig rig, final Pair p)
    {
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
        rig.qpA.postSend(SendWr.write(99, sgl(sge(p.srcMr, p.src, 8)), p.dst, p.dstMr.rkey()));
        final WorkCompletion flushed = only(rig.pollA());
        assertThat(flushed.wrId()).isEqualTo(99);
        assertThat(flushed.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
        assertThat(flushed.qpNum()).isEqualTo(rig.qpA.qpNum());
        rig.qpB.postRecv(RecvWr.of(98));
        final WorkCompletion flushedRecv = only(rig.pollB());
        assertThat(flushedRecv.wrId()).isEqualTo(98);
        assertThat(flushedRecv.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
    }

    @Test
    void shouldMoveTheGatheredBytesToTheRemoteAddressWithRdmaWrite()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final byte[] before = p.dstBytes();

        rig.qpA.postSend(SendWr.write(7, sgl(sge(p.srcMr, p.src + 4090, 10)), p.dst + 100, p.dstMr.rkey()));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.wrId()).isEqualTo(7);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.RDMA_WRITE);
        assertThat(wc.byteLen()).isEqualTo(10);
        assertThat(wc.qpNum()).isEqualTo(rig.qpA.qpNum());
        final byte[] expected = before.clone();
        System.arraycopy(pattern(4 * PAGE, 0), 4090, expected, 100, 10);
        assertThat(p.dstBytes()).isEqualTo(expected);
        assertThat(rig.pollB()).as("an RDMA WRITE consumes no receive and completes nothing at the responder")
            .isEmpty();
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldFailWithRemAccessErrLeaveTargetUnchangedAndMoveBothQpsToErrWhenRkeyIsStaleAfterDereg()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        rig.qpB.postRecv(RecvWr.of(50, sge(p.dstMr, p.dst, 64)));
        final byte[] before = p.dstBytes();
        final int stale = p.dstMr.rkey();
        p.dstMr.close();

        rig.qpA.postSend(SendWr.write(1, sgl(sge(p.srcMr, p.src, 64)), p.dst, stale));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(p.dstBytes()).isEqualTo(before);
        final WorkCompletion recvFlushed = only(rig.pollB());
        assertThat(recvFlushed.wrId()).isEqualTo(50);
        assertThat(recvFlushed.status()).isEqualTo(WcStatus.WR_FLUSH_ERR);
        assertThat(rig.deviceA.counter(SimCounter.REQ_REMOTE_ACCESS_ERRORS)).isEqualTo(1);
        assertThat(rig.deviceB.counter(SimCounter.RESP_REMOTE_ACCESS_ERRORS)).isEqualTo(1);
        final MemoryRegion fresh = rig.pdB.regMr(p.dst, 4 * PAGE, RuleRig.REMOTE_ALL);
        assertThat(fresh.rkey()).isNotEqualTo(stale);
        assertBothInErrorAndFlushing(rig, new Pair(rig));
    }

    @Test
    void shouldFailWithRemAccessErrWhenTheRkeyBelongsToAnotherPdOfTheResponder()
    {
        final RuleRig rig = RuleRig.connected();
        final ProtectionDomain otherPd = rig.ctxB.allocPd();
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion foreign = otherPd.regMr(dst, PAGE, RuleRig.REMOTE_ALL);
        final long src = rig.bufferA(PAGE);
        rig.ctxA.memory().write(src, pattern(PAGE, 3));
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);

        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 32)), dst, foreign.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.ctxB.memory().read(dst, PAGE)).isEqualTo(new byte[PAGE]);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldSucceedExactlyAtTheEndOfTheMrAndFailWithRemAccessErrOneBytePast()
    {
        final RuleRig ok = RuleRig.connected();
        final Pair p = new Pair(ok);
        final MemoryRegion firstPage = ok.pdB.regMr(p.dst, PAGE, RuleRig.REMOTE_ALL);

        ok.qpA.postSend(SendWr.write(1, sgl(sge(p.srcMr, p.src, 16)), p.dst + PAGE - 16, firstPage.rkey()));

        assertThat(only(ok.pollA()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(ok.ctxB.memory().read(p.dst + PAGE - 16, 16)).isEqualTo(ok.ctxA.memory().read(p.src, 16));

        final RuleRig past = RuleRig.connected();
        final Pair q = new Pair(past);
        final MemoryRegion onePage = past.pdB.regMr(q.dst, PAGE, RuleRig.REMOTE_ALL);
        final byte[] before = q.dstBytes();

        past.qpA.postSend(SendWr.write(2, sgl(sge(q.srcMr, q.src, 16)), q.dst + PAGE - 15, onePage.rkey()));

        assertThat(only(past.pollA()).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(q.dstBytes()).as("not even the bytes inside the MR are written").isEqualTo(before);
        assertThat(past.qpB.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldFailWithRemAccessErrWhenTheMrLacksRemoteWrite()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        final byte[] before = p.dstBytes();

        rig.qpA.postSend(SendWr.write(1, sgl(sge(p.srcMr, p.src, 8)), p.dst, p.dstMr.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(p.dstBytes()).isEqualTo(before);
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldFailWithRemInvReqErrWhenTheResponderQpDoesNotAllowRemoteWrite()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), EnumSet.of(Access.REMOTE_READ));
        final Pair p = new Pair(rig);
        final byte[] before = p.dstBytes();

        rig.qpA.postSend(SendWr.write(1, sgl(sge(p.srcMr, p.src, 8)), p.dst, p.dstMr.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(p.dstBytes()).isEqualTo(before);
        assertThat(rig.deviceA.counter(SimCounter.REQ_REMOTE_INVALID_REQUEST)).isEqualTo(1);
        assertBothInErrorAndFlushing(rig, p);
    }

    @Test
    void shouldSucceedWithAZeroLengthWriteWhateverTheRkey()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final byte[] before = p.dstBytes();

        rig.qpA.postSend(SendWr.write(1, List.of(), 0xdead_0000_0000L, 0xdeadbeef));
        rig.qpA.postSend(SendWr.write(2, sgl(sge(p.srcMr, p.src, 0)), p.dst, 0x0bad_0bad));

        assertThat(rig.pollA()).extracting(WorkCompletion::wrId, WorkCompletion::status, WorkCompletion::byteLen)
            .containsExactly(tuple(1L, WcStatus.SUCCESS, 0L),
                tuple(2L, WcStatus.SUCCESS, 0L));
        assertThat(p.dstBytes()).isEqualTo(before);
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldFailWithRemInvReqErrForAMisalignedAtomicAndChangeNeitherSide()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        rig.ctxB.memory().writeLong(p.dst + 8, 41);
        rig.ctxB.memory().writeLong(p.dst + 16, 42);
        rig.ctxA.memory().writeLong(p.src, 7);
        final byte[] before = p.dstBytes();
        final MemoryRegion result = p.srcMr;

        rig.qpA.postSend(SendWr.fetchAndAdd(1, sge(result, p.src, 8), p.dst + 12, p.dstMr.rkey(), 1));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(p.dstBytes()).isEqualTo(before);
        assertThat(rig.ctxA.memory().readLong(p.src)).isEqualTo(7);
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldReturnTheOriginalValueAndUpdateTheRemoteWithCompareAndSwapAndFetchAndAdd()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final long target = p.dst + 64;
        rig.ctxB.memory().writeLong(target, 5);

        rig.qpA.postSend(SendWr.compareAndSwap(1, sge(p.srcMr, p.src, 8), target, p.dstMr.rkey(), 5, 9));
        final WorkCompletion swapped = only(rig.pollA());
        final long seenBySwap = rig.ctxA.memory().readLong(p.src);
        final long afterSwap = rig.ctxB.memory().readLong(target);
        rig.qpA.postSend(SendWr.compareAndSwap(2, sge(p.srcMr, p.src + 8, 8), target, p.dstMr.rkey(), 5, 11));
        final WorkCompletion notSwapped = only(rig.pollA());
        final long seenByNoSwap = rig.ctxA.memory().readLong(p.src + 8);
        final long afterNoSwap = rig.ctxB.memory().readLong(target);
        rig.qpA.postSend(SendWr.fetchAndAdd(3, sge(p.srcMr, p.src + 16, 8), target, p.dstMr.rkey(), -4));
        final WorkCompletion added = only(rig.pollA());

        assertThat(swapped.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(swapped.opcode()).isEqualTo(WcOpcode.COMP_SWAP);
        assertThat(swapped.byteLen()).isEqualTo(8);
        assertThat(seenBySwap).isEqualTo(5);
        assertThat(afterSwap).isEqualTo(9);
        assertThat(notSwapped.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(seenByNoSwap).isEqualTo(9);
        assertThat(afterNoSwap).as("compare 5 != 9: no swap").isEqualTo(9);
        assertThat(added.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(added.opcode()).isEqualTo(WcOpcode.FETCH_ADD);
        assertThat(rig.ctxA.memory().readLong(p.src + 16)).isEqualTo(9);
        assertThat(rig.ctxB.memory().readLong(target)).isEqualTo(5);
        assertThat(rig.ctxB.memory().readLong(target - 8)).as("neighbour untouched").isZero();
        assertThat(rig.ctxB.memory().readLong(target + 8)).as("neighbour untouched").isZero();
        assertThat(rig.deviceB.counter(SimCounter.RX_ATOMIC_REQUESTS)).isEqualTo(3);
    }

    @Test
    void shouldRefuseAtomicsAtPostTimeWithEopnotsuppOnE810()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.e810(), RuleRig.ALL_REMOTE);
        final Pair p = new Pair(rig, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        rig.ctxB.memory().writeLong(p.dst, 5);
        final List<SendWr> wrs = List.of(SendWr.write(1, sgl(sge(p.srcMr, p.src, 8)), p.dst + 8, p.dstMr.rkey()),
            SendWr.fetchAndAdd(2, sge(p.srcMr, p.src, 8), p.dst, p.dstMr.rkey(), 1),
            SendWr.write(3, sgl(sge(p.srcMr, p.src, 8)), p.dst + 16, p.dstMr.rkey()));

        final PostException e = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(wrs));

        assertThat(e.errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(e.verb()).isEqualTo("ibv_post_send");
        assertThat(e.badWrIndex()).isEqualTo(1);
        assertThat(rig.pollA()).extracting(WorkCompletion::wrId).as("wr 0 was posted, 1 and 2 were not")
            .containsExactly(1L);
        assertThat(rig.ctxB.memory().readLong(p.dst)).isEqualTo(5);
        assertThat(rig.ctxB.memory().readLong(p.dst + 16)).isZero();
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldFailWithLocProtErrForABadLkeyAndChangeNothingRemotely()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final byte[] before = p.dstBytes();

        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(p.src, 64, p.srcMr.lkey() ^ 0x5500)), p.dst,
            p.dstMr.rkey()));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(p.dstBytes()).isEqualTo(before);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
        assertThat(rig.qpB.state()).as("a local error never reaches the responder").isEqualTo(QpState.RTS);
        assertThat(rig.pollB()).isEmpty();
    }

    @Test
    void shouldFailWithLocProtErrWhenRdmaReadLandsInAnMrWithoutLocalWrite()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        rig.ctxB.memory().write(p.dst, pattern(64, 9));
        final long sink = rig.bufferA(PAGE);
        final MemoryRegion readOnly = rig.pdA.regMr(sink, PAGE, EnumSet.of(Access.REMOTE_READ));

        rig.qpA.postSend(SendWr.read(1, sgl(sge(readOnly, sink, 64)), p.dst, p.dstMr.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        assertThat(rig.ctxA.memory().read(sink, 64)).isEqualTo(new byte[64]);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldGatherSeveralSgesOfOnePoolMrInOrderForRdmaWrite()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final long pool = rig.bufferA(16 * PAGE);
        rig.ctxA.memory().write(pool, pattern(16 * PAGE, 11));
        final MemoryRegion poolMr = rig.pdA.regMr(pool, 16 * PAGE, RuleRig.LOCAL);
        final List<Sge> sges = sgl(sge(poolMr, pool + 9 * PAGE - 3, 5), sge(poolMr, pool + 100, 7),
            sge(poolMr, pool + 15 * PAGE + 1, 3), sge(poolMr, pool + 2 * PAGE, 4100));

        rig.qpA.postSend(SendWr.write(1, sges, p.dst + 10, p.dstMr.rkey()));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.byteLen()).isEqualTo(5 + 7 + 3 + 4100);
        final byte[] expected = concat(rig.ctxA.memory().read(pool + 9 * PAGE - 3, 5),
            rig.ctxA.memory().read(pool + 100, 7), rig.ctxA.memory().read(pool + 15 * PAGE + 1, 3),
            rig.ctxA.memory().read(pool + 2 * PAGE, 4100));
        assertThat(rig.ctxB.memory().read(p.dst + 10, expected.length)).isEqualTo(expected);
        assertThat(rig.ctxB.memory().read(p.dst + 10 + expected.length, 1)).isEqualTo(new byte[1]);
    }

    @Test
    void shouldScatterRdmaReadDataIntoSeveralSgesOfOnePoolMrInOrder()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final byte[] remote = pattern(3 * PAGE, 17);
        rig.ctxB.memory().write(p.dst, remote);
        final long pool = rig.bufferA(8 * PAGE);
        final MemoryRegion poolMr = rig.pdA.regMr(pool, 8 * PAGE, RuleRig.LOCAL);
        final long[] at = {pool + 6 * PAGE + 10, pool + 5, pool + 3 * PAGE - 2};
        final int[] len = {6, PAGE + 1, 9};

        rig.qpA.postSend(SendWr.read(1, sgl(sge(poolMr, at[0], len[0]), sge(poolMr, at[1], len[1]),
            sge(poolMr, at[2], len[2])), p.dst + 1000, p.dstMr.rkey()));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.RDMA_READ);
        assertThat(wc.byteLen()).isEqualTo(len[0] + len[1] + len[2]);
        int offset = 1000;
        for (int i = 0; i < at.length; i++)
        {
            assertThat(rig.ctxA.memory().read(at[i], len[i])).as("SGE %d", i)
                .isEqualTo(Arrays.copyOfRange(remote, offset, offset + len[i]));
            offset += len[i];
        }
        assertThat(rig.ctxA.memory().read(pool, 5)).isEqualTo(new byte[5]);
    }

    @Test
    void shouldDeliverASendAcrossSeveralSgesOnBothSides()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final MemoryRegion recvMr = p.dstMr;
        rig.qpB.postRecv(RecvWr.of(70, sge(recvMr, p.dst + 3 * PAGE, 4), sge(recvMr, p.dst + 8, 100)));

        rig.qpA.postSend(SendWr.send(5, sgl(sge(p.srcMr, p.src + 20, 3), sge(p.srcMr, p.src + PAGE, 6))));

        final WorkCompletion sent = only(rig.pollA());
        final WorkCompletion received = only(rig.pollB());
        assertThat(sent.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(sent.opcode()).isEqualTo(WcOpcode.SEND);
        assertThat(received.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(received.wrId()).isEqualTo(70);
        assertThat(received.opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(received.byteLen()).isEqualTo(9);
        assertThat(received.withImm()).isFalse();
        assertThat(received.qpNum()).isEqualTo(rig.qpB.qpNum());
        final byte[] message = concat(rig.ctxA.memory().read(p.src + 20, 3), rig.ctxA.memory().read(p.src + PAGE, 6));
        assertThat(rig.ctxB.memory().read(p.dst + 3 * PAGE, 4)).isEqualTo(Arrays.copyOfRange(message, 0, 4));
        assertThat(rig.ctxB.memory().read(p.dst + 8, 5)).isEqualTo(Arrays.copyOfRange(message, 4, 9));
        assertThat(rig.ctxB.memory().read(p.dst + 13, 1)).isEqualTo(new byte[1]);
        assertThat(((SimQp)rig.qpB).receivesPosted()).isZero();
    }

    @Test
    void shouldDeliverTheImmediateWithSendWithImmAndWriteWithImm()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        rig.qpB.postRecv(List.of(RecvWr.of(1, sge(p.dstMr, p.dst, 64)), RecvWr.of(2, sge(p.dstMr, p.dst + 64, 64))));

        rig.qpA.postSend(SendWr.sendWithImm(10, sgl(sge(p.srcMr, p.src, 16)), 0xcafe_f00d));
        rig.qpA.postSend(SendWr.writeWithImm(11, sgl(sge(p.srcMr, p.src + 100, 32)), p.dst + 2 * PAGE,
            p.dstMr.rkey(), 0x1234_5678));

        assertThat(rig.pollA()).extracting(WorkCompletion::wrId, WorkCompletion::status, WorkCompletion::opcode)
            .containsExactly(tuple(10L, WcStatus.SUCCESS, WcOpcode.SEND),
                tuple(11L, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE));
        final List<WorkCompletion> recvs = rig.pollB();
        assertThat(recvs).hasSize(2);
        assertThat(recvs.get(0).wrId()).isEqualTo(1);
        assertThat(recvs.get(0).opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(recvs.get(0).withImm()).isTrue();
        assertThat(recvs.get(0).immData()).isEqualTo(0xcafe_f00d);
        assertThat(recvs.get(0).byteLen()).isEqualTo(16);
        assertThat(recvs.get(1).wrId()).isEqualTo(2);
        assertThat(recvs.get(1).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recvs.get(1).opcode()).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
        assertThat(recvs.get(1).withImm()).isTrue();
        assertThat(recvs.get(1).immData()).isEqualTo(0x1234_5678);
        assertThat(recvs.get(1).byteLen()).as("byte_len of RECV_RDMA_WITH_IMM is the bytes written").isEqualTo(32);
        assertThat(rig.ctxB.memory().read(p.dst, 16)).isEqualTo(rig.ctxA.memory().read(p.src, 16));
        assertThat(rig.ctxB.memory().read(p.dst + 2 * PAGE, 32)).isEqualTo(rig.ctxA.memory().read(p.src + 100, 32));
        assertThat(rig.ctxB.memory().read(p.dst + 64, 64)).as("the WRITE's receive buffer is not written")
            .isEqualTo(new byte[64]);
    }

    @Test
    void shouldFailWithRemInvReqErrAtTheRequesterAndLocLenErrAtTheReceiverWhenTheSendIsTooLarge()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        rig.qpB.postRecv(List.of(RecvWr.of(1, sge(p.dstMr, p.dst, 8)), RecvWr.of(2, sge(p.dstMr, p.dst + 8, 8))));
        final byte[] before = p.dstBytes();

        rig.qpA.postSend(SendWr.send(9, sgl(sge(p.srcMr, p.src, 9))));

        final WorkCompletion sent = only(rig.pollA());
        assertThat(sent.wrId()).isEqualTo(9);
        assertThat(sent.status()).isEqualTo(WcStatus.REM_INV_REQ_ERR);
        assertThat(rig.pollB()).extracting(WorkCompletion::wrId, WorkCompletion::status).containsExactly(
            tuple(1L, WcStatus.LOC_LEN_ERR),
            tuple(2L, WcStatus.WR_FLUSH_ERR));
        assertThat(p.dstBytes()).isEqualTo(before);
        assertThat(rig.deviceB.counter(SimCounter.RESP_LOCAL_LENGTH_ERROR)).isEqualTo(1);
        assertBothInErrorAndFlushing(rig, p);
    }

    @Test
    void shouldFailWithRnrRetryExcErrWhenNoReceiveIsPostedAndRnrRetryIsZero()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        rig.qpA.modifyToInit(EnumSet.noneOf(Access.class));
        rig.qpA.modifyToRtr(rig.qpB.address(), 12);
        rig.qpA.modifyToRts(7, 0);
        rig.qpB.connect(rig.qpA.address(), RuleRig.ALL_REMOTE);
        final Pair p = new Pair(rig);

        rig.qpA.postSend(SendWr.send(1, sgl(sge(p.srcMr, p.src, 8))));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.RNR_RETRY_EXC_ERR);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
        assertThat(rig.qpB.state()).as("RNR exhaustion is the requester's error").isEqualTo(QpState.RTS);
        // rnr_retry 0: the one RNR NAK ends the send; no NAK was retried, the request was dropped once
        assertThat(rig.deviceA.counter(SimCounter.RNR_NAK_RETRY_ERR)).isZero();
        assertThat(rig.deviceA.counter(SimCounter.RNR_RETRIES_EXCEEDED)).isEqualTo(1);
        assertThat(rig.deviceB.counter(SimCounter.OUT_OF_BUFFER)).isEqualTo(1);
        rig.qpB.postRecv(RecvWr.of(2, sge(p.dstMr, p.dst, 8)));
        assertThat(rig.pollB()).as("the failed SEND is not delivered later").isEmpty();
        assertThat(p.dstBytes()).isEqualTo(new byte[4 * PAGE]);
    }

    @Test
    void shouldWaitWithRnrRetrySevenAndCompleteOnceAReceiveIsPosted()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);

        rig.qpA.postSend(SendWr.send(1, sgl(sge(p.srcMr, p.src, 8))));
        rig.qpA.postSend(SendWr.write(2, sgl(sge(p.srcMr, p.src + 8, 8)), p.dst + 100, p.dstMr.rkey()));

        assertThat(rig.pollA()).isEmpty();
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isEqualTo(2);
        assertThat(rig.ctxB.memory().read(p.dst + 100, 8)).as("the WRITE waits behind the SEND")
            .isEqualTo(new byte[8]);
        rig.qpB.postRecv(RecvWr.of(3, sge(p.dstMr, p.dst, 8)));

        assertThat(rig.pollA()).extracting(WorkCompletion::wrId, WorkCompletion::status).containsExactly(
            tuple(1L, WcStatus.SUCCESS),
            tuple(2L, WcStatus.SUCCESS));
        assertThat(only(rig.pollB()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.ctxB.memory().read(p.dst, 8)).isEqualTo(rig.ctxA.memory().read(p.src, 8));
        assertThat(rig.ctxB.memory().read(p.dst + 100, 8)).isEqualTo(rig.ctxA.memory().read(p.src + 8, 8));
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldCompleteOnlyTheFailingWorkRequestWhenBothAreUnsignaled()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);

        rig.qpA.postSend(SendWr.write(1, sgl(sge(p.srcMr, p.src, 8)), p.dst, p.dstMr.rkey()).withFlags(UNSIGNALED));
        final List<WorkCompletion> afterSuccess = rig.pollA();
        rig.qpA.postSend(SendWr.write(2, sgl(sge(p.srcMr, p.src, 8)), p.dst, p.dstMr.rkey() + 1)
            .withFlags(UNSIGNALED));

        assertThat(afterSuccess).isEmpty();
        assertThat(rig.ctxB.memory().read(p.dst, 8)).isEqualTo(rig.ctxA.memory().read(p.src, 8));
        final WorkCompletion failed = only(rig.pollA());
        assertThat(failed.wrId()).isEqualTo(2);
        assertThat(failed.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void shouldRefusePostingWithEinvalAndTheBadWrIndexBeforeRts()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final long src = rig.bufferA(PAGE);
        final MemoryRegion mr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final SendWr wr = SendWr.send(1, sgl(sge(mr, src, 8)));

        final PostException inReset = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(wr));
        final PostException recvInReset = catchThrowableOfType(PostException.class,
            () -> rig.qpA.postRecv(RecvWr.of(1, sge(mr, src, 8))));
        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        final PostException inInit = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(wr));
        rig.qpA.postRecv(RecvWr.of(2, sge(mr, src, 8)));
        rig.qpA.modifyToRtr(rig.qpB.address(), 12);
        final PostException inRtr = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(wr));

        for (final PostException e : List.of(inReset, recvInReset, inInit, inRtr))
        {
            assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
            assertThat(e.badWrIndex()).isZero();
        }
        assertThat(((SimQp)rig.qpA).receivesPosted()).as("receives may be posted from INIT on").isEqualTo(1);
        assertThat(rig.pollA()).isEmpty();
    }

    @Test
    void shouldRefuseTooManySgesAtTheirIndexAfterPostingTheEarlierOnes()
    {
        // The rig is ConnectX-5: mlx5's _mlx5_post_send answers a send with too many SGEs with ENOMEM, its
        // mlx5_post_recv with EINVAL.
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final int maxSge = QpInitAttr.rc(rig.cqA).cap().maxSendSge();
        final Sge one = sge(p.srcMr, p.src, 1);
        final Sge[] tooMany = new Sge[maxSge + 1];
        Arrays.fill(tooMany, one);
        final List<SendWr> wrs = List.of(SendWr.write(1, sgl(one), p.dst, p.dstMr.rkey()),
            SendWr.write(2, List.of(tooMany), p.dst, p.dstMr.rkey()));

        final PostException send = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(wrs));
        final PostException recv = catchThrowableOfType(PostException.class,
            () -> rig.qpB.postRecv(List.of(RecvWr.of(1), new RecvWr(2, List.of(tooMany)))));

        assertThat(send.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(send.badWrIndex()).isEqualTo(1);
        assertThat(recv.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(recv.badWrIndex()).isEqualTo(1);
        assertThat(rig.pollA()).extracting(WorkCompletion::wrId).containsExactly(1L);
        assertThat(((SimQp)rig.qpB).receivesPosted()).isEqualTo(1);
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldWorkInLoopbackBetweenTwoContextsOfOneDeviceAndWithinOneContext()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice device = fabric.addHost("solo").addDevice("sim:solo/mlx5_0", DeviceProfiles.connectx5());
        final SimContext c1 = (SimContext)device.open();
        final SimContext c2 = (SimContext)device.open();
        final ProtectionDomain pd1 = c1.allocPd();
        final ProtectionDomain pd2 = c2.allocPd();
        final CompletionQueue cq1 = c1.createCq(8);
        final CompletionQueue cq2 = c2.createCq(8);
        final QueuePair q1 = pd1.createQp(QpInitAttr.rc(cq1));
        final QueuePair q2 = pd2.createQp(QpInitAttr.rc(cq2));
        q1.connect(q2.address(), RuleRig.ALL_REMOTE);
        q2.connect(q1.address(), RuleRig.ALL_REMOTE);
        final long a = c1.memory().allocate(PAGE, Backing.BASE_PAGES);
        final long b = c2.memory().allocate(PAGE, Backing.BASE_PAGES);
        c1.memory().write(a, pattern(PAGE, 5));
        final MemoryRegion ma = pd1.regMr(a, PAGE, RuleRig.REMOTE_ALL);
        final MemoryRegion mb = pd2.regMr(b, PAGE, RuleRig.REMOTE_ALL);
        // Within one context: a second QP pair of pd1 writes from a to a + 2048.
        final QueuePair s1 = pd1.createQp(QpInitAttr.rc(cq1));
        final QueuePair s2 = pd1.createQp(QpInitAttr.rc(cq1));
        s1.connect(s2.address(), RuleRig.ALL_REMOTE);
        s2.connect(s1.address(), RuleRig.ALL_REMOTE);

        q1.postSend(SendWr.write(1, sgl(sge(ma, a, 64)), b + 10, mb.rkey()));
        s1.postSend(SendWr.write(2, sgl(sge(ma, a, 16)), a + 2048, ma.rkey()));

        assertThat(cq1.poll(8)).extracting(WorkCompletion::wrId, WorkCompletion::status).containsExactly(
            tuple(1L, WcStatus.SUCCESS),
            tuple(2L, WcStatus.SUCCESS));
        assertThat(c2.memory().read(b + 10, 64)).isEqualTo(Arrays.copyOf(pattern(PAGE, 5), 64));
        assertThat(c1.memory().read(a + 2048, 16)).isEqualTo(Arrays.copyOf(pattern(PAGE, 5), 16));
        assertThat(c1.process()).isNotSameAs(c2.process());
    }

    @Test
    void shouldAddressAZeroBasedMrByOffsetsFromItsFirstByte()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final long start = p.dst + 100;
        final MemoryRegion zb = rig.pdB.regMr(start, 2 * PAGE, EnumSet.of(Access.ZERO_BASED, Access.LOCAL_WRITE,
            Access.REMOTE_WRITE, Access.REMOTE_READ));
        final long localStart = p.src + 300;
        final MemoryRegion localZb = rig.pdA.regMr(localStart, PAGE, EnumSet.of(Access.ZERO_BASED,
            Access.LOCAL_WRITE));

        rig.qpA.postSend(SendWr.write(1, sgl(new Sge(0x10, 8, localZb.lkey())), 0x20, zb.rkey()));
        rig.qpA.postSend(SendWr.write(2, sgl(Sge.of(localZb, 0x40, 4)), 2 * PAGE - 4, zb.rkey()));

        assertThat(zb.iova()).isZero();
        assertThat(Sge.of(localZb, 0x40, 4).addr()).isEqualTo(0x40);
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS,
            WcStatus.SUCCESS);
        assertThat(rig.ctxB.memory().read(start + 0x20, 8)).isEqualTo(rig.ctxA.memory().read(localStart + 0x10, 8));
        assertThat(rig.ctxB.memory().read(start + 2 * PAGE - 4, 4))
            .isEqualTo(rig.ctxA.memory().read(localStart + 0x40, 4));

        rig.qpA.postSend(SendWr.write(3, sgl(new Sge(0x10, 8, localZb.lkey())), start, zb.rkey()));
        assertThat(only(rig.pollA()).status()).as("a virtual address is out of range of a zero-based MR")
            .isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void shouldPlaceBytesAtAddrPlusOffsetThroughAnMrRegisteredAtAnotherIova()
    {
        // reg_mr_iova: key-relative X maps to addr + (X - iova); a 1 MiB iova shift of 2 MiB-backed memory allows
        // at most 1 MiB MR pages (ib_umem_find_best_pgsz), and a WRITE across the huge-page boundary still lands in order.
        final SimFabric fabric = new SimFabric();
        final SimDevice device = fabric.addHost("h", RuleRig.host(1L << 30, 8, 0)).addDevice("sim:h/mlx5_0",
            DeviceProfiles.connectx5());
        final SimContext ctx = device.open(device.host().host().spawn("app").capIpcLock(true));
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(8);
        final QueuePair q1 = pd.createQp(QpInitAttr.rc(cq));
        final QueuePair q2 = pd.createQp(QpInitAttr.rc(cq));
        q1.connect(q2.address(), RuleRig.ALL_REMOTE);
        q2.connect(q1.address(), RuleRig.ALL_REMOTE);
        final long huge = ctx.memory().allocate(4L << 20, Backing.HUGETLB_2M);
        final long iova = 1L << 20;
        final SimMr shifted = (SimMr)pd.regMr(huge, 4L << 20, iova, RuleRig.REMOTE_ALL);
        final long src = ctx.memory().allocate(PAGE, Backing.BASE_PAGES);
        ctx.memory().write(src, pattern(PAGE, 6));
        final MemoryRegion srcMr = pd.regMr(src, PAGE, RuleRig.LOCAL);

        q1.postSend(SendWr.write(1, sgl(sge(srcMr, src, 64)), iova + (2L << 20) - 32, shifted.rkey()));
        q1.postSend(SendWr.read(2, sgl(sge(srcMr, src + 1024, 64)), iova + (2L << 20) - 32, shifted.rkey()));

        assertThat(shifted.pageSizeBytes()).isEqualTo(1L << 20);
        assertThat(shifted.mttEntries()).isEqualTo(4);
        assertThat(cq.poll(8)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS,
            WcStatus.SUCCESS);
        assertThat(ctx.memory().read(huge + (2L << 20) - 32, 64)).isEqualTo(Arrays.copyOf(pattern(PAGE, 6), 64));
        assertThat(ctx.memory().read(src + 1024, 64)).isEqualTo(Arrays.copyOf(pattern(PAGE, 6), 64));
        assertThat(ctx.memory().read(huge + (2L << 20) - 33, 1)).isEqualTo(new byte[1]);
    }

    @Test
    void shouldLetAStaleRkeyReachTheNewMrWhenMlx5RecyclesTheMkeyOfAReusedIndex()
    {
        // mlx5's mkey cache hands a revoked mkey back with the same 32-bit key (mlx5r_umr_revoke_mr): an rkey kept
        // across dereg and a new registration that reuses the mkey reaches the NEW memory. max_mr 2 (the source MR
        // on a, one MR on b) forces reuse.
        final DeviceProfile cx5 = DeviceProfiles.connectx5();
        final DeviceProfile oneMr = cx5.withAttributes(cx5.attributes().toBuilder().maxMr(1).build());
        final RuleRig rig = RuleRig.connected(oneMr, RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(PAGE);
        rig.ctxA.memory().write(src, pattern(PAGE, 1));
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final long oldBuf = rig.bufferB(PAGE);
        final long newBuf = rig.bufferB(PAGE);
        final MemoryRegion old = rig.pdB.regMr(oldBuf, PAGE, RuleRig.REMOTE_ALL);
        final int stale = old.rkey();
        old.close();
        final MemoryRegion reused = rig.pdB.regMr(newBuf, PAGE, 0, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 32)), 64, stale));

        assertThat(reused.rkey()).isEqualTo(stale);
        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.ctxB.memory().read(newBuf + 64, 32)).isEqualTo(rig.ctxA.memory().read(src, 32));
        assertThat(rig.ctxB.memory().read(oldBuf, PAGE)).isEqualTo(new byte[PAGE]);
    }

    @Test
    void shouldRefuseAStaleRkeyWithRemAccessErrWhenMlx4AdvancesTheGenerationOfAReusedIndex()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx3(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(PAGE);
        rig.ctxA.memory().write(src, pattern(PAGE, 1));
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final long oldBuf = rig.bufferB(PAGE);
        final long newBuf = rig.bufferB(PAGE);
        final MemoryRegion old = rig.pdB.regMr(oldBuf, PAGE, RuleRig.REMOTE_ALL);
        final int stale = old.rkey();
        old.close();
        final MemoryRegion reused = rig.pdB.regMr(newBuf, PAGE, 0, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE));

        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 32)), 64, stale));

        assertThat(reused.rkey() >>> 8).as("same MPT index").isEqualTo(stale >>> 8);
        assertThat(reused.rkey()).as("another generation").isNotEqualTo(stale);
        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.ctxB.memory().read(newBuf, PAGE)).isEqualTo(new byte[PAGE]);
    }

    @Test
    void shouldRefuseVerbsOnADestroyedQpWithEinval()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        rig.qpA.close();

        final PostException e = catchThrowableOfType(PostException.class,
            () -> rig.qpA.postSend(SendWr.write(1, sgl(sge(p.srcMr, p.src, 8)), p.dst, p.dstMr.rkey())));
        final VerbsException modify = catchThrowableOfType(VerbsException.class, rig.qpA::modifyToError);

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(modify.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(p.dstBytes()).isEqualTo(new byte[4 * PAGE]);
    }

    @Test
    void shouldRefuseWithEnomemAtTheBadWrIndexWhenTheSendQueueIsFull()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final int depth = QpInitAttr.rc(rig.cqA).cap().maxSendWr();
        final List<SendWr> sends = new ArrayList<>();
        for (int i = 0; i < 2 * depth; i++)
        {
            sends.add(SendWr.send(i, sgl(sge(p.srcMr, p.src, 8))));
        }

        // No receive at b: the first SEND waits for one (rnr_retry 7) and the queue fills behind it.
        final PostException e = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(sends));

        assertThat(e).as("posting twice the queue depth is refused").isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(e.badWrIndex()).isBetween(depth, 2 * depth - 1);
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isEqualTo(e.badWrIndex());
    }

    @Test
    void shouldRefuseInlineWorkWithEnomemWhenTheSendQueueIsFull()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final int depth = QpInitAttr.rc(rig.cqA).cap().maxSendWr();
        final List<SendWr> sends = new ArrayList<>();
        for (int i = 0; i < 2 * depth; i++)
        {
            sends.add(SendWr.send(i, sgl(sge(p.srcMr, p.src, 8))).withFlags(EnumSet.of(SendFlag.SIGNALED,
                SendFlag.INLINE)));
        }

        final PostException e = catchThrowableOfType(PostException.class, () -> rig.qpA.postSend(sends));

        assertThat(e).as("posting twice the queue depth is refused, inline or not").isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(e.badWrIndex()).isBetween(depth, 2 * depth - 1);
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isEqualTo(e.badWrIndex());
    }

    @Test
    void shouldMoveTheQpToErrWithoutThrowingWhenItsCqOverflows()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        final CompletionQueue tiny = rig.ctxA.createCq(1);
        final QueuePair qp = rig.pdA.createQp(QpInitAttr.rc(tiny));
        final QueuePair peer = rig.pdB.createQp(QpInitAttr.rc(rig.cqB));
        qp.connect(peer.address(), RuleRig.ALL_REMOTE);
        peer.connect(qp.address(), RuleRig.ALL_REMOTE);
        final List<SendWr> writes = new ArrayList<>();
        for (int i = 0; i <= tiny.cqe() + 1; i++)
        {
            writes.add(SendWr.write(i, sgl(sge(p.srcMr, p.src + 8L * i, 8)), p.dst + 8L * i, p.dstMr.rkey()));
        }

        assertThatCode(() -> qp.postSend(writes)).doesNotThrowAnyException();
        assertThatCode(() -> rig.fabric.progressAll()).doesNotThrowAnyException();

        assertThat(((SimCq)tiny).overrun()).isTrue();
        assertThat(qp.state()).as("an overrun CQ puts its QPs in ERR (IBA 11.6.3, CQ error)")
            .isEqualTo(QpState.ERR);
        assertThat(tiny.poll(64)).hasSizeLessThanOrEqualTo(tiny.cqe());
        assertThat(rig.ctxB.memory().read(p.dst, 8)).isEqualTo(rig.ctxA.memory().read(p.src, 8));
    }

    /**
     * mlx5 enables atomics on a QP when it creates it, from the context's atomic_cap (ATOMIC_HCA), not from the QP's
     * qp_access_flags (providers/mlx5/verbs.c {@code create_qp}, {@code atomics_enabled}): a requester QP without
     * REMOTE_ATOMIC posts an atomic (rdma-core tests/test_atomic.py posts XRC atomics from a QP with access 0).
     */
    @Test
    void shouldPostAnAtomicFromAQpWithoutRemoteAtomicOnMlx5WhoseAtomicCapIsHca()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        rig.qpA.connect(rig.qpB.address(), EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        rig.qpB.connect(rig.qpA.address(), RuleRig.ALL_REMOTE);
        final Pair p = new Pair(rig);
        rig.ctxB.memory().writeLong(p.dst, 5);

        rig.qpA.postSend(SendWr.fetchAndAdd(1, sge(p.srcMr, p.src, 8), p.dst, p.dstMr.rkey(), 1));

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.ctxB.memory().readLong(p.dst)).isEqualTo(6);
    }

    @Test
    void shouldRefuseAMisalignedAtomicAtPostTimeWithEinvalOnRxe()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.rxe(), RuleRig.ALL_REMOTE);
        final Pair p = new Pair(rig);

        final PostException e = catchThrowableOfType(PostException.class,
            () -> rig.qpA.postSend(SendWr.fetchAndAdd(1, sge(p.srcMr, p.src, 8), p.dst + 4, p.dstMr.rkey(), 1)));

        assertThat(e).isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldCompleteASendWaitingOnRnrWithRetryExcErrWhenTheResponderQpGoesToErr()
    {
        final RuleRig rig = RuleRig.connected();
        final Pair p = new Pair(rig);
        rig.qpA.postSend(SendWr.send(1, sgl(sge(p.srcMr, p.src, 8))));
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isEqualTo(1);

        rig.qpB.modifyToError();

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isZero();
    }

    private static byte[] concat(final byte[]... parts)
    {
        int n = 0;
        for (final byte[] part : parts)
        {
            n += part.length;
        }
        final byte[] out = new byte[n];
        int at = 0;
        for (final byte[] part : parts)
        {
            System.arraycopy(part, 0, out, at, part.length);
            at += part.length;
        }
        return out;
    }
}
