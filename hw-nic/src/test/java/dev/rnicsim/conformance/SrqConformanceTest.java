package dev.rnicsim.conformance;

import static dev.rnicsim.conformance.Rig.ALL_REMOTE;
import static dev.rnicsim.conformance.Rig.LOCAL;
import static dev.rnicsim.conformance.Rig.PAGE;
import static dev.rnicsim.conformance.Rig.pattern;
import static dev.rnicsim.conformance.Rig.sge;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.XrcDomain;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Shared receive queues (ibv_create_srq(3), ibv_post_srq_recv(3), ibv_modify_srq(3), ibv_query_srq(3)) on every
 * device of the suite: an RC QP created with an SRQ takes its receives from it in posting order, the SRQ stays busy
 * while the QP lives (EBUSY, the kernel's {@code ib_destroy_srq_user}), and ibv_modify_srq refuses a limit above
 * max_wr (EINVAL, the kernel's {@code ib_modify_srq} checks through the driver: rxe {@code rxe_srq_chk_attr}, mlx5
 * {@code mlx5_ib_modify_srq}). A device without SRQs (max_srq 0) skips, as rdma-core's tests do.
 */
class SrqConformanceTest
{
    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    private static VerbsException refused(final Runnable verb)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, verb::run);
        assertThat(e).as("the verb fails").isNotNull();
        return e;
    }

    /** An SRQ on side B, or the test skips where the device or backend has none (upstream's skip). */
    static SharedReceiveQueue srqOrSkip(final Rig rig, final SrqAttr attr)
    {
        assumeTrue(rig.attributes.maxSrq() > 0, rig.device.name() + " has no SRQs (max_srq 0)");
        try
        {
            return rig.pdB.createSrq(attr);
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "the backend has no SRQs: " + e.getMessage());
            throw e;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldCompleteSendsIntoTheSrqsReceivesInPostingOrderAndStayBusyWhileItsQpLives(final String name)
    {
        try (Rig rig = Rig.unconnected(name))
        {
            final SharedReceiveQueue srq = srqOrSkip(rig, new SrqAttr(16, 1, 0));
            final QueuePair responder = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withSrq(srq));
            assertThat(responder.srq()).isSameAs(srq);
            rig.qpA.connect(responder.address(), ALL_REMOTE);
            responder.connect(rig.qpA.address(), ALL_REMOTE);

            final long recv = rig.bufferB(2 * PAGE);
            final MemoryRegion recvMr = rig.pdB.regMr(recv, 2 * PAGE, LOCAL);
            srq.postRecv(List.of(RecvWr.of(1, sge(recvMr, recv, 64)), RecvWr.of(2, sge(recvMr, recv + PAGE, 64))));
            final long send = rig.bufferA(PAGE);
            final MemoryRegion sendMr = rig.pdA.regMr(send, PAGE, LOCAL);
            rig.memA.write(send, pattern(32, 1));
            rig.memA.write(send + 32, pattern(32, 2));
            rig.qpA.postSend(List.of(SendWr.send(10, List.of(sge(sendMr, send, 32))),
                SendWr.send(11, List.of(sge(sendMr, send + 32, 32)))));
            for (final long wrId : new long[] {10, 11})
            {
                final WorkCompletion wc = rig.awaitA();
                assertThat(wc.status()).as(wc.toString()).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.wrId()).isEqualTo(wrId);
            }
            for (final long wrId : new long[] {1, 2})
            {
                final WorkCompletion wc = rig.awaitB();
                assertThat(wc.status()).as(wc.toString()).isEqualTo(WcStatus.SUCCESS);
                assertThat(wc.opcode()).isEqualTo(WcOpcode.RECV);
                assertThat(wc.wrId()).as("the SRQ's receives in posting order").isEqualTo(wrId);
                assertThat(wc.byteLen()).isEqualTo(32);
            }
            assertThat(rig.memB.read(recv, 32)).isEqualTo(pattern(32, 1));
            assertThat(rig.memB.read(recv + PAGE, 32)).isEqualTo(pattern(32, 2));

            assertThat(refused(srq::close).errnoName()).as("a QP still takes its receives from it")
                .isEqualTo(Errno.EBUSY);
            assertThat(srq.isClosed()).isFalse();
            responder.close();
            srq.close();
            assertThat(srq.isClosed()).isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldReportTheGrantedAttributesAndRefuseALimitAboveMaxWr(final String name)
    {
        try (Rig rig = Rig.unconnected(name))
        {
            final SharedReceiveQueue srq = srqOrSkip(rig, new SrqAttr(16, 1, 0));
            final SrqAttr granted = srq.query();
            assertThat(granted.maxWr()).as("at least what was asked").isGreaterThanOrEqualTo(16);
            assertThat(granted.maxSge()).isGreaterThanOrEqualTo(1);
            assertThat(granted.srqLimit()).isZero();
            srq.modifyLimit(4);
            assertThat(srq.query().srqLimit()).isEqualTo(4);
            assertThat(refused(() -> srq.modifyLimit(granted.maxWr() + 1)).errnoName()).isEqualTo(Errno.EINVAL);
            assertThat(srq.query().srqLimit()).as("a refused modify changes nothing").isEqualTo(4);
        }
    }

    /**
     * XRC SRQs (ibv_create_srq_ex(3) of type IBV_SRQT_XRC, ibv_get_srq_num(3), ibv_open_xrcd(3)): each XRC SRQ of a
     * domain gets its own number, the one an XRC_SEND QP names; the domain stays busy while an XRC SRQ of it lives
     * (EBUSY, the kernel's {@code ib_dealloc_xrcd_user} checks the use count) and closes once they are destroyed. A
     * device without XRC skips, as rdma-core's XRC tests do.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldNumberEachXrcSrqAndKeepItsDomainBusyWhileOneLives(final String name)
    {
        try (Rig rig = Rig.unconnected(name))
        {
            assumeTrue(rig.attributes.maxSrq() > 0, rig.device.name() + " has no SRQs (max_srq 0)");
            final XrcDomain xrcd;
            try
            {
                xrcd = rig.ctxB.openXrcd();
            }
            catch (final VerbsException e)
            {
                assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "Create XRCD is not supported: " + e.getMessage());
                throw e;
            }
            final SharedReceiveQueue first = rig.pdB.createXrcSrq(xrcd, rig.cqB, new SrqAttr(16, 1, 0));
            final SharedReceiveQueue second = rig.pdB.createXrcSrq(xrcd, rig.cqB, new SrqAttr(16, 1, 0));
            assertThat(first.xrcd()).isSameAs(xrcd);
            assertThat(first.srqNum()).as("each XRC SRQ has its own number").isNotEqualTo(second.srqNum());
            assertThat(first.srqNum()).as("the number is stable").isEqualTo(first.srqNum());

            assertThat(refused(xrcd::close).errnoName()).isEqualTo(Errno.EBUSY);
            assertThat(xrcd.isClosed()).as("a refused close leaves the domain open").isFalse();
            first.close();
            second.close();
            xrcd.close();
            assertThat(xrcd.isClosed()).isTrue();
        }
    }
}
