package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.GidType;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PortAttributes;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A RoCE port as the kernel reports it: the active MTU from the netdev's MTU ({@link PortMtuRule}), the GID table from
 * its addresses and the driver's RoCE types ({@link GidTable}), and what the link does with packets the netdev cannot
 * carry or a RoCE version the other port does not take ({@link RoceWire}).
 */
class RocePortTest
{
    private static VerbsException refused(final Runnable r)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, r::run);
        assertThat(e).as("the call fails").isNotNull();
        return e;
    }

    @Test
    void eachDriversActiveMtuFollowsItsNetdevByItsOwnRule()
    {
        // iboe_get_mtu: 1500 - 96 = 1404 -> 1024; 2100 - 96 = 2004 -> 1024; 9000 -> 4096
        assertThat(PortMtuRule.IBOE_HEADERS.activeMtu(1500, 5)).isEqualTo(3);
        assertThat(PortMtuRule.IBOE_HEADERS.activeMtu(2100, 5)).isEqualTo(3);
        assertThat(PortMtuRule.IBOE_HEADERS.activeMtu(2200, 5)).isEqualTo(4);
        assertThat(PortMtuRule.IBOE_HEADERS.activeMtu(9000, 5)).isEqualTo(5);
        // rxe: less RXE_MAX_HDR_LENGTH (80): 2128 -> 2048, 2127 -> 1024
        assertThat(PortMtuRule.RXE_HEADERS.activeMtu(2128, 5)).isEqualTo(4);
        assertThat(PortMtuRule.RXE_HEADERS.activeMtu(2127, 5)).isEqualTo(3);
        // ib_mtu_int_to_enum(netdev mtu): no headers subtracted, 2100 -> 2048
        assertThat(PortMtuRule.NETDEV.activeMtu(2100, 5)).isEqualTo(4);
        assertThat(PortMtuRule.NETDEV.activeMtu(1500, 5)).isEqualTo(3);
        assertThat(PortMtuRule.NETDEV_MAX_TOO.maxMtu(1500, 5)).as("siw, erdma: max_mtu too").isEqualTo(3);
        assertThat(PortMtuRule.NETDEV.maxMtu(1500, 5)).isEqualTo(5);
        assertThat(PortMtuRule.LINK.activeMtu(1500, 5)).as("an InfiniBand link ignores netdevs").isEqualTo(5);
        // a netdev too small for 256 bytes of payload still reports 256 (hns: IB_MTU_256)
        assertThat(PortMtuRule.IBOE_HEADERS.activeMtu(300, 5)).isEqualTo(1);
    }

    @Test
    void theProfilesPickTheirDriversRule()
    {
        assertThat(DeviceProfiles.byName("rxe").portMtuRule()).isEqualTo(PortMtuRule.RXE_HEADERS);
        assertThat(DeviceProfiles.byName("bnxt_re").portMtuRule()).isEqualTo(PortMtuRule.IBOE_HEADERS);
        assertThat(DeviceProfiles.byName("hns").portMtuRule()).isEqualTo(PortMtuRule.IBOE_HEADERS);
        assertThat(DeviceProfiles.byName("e810").portMtuRule()).isEqualTo(PortMtuRule.NETDEV);
        assertThat(DeviceProfiles.byName("cxgb4").portMtuRule()).isEqualTo(PortMtuRule.NETDEV);
        assertThat(DeviceProfiles.byName("siw").portMtuRule()).isEqualTo(PortMtuRule.NETDEV_MAX_TOO);
        assertThat(DeviceProfiles.connectx5().portMtuRule()).as("InfiniBand").isEqualTo(PortMtuRule.LINK);
        assertThat(DeviceProfiles.byName("hfi1").portMtuRule()).isEqualTo(PortMtuRule.LINK);
        assertThat(DeviceProfiles.byName("efa").portMtuRule()).isEqualTo(PortMtuRule.LINK);
    }

    @Test
    void aRocePortReports1024OnA1500ByteNetdevAnd4096OnAJumboOne()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("rxe"));
        final PortAttributes before = rig.ctxA.queryPort(1);
        assertThat(before.activeMtu()).isEqualTo(3);
        assertThat(before.maxMtu()).isEqualTo(PortAttributes.MTU_4096);

        rig.deviceA.netdev().mtuBytes(9000);

        assertThat(rig.ctxA.queryPort(1).activeMtu()).isEqualTo(PortAttributes.MTU_4096);
        assertThat(rig.ctxB.queryPort(1).activeMtu()).as("the other host's netdev is its own").isEqualTo(3);
        assertThat(RuleRig.unconnected(DeviceProfiles.connectx5()).ctxA.queryPort(1).activeMtu())
            .as("an InfiniBand port keeps its own MTU").isEqualTo(PortAttributes.MTU_4096);
    }

    @Test
    void aNetdevMtuOutsideEthernetsRangeIsRefusedAndChangesNothing()
    {
        final PortNetdev netdev = new PortNetdev().mtuBytes(9000);
        final VerbsException e = refused(() -> netdev.mtuBytes(67));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("ETH_MIN_MTU");
        assertThat(netdev.mtuBytes()).isEqualTo(9000);
        assertThat(refused(() -> netdev.ipv4("10.0.0.256")).getMessage()).contains("no IPv4 address");
        assertThat(netdev.ipv4()).isNull();
    }

    @Test
    void aRoceV1AndV2PortListsBothTypesForEachAddressLinkLocalFirst()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("bnxt_re"));
        rig.deviceA.netdev().ipv4("192.168.1.10");

        final List<GidEntry> table = rig.ctxA.queryGidTable(rig.ctxA.queryPort(1).gidTblLen());

        assertThat(table).extracting(GidEntry::gidType)
            .containsExactly(GidType.ROCE_V1, GidType.ROCE_V2, GidType.ROCE_V1, GidType.ROCE_V2);
        assertThat(table).extracting(GidEntry::gidIndex).containsExactly(0, 1, 2, 3);
        assertThat(GidTable.text(table.get(0).gid())).isEqualTo(rig.deviceA.gid());
        assertThat(table.get(1).gid()).isEqualTo(table.get(0).gid());
        assertThat(GidTable.text(table.get(2).gid())).isEqualTo("0000:0000:0000:0000:0000:ffff:c0a8:010a");
        assertThat(rig.ctxA.queryGidEntry(1, 3).gidType()).isEqualTo(GidType.ROCE_V2);
        final VerbsException e = refused(() -> rig.ctxA.queryGid(1, 4));
        assertThat(e.errnoName()).as("past the valid entries").isEqualTo(Errno.ENODATA);
        assertThat(refused(() -> rig.ctxA.queryGidTable(3)).errnoName()).as("room for 3 of 4")
            .isEqualTo(Errno.EINVAL);
    }

    @Test
    void rxeListsRoceV2OnlyAndWithoutAnAddressOnlyTheLinkLocalGid()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("rxe"));
        assertThat(rig.ctxA.queryGidTable(8)).extracting(GidEntry::gidType).containsExactly(GidType.ROCE_V2);
        final VerbsException e = refused(() -> rig.ctxA.queryGid(1, 1));
        assertThat(e.errnoName()).isEqualTo(Errno.ENODATA);
        assertThat(e.getMessage()).contains("no IPv4 address");

        rig.deviceA.netdev().ipv4("10.1.16.61");

        assertThat(rig.ctxA.queryGidTable(8)).extracting(GidEntry::gidType)
            .containsExactly(GidType.ROCE_V2, GidType.ROCE_V2);
        assertThat(GidTable.text(rig.ctxA.queryGid(1, 1))).endsWith("ffff:0a01:103d");
        assertThat(rig.fabric.deviceByGid(GidTable.text(rig.ctxA.queryGid(1, 1))))
            .as("the fabric routes to the IPv4-mapped GID").isSameAs(rig.deviceA);
    }

    @Test
    void anIwarpPortListsOneGidMadeOfItsMacAndAnInfinibandPortItsLinkLocalGid()
    {
        final RuleRig siw = RuleRig.unconnected(DeviceProfiles.byName("siw"));
        final GidEntry e = siw.ctxA.queryGidEntry(1, 0);
        assertThat(e.gidType()).isEqualTo(GidType.IB);
        assertThat(java.util.Arrays.copyOfRange(e.gid(), 6, 16)).as("the MAC, then zeros").containsOnly(0);
        assertThat(siw.ctxA.queryGidTable(8)).hasSize(1);

        final RuleRig ib = RuleRig.unconnected(DeviceProfiles.connectx5());
        ib.deviceA.netdev().ipv4("10.0.0.1");
        assertThat(ib.ctxA.queryGidTable(8)).singleElement().extracting(GidEntry::gidType).isEqualTo(GidType.IB);
    }

    /** A's and B's QPs connected with this path_mtu and A's source GID index. */
    private static RuleRig connectedWith(final DeviceProfile a, final DeviceProfile b, final int pathMtu,
        final int sgidIndexA)
    {
        final RuleRig rig = RuleRig.unconnectedPair(a, b);
        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        rig.qpB.modifyToInit(RuleRig.REMOTE_ALL);
        ProgramRtr.modifyToRtr((SimQp)rig.qpA, rig.qpB.address(), 12, pathMtu, sgidIndexA);
        ProgramRtr.modifyToRtr((SimQp)rig.qpB, rig.qpA.address(), 12, pathMtu, 0);
        final QpAttr.Builder rts = QpAttr.builder().state(QpState.RTS).timeout(1).retryCnt(1).rnrRetry(7).sqPsn(0)
            .maxRdAtomic(1);
        rig.qpA.modify(rts.build(), rts.mask());
        rig.qpB.modify(rts.build(), rts.mask());
        return rig;
    }

    private static WorkCompletion writeOf(final RuleRig rig, final int lengthBytes)
    {
        final long src = rig.bufferA(8192);
        final MemoryRegion mr = rig.pdA.regMr(src, 8192, RuleRig.LOCAL);
        final long dst = rig.bufferB(8192);
        final MemoryRegion rmr = rig.pdB.regMr(dst, 8192, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, lengthBytes, mr.lkey())), dst, rmr.rkey()));
        return rig.pollA().getFirst();
    }

    @Test
    void aPathMtuAboveWhatTheNetdevCarriesLosesTheLargePacketsAndTheRequesterGivesUp()
    {
        final DeviceProfile rxe = DeviceProfiles.byName("rxe");
        final RuleRig small = connectedWith(rxe, rxe, QpAttr.MTU_4096, 0);
        assertThat(writeOf(small, 1024).status()).as("one packet of 1024 bytes fits a 1500-byte frame")
            .isEqualTo(WcStatus.SUCCESS);

        final RuleRig big = connectedWith(rxe, rxe, QpAttr.MTU_4096, 0);
        final WorkCompletion wc = writeOf(big, 4096);
        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("path_mtu 4096", "netdev MTU of 1500 bytes");
        assertThat(wc.diagnosis().details()).anySatisfy(l -> assertThat(l).contains("active_mtu"));

        final RuleRig fits = connectedWith(rxe, rxe, 3, 0);
        assertThat(writeOf(fits, 4096).status()).as("path_mtu 1024: four packets that fit")
            .isEqualTo(WcStatus.SUCCESS);

        final RuleRig jumbo = RuleRig.unconnectedPair(rxe, rxe);
        jumbo.deviceA.netdev().mtuBytes(9000);
        jumbo.deviceB.netdev().mtuBytes(9000);
        final RuleRig jumboConnected = connectedOn(jumbo, QpAttr.MTU_4096);
        assertThat(writeOf(jumboConnected, 4096).status()).as("jumbo frames carry 4096").isEqualTo(WcStatus.SUCCESS);
    }

    private static RuleRig connectedOn(final RuleRig rig, final int pathMtu)
    {
        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        rig.qpB.modifyToInit(RuleRig.REMOTE_ALL);
        ProgramRtr.modifyToRtr((SimQp)rig.qpA, rig.qpB.address(), 12, pathMtu, 0);
        ProgramRtr.modifyToRtr((SimQp)rig.qpB, rig.qpA.address(), 12, pathMtu, 0);
        final QpAttr.Builder rts = QpAttr.builder().state(QpState.RTS).timeout(1).retryCnt(1).rnrRetry(7).sqPsn(0)
            .maxRdAtomic(1);
        rig.qpA.modify(rts.build(), rts.mask());
        rig.qpB.modify(rts.build(), rts.mask());
        return rig;
    }

    @Test
    void theOneCallConnectionTakesThePortsActiveMtuAsTheConnectionManagerDoes()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName("rxe"), RuleRig.REMOTE_ALL);
        assertThat(rig.qpA.query().pathMtu()).isEqualTo(3);
        assertThat(writeOf(rig, 8192).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(RuleRig.connected().qpA.query().pathMtu()).as("InfiniBand").isEqualTo(QpAttr.MTU_4096);
    }

    @Test
    void hnsRefusesAPathMtuAboveTheActiveMtuAndTheOthersTakeIt()
    {
        final RuleRig hns = RuleRig.unconnected(DeviceProfiles.byName("hns"));
        hns.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        final VerbsException e = refused(() -> ProgramRtr.modifyToRtr((SimQp)hns.qpA, hns.qpB.address(), 12,
            QpAttr.MTU_4096, 0));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("check_mtu_validate", "active_mtu 3");
        assertThat(hns.qpA.state()).as("nothing changed").isEqualTo(QpState.INIT);

        final RuleRig bnxt = RuleRig.unconnected(DeviceProfiles.byName("bnxt_re"));
        bnxt.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        ProgramRtr.modifyToRtr((SimQp)bnxt.qpA, bnxt.qpB.address(), 12, QpAttr.MTU_4096, 0);
        assertThat(bnxt.qpA.query().pathMtu()).isEqualTo(QpAttr.MTU_4096);
    }

    @Test
    void roceV1FramesNeverReachAPortThatTakesRoceV2OnlyButAPortWithBothTakesEither()
    {
        final DeviceProfile bnxt = DeviceProfiles.byName("bnxt_re");
        final RuleRig toRxe = connectedWith(bnxt, DeviceProfiles.byName("rxe"), 3, 0);
        final WorkCompletion wc = writeOf(toRxe, 64);
        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("RoCE v1", "receives RoCE v2 only");

        final RuleRig v2ToRxe = connectedWith(bnxt, DeviceProfiles.byName("rxe"), 3, 1);
        assertThat(writeOf(v2ToRxe, 64).status()).as("sgid_index 1 is RoCE v2").isEqualTo(WcStatus.SUCCESS);

        final RuleRig mixed = connectedWith(bnxt, bnxt, 3, 0);
        assertThat(writeOf(mixed, 64).status()).as("v1 from A, v2 from B, both ports take both")
            .isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void theOneCallConnectionLeavesFromTheRoceV2GidAsTheConnectionManagerDoes()
    {
        // cma_add_one: the default RoCE type is v2 where the port has it, so a v1-and-v2 port talks to a v2-only one
        final RuleRig toRxe = RuleRig.unconnectedPair(DeviceProfiles.byName("connectx6dx"),
            DeviceProfiles.byName("rxe"));
        toRxe.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        toRxe.qpB.modifyToInit(RuleRig.REMOTE_ALL);
        toRxe.qpA.modifyToRtr(toRxe.qpB.address(), 12);
        toRxe.qpB.modifyToRtr(toRxe.qpA.address(), 12);
        toRxe.qpA.modifyToRts(1, 7);
        toRxe.qpB.modifyToRts(1, 7);
        assertThat(toRxe.qpA.query().ahAttr().sgidIndex()).as("fe80:: RoCE v2 of connectx6dx").isEqualTo(1);
        assertThat(toRxe.qpB.query().ahAttr().sgidIndex()).as("rxe's only type, v2, at 0").isZero();
        assertThat(writeOf(toRxe, 64).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(GidTable.connectionManagerSgidIndex(RuleRig.connected().deviceA, 1)).as("InfiniBand").isZero();
    }

    @Test
    void aDatagramLargerThanThePortsActiveMtuIsDropped()
    {
        assertThat(RoceWire.datagramMtuBytes(RuleRig.unconnected(DeviceProfiles.byName("rxe")).deviceA))
            .isEqualTo(1024);
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.byName("rxe"));
        rig.deviceA.netdev().mtuBytes(9000);
        assertThat(RoceWire.datagramMtuBytes(rig.deviceA)).isEqualTo(4096);
    }
}
