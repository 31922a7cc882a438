package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link PacketMtu}: an RC message is cut into packets of the QP's path MTU (IBA 9.7.1: every packet but the last
 * carries path MTU bytes; rxe {@code rxe_requester}: {@code mtu = get_mtu(qp)}), one engine step each. The one-call
 * connect gives an rxe QP its port's active_mtu of 1024 (1500-byte netdev), a connectx5 QP 4096; a program's own
 * path_mtu at RTR decides as well. READ responses are cut at the responder's path MTU.
 */
class PacketMtuTest
{
    private static final int LENGTH_BYTES = 10_000;

    /** A WRITE or READ of {@code length} bytes from a to b, posted and not yet moved. */
    private record Message(RuleRig rig, long local, long remote, byte[] data)
    {
        static Message post(final RuleRig rig, final boolean read, final int length)
        {
            final long local = rig.bufferA(length);
            final long remote = rig.bufferB(length);
            final byte[] data = RuleRig.pattern(length, 3);
            if (read)
            {
                rig.ctxB.memory().write(remote, data);
            }
            else
            {
                rig.ctxA.memory().write(local, data);
            }
            final MemoryRegion localMr = rig.pdA.regMr(local, length, RuleRig.LOCAL);
            final MemoryRegion remoteMr = rig.pdB.regMr(remote, length, RuleRig.REMOTE_ALL);
            rig.qpA.postSend(read ? SendWr.read(7, sgl(sge(localMr, local, length)), remote, remoteMr.rkey())
                : SendWr.write(7, sgl(sge(localMr, local, length)), remote, remoteMr.rkey()));
            return new Message(rig, local, remote, data);
        }
    }

    /**
     * @param profile both devices' profile.
     * @return the payload of a packet on a QP the one-call connect set up on it: 1024 on rxe's 1500-byte netdev,
     *         4096 on connectx5.
     */
    static int connectMtuBytes(final DeviceProfile profile)
    {
        return PacketMtu.bytes((SimQp)RuleRig.connected(profile, RuleRig.ALL_REMOTE).qpA);
    }

    private static int packets(final int mtuBytes)
    {
        return (LENGTH_BYTES + mtuBytes - 1) / mtuBytes;
    }

    @ParameterizedTest
    @CsvSource({"rxe, 1024", "connectx5, 4096"})
    void aWriteTakesOnePacketStepPerPathMtuOfItsPayload(final String profile, final int mtuBytes)
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(profile), RuleRig.REMOTE_ALL);
        final Message m = Message.post(rig, false, LENGTH_BYTES);

        assertThat(rig.fabric.progress(1)).isEqualTo(1);
        assertThat(((SimQp)rig.qpA).inflight().packetCount()).as("ceil(%d / %d)", LENGTH_BYTES, mtuBytes)
            .isEqualTo(packets(mtuBytes));
        assertThat(rig.ctxB.memory().read(m.remote(), mtuBytes)).as("the first packet placed path MTU bytes")
            .isEqualTo(java.util.Arrays.copyOf(m.data(), mtuBytes));
        assertThat(rig.ctxB.memory().read(m.remote() + mtuBytes, 1)).as("and not a byte more").containsExactly(0);

        assertThat(1 + rig.fabric.progressAll()).isEqualTo(packets(mtuBytes));
        assertThat(rig.deviceA.counter(SimCounter.PORT_XMIT_PACKETS)).isEqualTo(packets(mtuBytes));
        assertThat(rig.deviceB.counter(SimCounter.PORT_RCV_PACKETS)).isEqualTo(packets(mtuBytes));
        assertThat(rig.ctxB.memory().read(m.remote(), LENGTH_BYTES)).isEqualTo(m.data());
        assertThat(rig.cqA.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
    }

    @ParameterizedTest
    @CsvSource({"rxe, 1024", "connectx5, 4096"})
    void aReadsResponsesArePacketsOfThePathMtu(final String profile, final int mtuBytes)
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName(profile), RuleRig.REMOTE_ALL);
        final Message m = Message.post(rig, true, LENGTH_BYTES);

        final long steps = rig.fabric.progressAll();

        assertThat(steps).as("the request packet, then ceil(%d / %d) response packets, one step each", LENGTH_BYTES,
            mtuBytes).isEqualTo(1 + packets(mtuBytes));
        assertThat(rig.deviceB.counter(SimCounter.PORT_XMIT_PACKETS)).as("the responder sent the responses")
            .isEqualTo(packets(mtuBytes));
        assertThat(rig.ctxA.memory().read(m.local(), LENGTH_BYTES)).isEqualTo(m.data());
        assertThat(rig.cqA.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
    }

    @ParameterizedTest
    @CsvSource({"1, 256", "2, 512", "4, 2048"})
    void aProgramsOwnPathMtuAtRtrCutsTheMessage(final int pathMtu, final int mtuBytes)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        rig.qpA.modifyToInit(RuleRig.ALL_REMOTE);
        rig.qpB.modifyToInit(RuleRig.REMOTE_ALL);
        ProgramRtr.modifyToRtr((SimQp)rig.qpA, rig.qpB.address(), 12, pathMtu, 0);
        ProgramRtr.modifyToRtr((SimQp)rig.qpB, rig.qpA.address(), 12, pathMtu, 0);
        final QpAttr.Builder rts = QpAttr.builder().state(QpState.RTS).timeout(14).retryCnt(7).rnrRetry(7).sqPsn(0)
            .maxRdAtomic(1);
        rig.qpA.modify(rts.build(), rts.mask());
        final Message m = Message.post(rig, false, LENGTH_BYTES);

        assertThat(rig.fabric.progressAll()).isEqualTo(packets(mtuBytes));
        assertThat(rig.ctxB.memory().read(m.remote(), LENGTH_BYTES)).isEqualTo(m.data());
        assertThat(rig.cqA.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(rig.qpA.query().pathMtu()).isEqualTo(pathMtu);
    }
}
