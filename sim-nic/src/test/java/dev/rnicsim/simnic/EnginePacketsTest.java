package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * SENDs, atomics and inline data move as packets (IBA 9.7.1 packet sequencing, 9.4.5 atomic request and
 * acknowledge), and each packet advances the simulated clock by its share of the message's price.
 */
class EnginePacketsTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    private static final int N = 16 * MTU;

    /** A 64 KiB SEND from a into a 64 KiB receive buffer at b, posted and not yet moved. */
    private record Send(RuleRig rig, long dst, MemoryRegion recvMr, byte[] data)
    {
        static Send of(final dev.rnicsim.simnic.DeviceProfile profile)
        {
            final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
            final long src = rig.bufferA(N);
            final byte[] data = RuleRig.pattern(N, 5);
            rig.ctxA.memory().write(src, data);
            final MemoryRegion srcMr = rig.pdA.regMr(src, N, RuleRig.LOCAL);
            final long dst = rig.bufferB(N);
            final MemoryRegion recvMr = rig.pdB.regMr(dst, N, RuleRig.LOCAL);
            rig.qpB.postRecv(List.of(RecvWr.of(40, sge(recvMr, dst, N))));
            rig.qpA.postSend(SendWr.send(4, sgl(sge(srcMr, src, N))));
            return new Send(rig, dst, recvMr, data);
        }

        byte[] target()
        {
            return rig.ctxB.memory().read(dst, N);
        }
    }

    @Test
    void aSendOfSixteenMtusMovesPacketByPacketIntoTheReceiveBuffer()
    {
        final Send s = Send.of(DeviceProfiles.connectx5());

        assertThat(s.rig().fabric.progress(3)).isEqualTo(3);

        final InflightMessage m = ((SimQp)s.rig().qpA).inflight();
        assertThat(m.packetCount()).isEqualTo(16);
        assertThat(m.packetsPlaced()).isEqualTo(3);
        assertThat(Arrays.copyOf(s.target(), 3 * MTU)).isEqualTo(Arrays.copyOf(s.data(), 3 * MTU));
        assertThat(Arrays.copyOfRange(s.target(), 3 * MTU, N)).isEqualTo(new byte[N - 3 * MTU]);
        assertThat(((SimCq)s.rig().cqB).depth()).as("the receive completes with the last packet").isZero();

        assertThat(s.rig().fabric.progressAll()).isEqualTo(13);
        assertThat(s.target()).isEqualTo(s.data());
        final List<WorkCompletion> recv = s.rig().pollB();
        assertThat(recv).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(recv.get(0).byteLen()).isEqualTo(N);
        assertThat(recv.get(0).opcode()).isEqualTo(WcOpcode.RECV);
    }

    @Test
    void aReceiveBufferDeregisteredMidSendFailsTheNextPacketWithTheFirstPacketsPlaced()
    {
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final int mtu = PacketMtuTest.connectMtuBytes(p);
            final Send s = Send.of(p);
            s.rig().fabric.progress(4);

            // A receive buffer's lkey is looked up per packet (rxe copy_data); no reference holds it on any driver.
            s.recvMr().close();

            final List<WorkCompletion> send = s.rig().pollA();
            assertThat(send).as(p.name()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_OP_ERR);
            assertThat(Arrays.copyOf(s.target(), 4 * mtu)).as(p.name()).isEqualTo(Arrays.copyOf(s.data(), 4 * mtu));
            assertThat(Arrays.copyOfRange(s.target(), 4 * mtu, N)).as(p.name()).isEqualTo(new byte[N - 4 * mtu]);
            assertThat(s.rig().pollB()).as(p.name()).extracting(WorkCompletion::status).containsExactly(
                p.follows(ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR) ? WcStatus.LOC_QP_OP_ERR
                    : WcStatus.LOC_PROT_ERR);
        }
    }

    @Test
    void anAtomicIsARequestThatChangesTheTargetThenAResponseThatFillsTheResult()
    {
        final RuleRig rig = RuleRig.connected();
        final long target = rig.bufferB(MTU);
        rig.ctxB.memory().write(target, le(40));
        final MemoryRegion targetMr = rig.pdB.regMr(target, MTU, RuleRig.REMOTE_ALL);
        final long result = rig.bufferA(MTU);
        final MemoryRegion resultMr = rig.pdA.regMr(result, MTU, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.fetchAndAdd(9, sge(resultMr, result, 8), target, targetMr.rkey(), 2));

        assertThat(rig.fabric.progress(1)).isEqualTo(1);
        assertThat(rig.ctxB.memory().read(target, 8)).as("the request executed at the responder").isEqualTo(le(42));
        assertThat(rig.ctxA.memory().read(result, 8)).as("the response has not come back").isEqualTo(new byte[8]);
        assertThat(((SimQp)rig.qpA).inflight()).isNotNull();

        assertThat(rig.fabric.progress(5)).as("one response packet").isEqualTo(1);
        assertThat(rig.ctxA.memory().read(result, 8)).isEqualTo(le(40));
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
    }

    @Test
    void aResultBufferDeregisteredBetweenRequestAndResponseFailsLocallyAfterTheTargetChanged()
    {
        final RuleRig rig = RuleRig.connected();
        final long target = rig.bufferB(MTU);
        rig.ctxB.memory().write(target, le(7));
        final MemoryRegion targetMr = rig.pdB.regMr(target, MTU, RuleRig.REMOTE_ALL);
        final long result = rig.bufferA(MTU);
        final MemoryRegion resultMr = rig.pdA.regMr(result, MTU, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.compareAndSwap(3, sge(resultMr, result, 8), target, targetMr.rkey(), 7, 99));
        rig.fabric.progress(1);

        resultMr.close();

        final List<WorkCompletion> wcs = rig.pollA();
        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(
            rig.deviceA.profile().follows(ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR) ? WcStatus.LOC_QP_OP_ERR
                : WcStatus.LOC_PROT_ERR);
        assertThat(rig.ctxB.memory().read(target, 8)).as("the swap happened at the responder").isEqualTo(le(99));
        assertThat(rig.ctxA.memory().read(result, 8)).as("no byte reached the retired result").isEqualTo(new byte[8]);
    }

    @Test
    void anInlineWriteLongerThanThePathMtuMovesAsPacketsOfItsCopiedBytes()
    {
        final RuleRig rig = RuleRig.connected();
        rig.fabric.pathMtuBytes(256);
        final SimQp a = (SimQp)rig.pdA.createQp(new QpInitAttr(rig.cqA, rig.cqA, QpType.RC,
            new QpCap(8, 8, 2, 2, 1024), false));
        final SimQp b = (SimQp)rig.pdB.createQp(QpInitAttr.rc(rig.cqB));
        a.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(a.address(), RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(1024);
        final byte[] data = RuleRig.pattern(1024, 2);
        rig.ctxA.memory().write(src, data);
        final long dst = rig.bufferB(MTU);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, MTU, RuleRig.REMOTE_ALL);
        a.postSend(List.of(new SendWr(5, dev.rnicsim.verbs.WrOpcode.RDMA_WRITE,
            List.of(new dev.rnicsim.verbs.Sge(src, 1024, 0)), EnumSet.of(SendFlag.SIGNALED, SendFlag.INLINE), dst,
            dstMr.rkey(), 0, 0, 0, 0, null)));
        // The payload was copied at post: changing the buffer now changes nothing that moves.
        rig.ctxA.memory().write(src, new byte[1024]);

        assertThat(rig.fabric.progress(2)).isEqualTo(2);
        assertThat(a.inflight().packetCount()).isEqualTo(4);
        assertThat(rig.ctxB.memory().read(dst, 1024)).isEqualTo(concat(Arrays.copyOf(data, 512), new byte[512]));

        assertThat(rig.fabric.progressAll()).isEqualTo(2);
        assertThat(rig.ctxB.memory().read(dst, 1024)).isEqualTo(data);
    }

    @Test
    void eachPacketAdvancesTheClockByItsShareAndTheMessageCostsWhatItCostInOneStep()
    {
        final Send s = Send.of(DeviceProfiles.connectx5());
        final SimFabric f = s.rig().fabric;
        final CostModel cost = f.costModel();
        final double gbps = s.rig().deviceA.profile().linkGbps();
        final long t0 = f.clock().nowNs();

        f.progress(1);
        assertThat(f.clock().nowNs() - t0).as("first packet: base latency and its wire time")
            .isEqualTo(cost.opBaseLatencyNs() + (long)Math.ceil(MTU * 8.0 / gbps));
        f.progress(1);
        assertThat(f.clock().nowNs() - t0).isEqualTo(cost.packetNs(0, MTU, gbps) + cost.packetNs(MTU, MTU, gbps));

        f.progressAll();
        final long misses = s.rig().deviceA.tables().cache().misses() + s.rig().deviceB.tables().cache().misses();
        assertThat(f.clock().nowNs() - t0).as("the packets add up to the one-step price")
            .isEqualTo(cost.operationNs(N, gbps, misses));
    }

    private static byte[] le(final long v)
    {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    private static byte[] concat(final byte[] a, final byte[] b)
    {
        final byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
