package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a fabric's QP numbers start ({@link SimFabric#firstQpNum(int)}), and a SEND to a QP number that no device of
 * the fabric has: no responder ever answers, so it ends with IBV_WC_RETRY_EXC_ERR after retry_cnt retries (IBA
 * 9.7.5.1.1), and its diagnosis says the number is nobody's on this fabric and how to share one.
 */
class ForeignQpNumberTest
{
    @Test
    void aFabricNumbersEachDevicesQpsFrom0x11UnlessToldAnotherStartBeforeItsFirstQp()
    {
        final RuleRig rig = RuleRig.connected();
        assertThat(rig.qpA.qpNum()).isEqualTo(SimFabric.FIRST_QP_NUM).isEqualTo(0x11);
        assertThat(rig.qpB.qpNum()).isEqualTo(0x11);

        final SimFabric fabric = new SimFabric();
        final SimDevice early = fabric.addHost("a").addDevice("sim:a/dev0", DeviceProfiles.connectx5());
        final SimDevice idle = fabric.addHost("b").addDevice("sim:b/dev0", DeviceProfiles.connectx5());
        final QueuePair first = rcQp(early);
        fabric.firstQpNum(0x70d011);
        final SimDevice late = fabric.addHost("c").addDevice("sim:c/dev0", DeviceProfiles.connectx5());

        assertThat(first.qpNum()).as("a device that numbered a QP keeps its numbering").isEqualTo(0x11);
        assertThat(rcQp(early).qpNum()).isEqualTo(0x12);
        assertThat(rcQp(idle).qpNum()).as("a device with no QP yet starts anew").isEqualTo(0x70d011);
        assertThat(rcQp(late).qpNum()).isEqualTo(0x70d011);
        assertThatThrownBy(() -> fabric.firstQpNum(1)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("special QPs");
        assertThat(fabric.firstQpNum()).isEqualTo(0x70d011);
    }

    @Test
    void aSendToAQpNumberNoDeviceHasFailsWithRetryExcErrAndSuggestsOneFabric()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QpAddress b = rig.qpB.address();
        rig.qpA.connect(new QpAddress(b.lid(), b.gid(), 0x70d011, b.psn()), RuleRig.ALL_REMOTE);

        final WorkCompletion wc = send(rig);

        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("dest_qp_num 0x70d011 names no QP on any device of this fabric");
        assertThat(wc.diagnosis().details()).anySatisfy(l -> assertThat(l).contains("--fabric NAME"));
    }

    @Test
    void aSendToAQpNumberOfAnotherDeviceOfTheFabricKeepsTheNoQpAtTheAddressDiagnosis()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair second = rig.pdA.createQp(QpInitAttr.rc(rig.cqA)); // 0x12 on device A only
        final QpAddress b = rig.qpB.address();
        rig.qpA.connect(new QpAddress(b.lid(), b.gid(), second.qpNum(), b.psn()), RuleRig.ALL_REMOTE);

        final WorkCompletion wc = send(rig);

        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("no QP 0x12 at the remote address")
            .doesNotContain("on any device");
    }

    private static QueuePair rcQp(final SimDevice device)
    {
        final SimContext ctx = device.open(device.host().host().spawn("p"));
        return ctx.allocPd().createQp(QpInitAttr.rc(ctx.createCq(4)));
    }

    private static WorkCompletion send(final RuleRig rig)
    {
        final long src = rig.bufferA(4096);
        final MemoryRegion mr = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(1, sgl(sge(mr, src, 8))));
        rig.fabric.progressAll();
        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).hasSize(1);
        return wcs.get(0);
    }
}
