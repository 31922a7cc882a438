package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a RoCE packet comes from and goes to: the source GID an address vector names (an empty entry is ENODATA,
 * {@code rdma_get_gid_attr}; no GRH is EINVAL, {@code rdma_check_ah_attr}), the network header a UD receive starts
 * with ({@link ReceivedGrh}: an IPv4 header in bytes 20..39 from an IPv4-mapped RoCE v2 GID), the path MTU of a
 * connection between ports of different netdevs, and each port's own GID on a two-port InfiniBand device.
 */
class RoceAddressingTest
{
    private static final int QKEY = 0x11111111;

    private static VerbsException refused(final Runnable r)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, r::run);
        assertThat(e).as("the call fails").isNotNull();
        return e;
    }

    /** A UD datagram of 4 bytes from A's GID sgidIndex to B's dgid; the 40 bytes B's receive starts with. */
    private static byte[] receivedHeader(final RuleRig rig, final int sgidIndex, final String dgid, final boolean imm)
    {
        final long dst = sendDatagram(rig, sgidIndex, dgid, imm);
        assertThat(rig.pollB()).extracting(WorkCompletion::status, WorkCompletion::byteLen)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(WcStatus.SUCCESS, 44L));
        assertThat(rig.processB().read(dst + 40, 4)).as("the payload after the 40 bytes").containsExactly('I', 'P',
            'V', '4');
        return rig.processB().read(dst, 40);
    }

    /** Sends the datagram; @return B's receive buffer. */
    private static long sendDatagram(final RuleRig rig, final int sgidIndex, final String dgid, final boolean imm)
    {
        final QpCap cap = new QpCap(8, 8, 1, 1, 0);
        final QueuePair a = rig.pdA.createQp(new QpInitAttr(rig.cqA, rig.cqA, QpType.UD, cap, false));
        final QueuePair b = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.UD, cap, false));
        for (final QueuePair qp : List.of(a, b))
        {
            final QpAttr.Builder init = QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).qkey(QKEY);
            qp.modify(init.build(), init.mask());
            final QpAttr.Builder rtr = QpAttr.builder().state(QpState.RTR);
            qp.modify(rtr.build(), rtr.mask());
            final QpAttr.Builder rts = QpAttr.builder().state(QpState.RTS).sqPsn(0);
            qp.modify(rts.build(), rts.mask());
        }
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 4096, RuleRig.LOCAL);
        rig.processA().write(src, new byte[] {'I', 'P', 'V', '4'});
        b.postRecv(RecvWr.of(7, new Sge(dst, 256, dstMr.lkey())));
        final SendWr send = imm ? SendWr.sendWithImm(1, List.of(new Sge(src, 4, srcMr.lkey())), 9)
            : SendWr.send(1, List.of(new Sge(src, 4, srcMr.lkey())));
        a.postSendUd(List.of(new UdSendWr(send, rig.pdA.createAh(new AhAttr(dgid, 0, 1, sgidIndex)), b.qpNum(),
            QKEY)));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        return dst;
    }

    @Test
    void aDatagramFromARoceV1GidNeverReachesAPortThatTakesRoceV2Only()
    {
        final RuleRig v1 = RuleRig.unconnectedPair(DeviceProfiles.byName("bnxt_re"), DeviceProfiles.byName("rxe"));
        sendDatagram(v1, 0, v1.deviceB.gid(), false);
        assertThat(v1.pollB()).as("the sender's completion is a success; nothing arrives").isEmpty();

        final RuleRig v2 = RuleRig.unconnectedPair(DeviceProfiles.byName("bnxt_re"), DeviceProfiles.byName("rxe"));
        sendDatagram(v2, 1, v2.deviceB.gid(), false);
        assertThat(v2.pollB()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
    }

    @Test
    void aDatagramFromAnIpv4MappedRoceV2GidArrivesWithAnIpv4HeaderInBytes20To39()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("rxe"));
        rig.deviceA.netdev().ipv4("10.1.16.61");
        rig.deviceB.netdev().ipv4("10.1.16.62");

        final byte[] h = receivedHeader(rig, 1, "0000:0000:0000:0000:0000:ffff:0a01:103e", false);

        assertThat(java.util.Arrays.copyOfRange(h, 0, 20)).as("the reserved 20 bytes").containsOnly(0);
        assertThat(h[20]).as("version 4, IHL 5").isEqualTo((byte)0x45);
        assertThat(((h[22] & 0xff) << 8) | (h[23] & 0xff)).as("IP 20 + UDP 8 + BTH 12 + DETH 8 + 4 + ICRC 4")
            .isEqualTo(56);
        assertThat(h[29]).as("protocol UDP").isEqualTo((byte)17);
        assertThat(java.util.Arrays.copyOfRange(h, 32, 36)).containsExactly(10, 1, 16, 61);
        assertThat(java.util.Arrays.copyOfRange(h, 36, 40)).containsExactly(10, 1, 16, 62);
        int sum = 0;
        for (int i = 20; i < 40; i += 2)
        {
            sum += ((h[i] & 0xff) << 8) | (h[i + 1] & 0xff);
        }
        while (sum >>> 16 != 0)
        {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        assertThat(sum).as("the header checksum holds (get_grh_header_version believes it)").isEqualTo(0xffff);
        assertThat(ReceivedGrh.holdsIpv4(h)).isTrue();
    }

    @Test
    void aDatagramFromALinkLocalGidArrivesWithAnIpv6HeaderOfUdpOnRoceV2AndTheBthOnRoceV1()
    {
        final RuleRig rxe = RuleRig.unconnected(DeviceProfiles.byName("rxe"));
        final byte[] v2 = receivedHeader(rxe, 0, rxe.deviceB.gid(), false);
        assertThat(v2[0] >>> 4).as("IPv6").isEqualTo(6);
        assertThat(v2[6]).as("next header UDP").isEqualTo((byte)17);
        assertThat((v2[4] & 0xff) << 8 | v2[5] & 0xff).as("Payload Length: UDP 8 + BTH 12 + DETH 8 + 4 + ICRC 4")
            .isEqualTo(36);
        assertThat(GidTable.text(java.util.Arrays.copyOfRange(v2, 8, 24))).isEqualTo(rxe.deviceA.gid());
        assertThat(ReceivedGrh.holdsIpv4(v2)).isFalse();

        final RuleRig bnxt = RuleRig.unconnected(DeviceProfiles.byName("bnxt_re"));
        final byte[] v1 = receivedHeader(bnxt, 0, bnxt.deviceB.gid(), true);
        assertThat(v1[6]).as("RoCE v1: the GRH's next header is the BTH").isEqualTo((byte)0x1b);
        assertThat((v1[4] & 0xff) << 8 | v1[5] & 0xff).as("PayLen: BTH 12 + DETH 8 + ImmDt 4 + 4 + ICRC 4")
            .isEqualTo(32);
        assertThat(receivedHeader(bnxt, 1, bnxt.deviceB.gid(), false)[6]).as("index 1 is RoCE v2")
            .isEqualTo((byte)17);

        final RuleRig ib = RuleRig.unconnected(DeviceProfiles.connectx5());
        assertThat(receivedHeader(ib, 0, ib.deviceB.gid(), false)[6]).as("InfiniBand").isEqualTo((byte)0x1b);
    }

    @Test
    void anAddressVectorWhoseSourceGidEntryIsEmptyIsEnodataAndOneWithoutAGrhOnRoceIsEinval()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("rxe"));
        final VerbsException empty = refused(() -> rig.pdA.createAh(new AhAttr(rig.deviceB.gid(), 0, 1, 1)));
        assertThat(empty.errnoName()).isEqualTo(Errno.ENODATA);
        assertThat(empty.getMessage()).contains("sgid_index=1", "rdma_get_gid_attr", "no IPv4 address", "0 to 0");
        final VerbsException past = refused(() -> rig.pdA.createAh(new AhAttr(rig.deviceB.gid(), 0, 1, 1024)));
        assertThat(past.errnoName()).as("past gid_tbl_len").isEqualTo(Errno.EINVAL);
        final VerbsException bare = refused(() -> rig.pdA.createAh(new AhAttr(null, 1, 1, 0)));
        assertThat(bare.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(bare.getMessage()).contains("rdma_check_ah_attr");

        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        final VerbsException rtr = refused(() -> ProgramRtr.modifyToRtr((SimQp)rig.qpA, rig.qpB.address(), 12, 3,
            1));
        assertThat(rtr.errnoName()).as("the RTR's address vector").isEqualTo(Errno.ENODATA);
        final QpAttr.Builder noGrh = QpAttr.builder().state(QpState.RTR).av(new AhAttr(null, 1, 1, 0)).pathMtu(3)
            .destQpNum(rig.qpB.qpNum()).rqPsn(0).maxDestRdAtomic(1).minRnrTimer(12);
        assertThat(refused(() -> rig.qpA.modify(noGrh.build(), noGrh.mask())).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(rig.qpA.state()).as("nothing changed").isEqualTo(QpState.INIT);

        rig.deviceA.netdev().ipv4("10.0.0.1");
        ProgramRtr.modifyToRtr((SimQp)rig.qpA, rig.qpB.address(), 12, 3, 1);
        assertThat(rig.qpA.state()).as("with an IPv4 address, index 1 is valid").isEqualTo(QpState.RTR);
    }

    @Test
    void aConnectionBetweenAJumboNetdevAndA1500ByteOneTakesTheSmallerActiveMtu()
    {
        final DeviceProfile rxe = DeviceProfiles.byName("rxe");
        final RuleRig rig = RuleRig.unconnectedPair(rxe, rxe);
        rig.deviceA.netdev().mtuBytes(9000);
        assertThat(RoceWire.connectPathMtu(rig.deviceA, null)).as("A's port alone").isEqualTo(QpAttr.MTU_4096);
        assertThat(RoceWire.connectPathMtu(rig.deviceA, rig.deviceB)).as("both ends").isEqualTo(3);
        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        rig.qpA.modifyToRtr(rig.qpB.address(), 12);
        assertThat(rig.qpA.query().pathMtu()).isEqualTo(3);
    }

    @Test
    void theFabricsPathMtuCapsAQpsPathMtuSoItsSmallerPacketsPassTheNetdev()
    {
        final DeviceProfile rxe = DeviceProfiles.byName("rxe");
        final RuleRig rig = RuleRig.unconnectedPair(rxe, rxe);
        rig.fabric.pathMtuBytes(1024);
        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        rig.qpB.modifyToInit(RuleRig.REMOTE_ALL);
        ProgramRtr.modifyToRtr((SimQp)rig.qpA, rig.qpB.address(), 12, QpAttr.MTU_4096, 0);
        ProgramRtr.modifyToRtr((SimQp)rig.qpB, rig.qpA.address(), 12, QpAttr.MTU_4096, 0);
        final QpAttr.Builder rts = QpAttr.builder().state(QpState.RTS).timeout(1).retryCnt(1).rnrRetry(7).sqPsn(0)
            .maxRdAtomic(1);
        rig.qpA.modify(rts.build(), rts.mask());
        rig.qpB.modify(rts.build(), rts.mask());
        assertThat(RoceWire.pathMtuBytes((SimQp)rig.qpA)).isEqualTo(1024);
        final long src = rig.bufferA(8192);
        final MemoryRegion mr = rig.pdA.regMr(src, 8192, RuleRig.LOCAL);
        final long dst = rig.bufferB(8192);
        final MemoryRegion rmr = rig.pdB.regMr(dst, 8192, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, 4096, mr.lkey())), dst, rmr.rkey()));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).as("1024-byte packets fit 1500-byte frames")
            .containsExactly(WcStatus.SUCCESS);
    }

    @Test
    void eachPortOfATwoPortInfinibandDeviceHasItsOwnGid()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("connectx3"));
        final byte[] port1 = rig.ctxA.queryGid(1, 0);
        final byte[] port2 = rig.ctxA.queryGid(2, 0);
        assertThat(GidTable.text(port1)).isEqualTo(rig.deviceA.gid());
        assertThat(port2).isNotEqualTo(port1);
        assertThat(GidTable.text(port2)).startsWith("fe80:0000:0000:0000:");
        assertThat(rig.fabric.deviceByGid(GidTable.text(port2))).as("port 2's GID names the device")
            .isSameAs(rig.deviceA);
        assertThat(rig.fabric.deviceByGid(GidTable.text(port2))).isNotSameAs(rig.deviceB);
        assertThat(GidTable.text(rig.ctxB.queryGid(2, 0))).as("no GUID of the fabric is given twice")
            .isNotEqualTo(GidTable.text(port2)).isNotEqualTo(rig.deviceB.gid());
        assertThat(rig.ctxA.queryGidTable(512)).hasSize(2);
    }
}
