package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * QP types beyond RC: UD with address handles (IBA 9.8.3, 10.2.5; ibv_create_ah(3), ibv_post_recv(3) on the GRH),
 * UC, shared receive queues (ibv_create_srq(3), the kernel's use counts), and EFA, whose driver takes UD QPs only
 * (efa_verbs.c {@code efa_create_qp}). Every refused call is checked to change nothing.
 */
class DatagramAndSrqTest
{
    private static final int QKEY = 0x11111111;

    /** Two UD QPs in RTS with Q_Key QKEY, a registered 4 KiB buffer on each side. */
    private static final class Ud
    {
        final RuleRig rig;
        final QueuePair a;
        final QueuePair b;
        final long src;
        final long dst;
        final MemoryRegion srcMr;
        final MemoryRegion dstMr;
        final AddressHandle ah;

        Ud(final DeviceProfile profile)
        {
            rig = RuleRig.unconnected(profile);
            final QpCap cap = new QpCap(64, 64, 1, 2, 0);
            a = rig.pdA.createQp(new QpInitAttr(rig.cqA, rig.cqA, QpType.UD, cap, false));
            b = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.UD, cap, false));
            for (final QueuePair qp : List.of(a, b))
            {
                final QpAttr.Builder init = QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).qkey(QKEY);
                qp.modify(init.build(), init.mask());
                final QpAttr.Builder rtr = QpAttr.builder().state(QpState.RTR);
                qp.modify(rtr.build(), rtr.mask());
                final QpAttr.Builder rts = QpAttr.builder().state(QpState.RTS).sqPsn(0);
                qp.modify(rts.build(), rts.mask());
            }
            src = rig.bufferA(8192);
            dst = rig.bufferB(8192);
            srcMr = rig.pdA.regMr(src, 8192, RuleRig.LOCAL);
            dstMr = rig.pdB.regMr(dst, 8192, RuleRig.LOCAL);
            ah = rig.pdA.createAh(AhAttr.toGid(rig.deviceB.gid()));
        }

        UdSendWr send(final long id, final int lengthBytes, final int qkey)
        {
            return new UdSendWr(SendWr.send(id, List.of(new Sge(src, lengthBytes, srcMr.lkey()))), ah, b.qpNum(),
                qkey);
        }
    }

    @Test
    void shouldDeliverADatagramAfterA40ByteGrhAndCountItInByteLen()
    {
        // ibv_post_recv(3): a UD receive buffer starts with the 40-byte GRH; IBA 9.8.3.
        final Ud u = new Ud(DeviceProfiles.connectx5());
        final byte[] payload = RuleRig.pattern(100, 3);
        u.rig.processA().write(u.src, payload);
        u.b.postRecv(RecvWr.of(7, new Sge(u.dst, 4096, u.dstMr.lkey())));
        u.a.postSendUd(List.of(u.send(1, 100, QKEY)));
        assertThat(u.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        final List<WorkCompletion> recv = u.rig.pollB();
        assertThat(recv).hasSize(1);
        assertThat(recv.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recv.get(0).byteLen()).isEqualTo(140);
        assertThat(u.rig.processB().read(u.dst + 40, 100)).isEqualTo(payload);
        final byte[] grh = u.rig.processB().read(u.dst, 40);
        assertThat(grh[0]).as("IP version 6").isEqualTo((byte)0x60);
        assertThat(grh[6]).as("next header: IBA BTH").isEqualTo((byte)0x1b);
        // IBA 8.3.1 PayLen (ib_ud_header_init): BTH 12 + DETH 8 + 100 bytes padded to 4 + ICRC 4, not the payload alone
        assertThat((grh[4] & 0xff) << 8 | grh[5] & 0xff).as("PayLen").isEqualTo(12 + 8 + 100 + 4);
        assertThat(Arrays.copyOfRange(grh, 24, 40)).as("the destination GID")
            .isEqualTo(Arrays.copyOfRange(Datagrams.grh("", u.rig.deviceB.gid(), 0), 24, 40));
    }

    @Test
    void shouldShowADeliveredDatagramsGatherAndScatterToStrictModeAndTheTrace()
    {
        // As an RC SEND's (Responder): the datagram's DMA reaches the observers. The GRH fills the receive's first 40
        // bytes (ibv_post_recv(3)), so 100 bytes of payload after a 120-byte first SGE reach the second SGE's MR.
        final Ud u = new Ud(DeviceProfiles.connectx5());
        final StrictChecker strict = new StrictChecker(false).attach(u.rig.deviceA).attach(u.rig.deviceB);
        final List<TraceEvent> trace = new ArrayList<>();
        u.rig.fabric.addTraceListener(trace::add);
        final MemoryRegion gather = u.rig.pdA.regMr(u.src, 4096, RuleRig.LOCAL);
        final MemoryRegion head = u.rig.pdB.regMr(u.dst, 4096, RuleRig.LOCAL);
        final MemoryRegion tail = u.rig.pdB.regMr(u.dst + 4096, 4096, RuleRig.LOCAL);
        u.b.postRecv(new RecvWr(7, List.of(new Sge(u.dst, 120, head.lkey()), new Sge(u.dst + 4096, 100,
            tail.lkey()))));
        u.a.postSendUd(List.of(new UdSendWr(SendWr.send(1, List.of(new Sge(u.src, 100, gather.lkey()))), u.ah,
            u.b.qpNum(), QKEY)));
        assertThat(u.rig.pollB()).extracting(WorkCompletion::status, WorkCompletion::byteLen)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(WcStatus.SUCCESS, 140L));

        gather.close();
        head.close();
        tail.close();

        assertThat(strict.warnings()).as("every MR the datagram reached saw DMA").noneMatch(w -> w.kind()
            == StrictWarning.Kind.UNUSED_MR);
        assertThat(trace).filteredOn(e -> e.category().equals("dma")).extracting(TraceEvent::name,
            TraceEvent::device).containsExactly(org.assertj.core.groups.Tuple.tuple("SEND", "sim:a/dev0"),
            org.assertj.core.groups.Tuple.tuple("SEND (responder)", "sim:b/dev0"));
        assertThat(trace).filteredOn(e -> e.name().equals("SEND (responder)")).singleElement()
            .satisfies(e -> assertThat(e.args()).containsEntry("bytes", 140L).containsEntry("qp_num", u.b.qpNum()));
    }

    @Test
    void shouldShowStrictModeADatagramGatheredThroughTheLkeyOfADeregisteredMr()
    {
        final Ud u = new Ud(DeviceProfiles.connectx5());
        final StrictChecker strict = new StrictChecker(false).attach(u.rig.deviceA).attach(u.rig.deviceB);
        final MemoryRegion gone = u.rig.pdA.regMr(u.src, 4096, RuleRig.LOCAL);
        gone.close();
        u.b.postRecv(RecvWr.of(7, new Sge(u.dst, 4096, u.dstMr.lkey())));
        u.a.postSendUd(List.of(new UdSendWr(SendWr.send(1, List.of(new Sge(u.src, 100, gone.lkey()))), u.ah,
            u.b.qpNum(), QKEY)));

        assertThat(u.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_PROT_ERR);
        assertThat(strict.warnings()).filteredOn(w -> w.kind() == StrictWarning.Kind.STALE_LKEY).singleElement()
            .satisfies(w -> assertThat(w.message()).contains("SEND wr_id 1").contains("lkey 0x"
                + Integer.toHexString(gone.lkey())).contains("deregistered"));
    }

    @Test
    void shouldTakeADatagramsReceiveFromTheSrqOfTheDestinationQp()
    {
        // ibv_create_srq(3): a UD QP created with an SRQ takes its receives from it, GRH first.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final SharedReceiveQueue srq = rig.pdB.createSrq(new SrqAttr(4, 1, 0));
        final QpCap cap = new QpCap(16, 16, 1, 1, 0);
        final QueuePair a = rig.pdA.createQp(new QpInitAttr(rig.cqA, rig.cqA, QpType.UD, cap, false));
        final QueuePair b = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.UD, cap, false, srq));
        for (final QueuePair qp : List.of(a, b))
        {
            qp.modifyToInit(EnumSet.noneOf(Access.class));
            qp.modifyToRtr(null, 0);
            qp.modifyToRts(0, 0);
        }
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.LOCAL);
        rig.processA().write(src, RuleRig.pattern(64, 2));
        srq.postRecv(List.of(RecvWr.of(5, new Sge(dst, 4096, d.lkey()))));
        a.postSendUd(List.of(new UdSendWr(SendWr.send(1, List.of(new Sge(src, 64, s.lkey()))),
            rig.pdA.createAh(AhAttr.toGid(rig.deviceB.gid())), b.qpNum(), 0)));
        final List<WorkCompletion> wcs = rig.pollB();
        assertThat(wcs).extracting(WorkCompletion::wrId).containsExactly(5L);
        assertThat(wcs.get(0).qpNum()).isEqualTo(b.qpNum());
        assertThat(wcs.get(0).byteLen()).isEqualTo(104);
        assertThat(rig.processB().read(dst + 40, 64)).isEqualTo(RuleRig.pattern(64, 2));
        assertThat(b.query().qkey()).as("modifyToInit gives a UD QP Q_Key 0").isZero();
    }

    @Test
    void shouldRefuseRdmaOnUdAndSendsWithoutADestinationAtPostTime()
    {
        // IBA 9.8.3: UD carries SEND and SEND_WITH_IMM only; a provider without its own rule refuses the rest at post
        // (mlx5 and rxe post it and fail it at the device: QpTypeOpcodesTest).
        final Ud u = new Ud(DeviceProfiles.byName("bnxt_re"));
        final SendWr write = SendWr.write(1, List.of(new Sge(u.src, 8, u.srcMr.lkey())), u.dst, u.dstMr.rkey());
        final PostException e = catchThrowableOfType(PostException.class,
            () -> u.a.postSendUd(List.of(new UdSendWr(write, u.ah, u.b.qpNum(), QKEY))));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).contains("UD QP");
        final PostException noDest = catchThrowableOfType(PostException.class,
            () -> u.a.postSend(SendWr.send(2, List.of(new Sge(u.src, 8, u.srcMr.lkey())))));
        assertThat(noDest.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(((SimQp)u.a).sendsWaiting()).as("nothing was queued").isZero();
        assertThat(u.rig.pollA()).isEmpty();
    }

    @Test
    void shouldSendNoPacketAndRaiseNoErrorForADatagramAbovePathMtu()
    {
        // IBA C10-93.1.1 (rxe fake_udp_send): the send completes with success; nothing reaches the receiver.
        final Ud u = new Ud(DeviceProfiles.rxe());
        u.b.postRecv(RecvWr.of(7, new Sge(u.dst, 8192, u.dstMr.lkey())));
        u.a.postSendUd(List.of(u.send(1, 4097, QKEY)));
        assertThat(u.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(u.rig.pollB()).isEmpty();
        assertThat(((SimQp)u.b).receivesPosted()).as("the receive is still posted").isEqualTo(1);
    }

    @Test
    void shouldDropADatagramWithTheWrongQkeyOrWithoutAReceive()
    {
        // IBA 10.2.5: a Q_Key mismatch drops the packet; UD has no RNR: no receive, the datagram is lost.
        final Ud u = new Ud(DeviceProfiles.connectx5());
        u.a.postSendUd(List.of(u.send(1, 8, QKEY)));
        assertThat(u.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(u.rig.deviceB.counter(SimCounter.OUT_OF_BUFFER)).isEqualTo(1);
        u.b.postRecv(RecvWr.of(7, new Sge(u.dst, 4096, u.dstMr.lkey())));
        u.a.postSendUd(List.of(u.send(2, 8, QKEY + 1)));
        assertThat(u.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(u.rig.pollB()).isEmpty();
        assertThat(((SimQp)u.b).receivesPosted()).isEqualTo(1);
    }

    @Test
    void shouldCompleteAReceiveTooSmallForGrhAndPayloadWithLocalLengthError()
    {
        // ibv_post_recv(3): the buffer must hold the GRH and the payload; IBA 10.8.3 local length error.
        final Ud u = new Ud(DeviceProfiles.connectx5());
        u.b.postRecv(RecvWr.of(7, new Sge(u.dst, 60, u.dstMr.lkey())));
        u.a.postSendUd(List.of(u.send(1, 30, QKEY)));
        assertThat(u.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(u.rig.pollB()).extracting(WorkCompletion::status).containsExactly(WcStatus.LOC_LEN_ERR);
    }

    @Test
    void shouldRefuseAnAddressHandleWithoutAGidOnRoceOrForAMissingPort()
    {
        // rdma_check_ah_attr / rxe_ah_chk_attr: RoCE needs the GRH; the port must exist.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final VerbsException noGid = catchThrowableOfType(VerbsException.class,
            () -> rig.pdA.createAh(new AhAttr(null, 5, 1, 0)));
        assertThat(noGid.errnoName()).isEqualTo(Errno.EINVAL);
        final VerbsException port = catchThrowableOfType(VerbsException.class,
            () -> rig.pdA.createAh(new AhAttr(rig.deviceB.gid(), 0, 2, 0)));
        assertThat(port.errnoName()).isEqualTo(Errno.EINVAL);
        rig.qpA.close();
        rig.pdA.dealloc();
        assertThat(rig.pdA.isClosed()).as("no address handle was left behind").isTrue();
    }

    @Test
    void shouldRefuseReadOnUcAndCarryWritesOnIt()
    {
        // IBA 9.8.3: UC carries SEND and RDMA WRITE, no RDMA READ and no atomics; a provider without its own rule
        // refuses at post (mlx5 and rxe post it and fail it at the device: QpTypeOpcodesTest), as rdmavt's
        // rvt_qp_valid_operation does on hfi1.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("hfi1"));
        final QueuePair a = rig.pdA.createQp(QpInitAttr.rc(rig.cqA).withType(QpType.UC));
        final QueuePair b = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withType(QpType.UC));
        a.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(a.address(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL);
        final PostException read = catchThrowableOfType(PostException.class,
            () -> a.postSend(SendWr.read(1, List.of(new Sge(src, 8, s.lkey())), dst, d.rkey())));
        assertThat(read.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(read.detail()).contains("UC QP");
        rig.processA().write(src, "uc".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        a.postSend(SendWr.write(2, List.of(new Sge(src, 2, s.lkey())), dst, d.rkey()));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.processB().read(dst, 2)).isEqualTo("uc".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    @Test
    void shouldDropAUcWriteTheResponderRefusesWithoutNakOrError()
    {
        // IBA 9.8.3: UC is unacknowledged; rxe_receiver drops a UC packet with a bad rkey (no SRQ): the requester
        // completes with success, the responder stays in RTS and completes nothing.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.rxe());
        final QueuePair a = rig.pdA.createQp(QpInitAttr.rc(rig.cqA).withType(QpType.UC));
        final QueuePair b = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withType(QpType.UC));
        a.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(a.address(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        rig.processA().write(src, RuleRig.pattern(8, 5));
        a.postSend(SendWr.write(1, List.of(new Sge(src, 8, s.lkey())), dst, d.rkey()));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.pollB()).isEmpty();
        assertThat(b.state()).isEqualTo(QpState.RTS);
        assertThat(a.state()).isEqualTo(QpState.RTS);
        assertThat(rig.processB().read(dst, 8)).as("nothing was placed").isEqualTo(new byte[8]);
    }

    @Test
    void shouldNumberABasicSrqAsTheDevicesProviderDoes()
    {
        // mlx5_get_srq_num numbers any SRQ; mlx4_get_srq_num only XRC SRQs; rxe has no get_srq_num (dummy_ops.c).
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.connectx3(),
            DeviceProfiles.rxe()))
        {
            final RuleRig rig = RuleRig.unconnected(p);
            final SharedReceiveQueue a = rig.pdB.createSrq(new SrqAttr(8, 1, 0));
            final SharedReceiveQueue b = rig.pdB.createSrq(new SrqAttr(8, 1, 0));
            if (p.follows(ProviderRule.SRQ_NUM_OF_ANY_SRQ))
            {
                assertThat(a.srqNum()).as(p.name()).isPositive().isNotEqualTo(b.srqNum());
                continue;
            }
            final VerbsException e = catchThrowableOfType(VerbsException.class, a::srqNum);
            assertThat(e).as(p.name()).isNotNull();
            assertThat(e.errno()).as(p.name()).isEqualTo(Errno.EOPNOTSUPP.code());
            assertThat(e.getMessage()).as(p.name()).contains(p.attributes().has(dev.rnicsim.verbs.DeviceCap.XRC)
                ? "numbers only XRC SRQs" : "has no XRC");
        }
    }

    @Test
    void shouldFeedEveryQpOfAnSrqFromItsOneQueueInPostedOrder()
    {
        // ibv_create_srq(3): QPs created with an SRQ take their receives from it; mlx5 gave such a QP a receive queue
        // of 0 entries, which its post_recv finds full (ENOMEM; rxe_post_recv refuses it with EINVAL).
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final SharedReceiveQueue srq = rig.pdB.createSrq(new SrqAttr(8, 1, 0));
        final QueuePair b1 = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withSrq(srq));
        final QueuePair b2 = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withSrq(srq));
        final QueuePair a2 = rig.pdA.createQp(QpInitAttr.rc(rig.cqA));
        rig.qpA.connect(b1.address(), RuleRig.ALL_REMOTE);
        b1.connect(rig.qpA.address(), RuleRig.ALL_REMOTE);
        a2.connect(b2.address(), RuleRig.ALL_REMOTE);
        b2.connect(a2.address(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.LOCAL);
        final PostException own = catchThrowableOfType(PostException.class,
            () -> b1.postRecv(RecvWr.of(1, new Sge(dst, 64, d.lkey()))));
        assertThat(own.errnoName()).isEqualTo(Errno.ENOMEM);
        srq.postRecv(List.of(RecvWr.of(10, new Sge(dst, 64, d.lkey())), RecvWr.of(11, new Sge(dst + 64, 64,
            d.lkey()))));
        a2.postSend(SendWr.send(1, List.of(new Sge(src, 8, s.lkey()))));
        rig.qpA.postSend(SendWr.send(2, List.of(new Sge(src, 8, s.lkey()))));
        final List<WorkCompletion> recv = rig.pollB();
        assertThat(recv).extracting(WorkCompletion::wrId).containsExactly(10L, 11L);
        assertThat(recv).extracting(WorkCompletion::qpNum).containsExactly(b2.qpNum(), b1.qpNum());
        assertThat(srq.receivesPosted()).isZero();
    }

    @Test
    void shouldFireTheSrqLimitEventOnceAndDisarmIt()
    {
        // ibv_modify_srq(3), IBA 10.2.9.5: an armed limit fires IBV_EVENT_SRQ_LIMIT_REACHED when the receives drop
        // below it, and the SRQ is disarmed (limit 0).
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final SimSrq srq = (SimSrq)rig.pdB.createSrq(new SrqAttr(8, 1, 0));
        final QueuePair b = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withSrq(srq));
        rig.qpA.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(rig.qpA.address(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion s = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion d = rig.pdB.regMr(dst, 4096, RuleRig.LOCAL);
        for (int i = 0; i < 3; i++)
        {
            srq.postRecv(List.of(RecvWr.of(i, new Sge(dst, 64, d.lkey()))));
        }
        srq.modifyLimit(2);
        rig.qpA.postSend(SendWr.send(10, List.of(new Sge(src, 8, s.lkey()))));
        rig.pollA();
        assertThat(srq.limitEvents()).as("3 -> 2 receives: not below the limit").isZero();
        rig.qpA.postSend(SendWr.send(11, List.of(new Sge(src, 8, s.lkey()))));
        rig.pollA();
        assertThat(srq.limitEvents()).isEqualTo(1);
        assertThat(srq.query().srqLimit()).as("disarmed").isZero();
        rig.qpA.postSend(SendWr.send(12, List.of(new Sge(src, 8, s.lkey()))));
        rig.pollA();
        assertThat(srq.limitEvents()).as("fires once per arming").isEqualTo(1);
    }

    @Test
    void shouldRefuseToDestroyAnSrqOrItsPdWhileUsersLive()
    {
        // ib_destroy_srq_user: EBUSY while the SRQ's use count (its QPs) is not 0; ib_dealloc_pd_user likewise.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final ProtectionDomain pd = rig.ctxB.allocPd();
        final CompletionQueue cq = rig.cqB;
        final SharedReceiveQueue srq = pd.createSrq(new SrqAttr(4, 1, 2));
        final QueuePair qp = pd.createQp(QpInitAttr.rc(cq).withSrq(srq));
        final VerbsException busy = catchThrowableOfType(VerbsException.class, srq::close);
        assertThat(busy.errnoName()).isEqualTo(Errno.EBUSY);
        assertThat(srq.isClosed()).isFalse();
        assertThat(srq.query()).isEqualTo(new SrqAttr(7, 1, 2)); // max_wr 4 held as roundup_pow_of_two(5) - 1
        qp.close();
        final AddressHandle ah = pd.createAh(AhAttr.toGid(rig.deviceA.gid()));
        final VerbsException pdBusy = catchThrowableOfType(VerbsException.class, pd::dealloc);
        assertThat(pdBusy.errnoName()).isEqualTo(Errno.EBUSY);
        assertThat(pdBusy.detail()).contains("1 SRQ(s)").contains("1 address handle(s)");
        srq.close();
        ah.close();
        pd.dealloc();
        assertThat(pd.isClosed()).isTrue();
    }

    @Test
    void shouldRefuseSrqLimitsAboveMaxWrAndSrqsOnADeviceWithout()
    {
        // rxe_srq_chk_attr: srq_limit > max_wr is EINVAL (max_wr 4 is held as 7 on mlx5: roundup_pow_of_two(5) - 1);
        // a device reporting max_srq 0 has no SRQs (EFA).
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final SharedReceiveQueue srq = rig.pdB.createSrq(new SrqAttr(4, 1, 0));
        assertThat(catchThrowableOfType(VerbsException.class, () -> srq.modifyLimit(8)).errnoName())
            .isEqualTo(Errno.EINVAL);
        assertThat(srq.query().srqLimit()).isZero();
        srq.modifyLimit(3);
        assertThat(srq.query().srqLimit()).isEqualTo(3);
        final RuleRig efa = RuleRig.unconnected(DriverProfiles.efa());
        assertThat(catchThrowableOfType(VerbsException.class, () -> efa.pdA.createSrq(new SrqAttr(4, 1, 0)))
            .errnoName()).isEqualTo(Errno.EOPNOTSUPP);
    }

    @Test
    void shouldCarryDatagramsOnEfaWhoseDriverTakesUdQpsOnly()
    {
        // efa_verbs.c efa_create_qp: UD (and the driver's SRD) only; RC stays EOPNOTSUPP.
        final Ud u = new Ud(DriverProfiles.efa());
        u.rig.processA().write(u.src, RuleRig.pattern(16, 1));
        u.b.postRecv(RecvWr.of(7, new Sge(u.dst, 4096, u.dstMr.lkey())));
        u.a.postSendUd(List.of(u.send(1, 16, QKEY)));
        assertThat(u.rig.pollB()).extracting(WorkCompletion::byteLen).containsExactly(56L);
        assertThat(u.rig.processB().read(u.dst + 40, 16)).isEqualTo(RuleRig.pattern(16, 1));
    }
}
