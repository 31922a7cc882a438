package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.PortAttributes;
import dev.rnicsim.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The query verbs through the library: {@code ibv_query_device}, {@code ibv_query_port}, {@code ibv_query_gid} and
 * {@code ibv_query_qp}, each answered from the model's attributes in the layout of wire_mr.h.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class QueryVerbs
{
    private QueryVerbs()
    {
    }

    static ByteBuffer queryDevice(final Session.CtxInfo c)
    {
        final DeviceAttributes a = c.context().queryDevice();
        final ByteBuffer b = buf(64 + Wire.DEVICE_ATTR_COUNT * 8);
        final byte[] fw = a.fwVer().getBytes(StandardCharsets.UTF_8);
        b.put(0, fw, 0, Math.min(63, fw.length));
        final long[] v = {a.nodeGuid(), a.sysImageGuid(), a.maxMrSizeBytes(), a.pageSizeCap(), a.vendorId(),
            a.vendorPartId(), a.hwVer(), a.maxQp(), a.maxQpWr(), a.deviceCapFlags(), a.maxSge(), a.maxSgeRd(),
            a.maxCq(), a.maxCqe(), a.maxMr(), a.maxPd(), a.maxQpRdAtom(), a.maxQpInitRdAtom(), a.maxResRdAtom(),
            a.maxMw(), a.atomicCap().code(), a.maxSrq(), a.maxPkeys(), a.localCaAckDelay(), a.physPortCnt(),
            a.odpCaps().generalCaps(), a.odpCaps().rcOdpCaps(), a.odpCaps().ucOdpCaps(), a.odpCaps().udOdpCaps(),
            a.odpCaps().xrcOdpCaps(), a.maxSrqWr(), a.maxSrqSge(), a.maxMcastGrp(), a.maxMcastQpAttach(),
            a.maxTotalMcastQpAttach(), a.maxAh()};
        for (int i = 0; i < v.length; i++)
        {
            b.putLong(64 + i * 8, v[i]);
        }
        return b;
    }

    static ByteBuffer queryPort(final Session.CtxInfo c, final int port)
    {
        final PortAttributes a = c.context().queryPort(port);
        final boolean ib = a.linkLayer() == PortAttributes.LINK_LAYER_INFINIBAND;
        final long[] v = {a.state(), a.maxMtu(), a.activeMtu(), a.gidTblLen(), a.portCapFlags(), a.maxMsgSzBytes(),
            a.pkeyTblLen(), a.linkLayer(), ib ? Verbs.lid(c.deviceIndex()) : 0, 2 /* 4X */, 32 /* EDR */};
        final ByteBuffer b = buf(Wire.PORT_ATTR_COUNT * 8);
        for (int i = 0; i < v.length; i++)
        {
            b.putLong(i * 8, v[i]);
        }
        return b;
    }

    /**
     * QUERY_QP: the state as the driver reports it (an error completion moves the QP to ERR without a modify; an
     * iWARP driver reports a QP in RESET as INIT), and whether its data is written in order
     * ({@code ibv_query_qp_data_in_order}, as the device's provider answers it).
     */
    static ByteBuffer queryQp(final Session.QpInfo q)
    {
        return buf(8).putInt(0, q.qp.query().qpState().ordinal())
            .putInt(4, q.qp.dataInOrder(WrOpcode.SEND) ? 1 : 0);
    }

    /**
     * QUERY_GID: the GID at {@code index} of the context's port {@code port}, as the device answers it, then its
     * type as a 32-bit {@code enum ibv_gid_type} (wire_mr.h {@code wire_gid}).
     */
    static ByteBuffer queryGid(final Session.CtxInfo c, final int port, final int index)
    {
        final dev.rnicsim.verbs.GidEntry e = c.context().queryGidEntry(port, index);
        return buf(20).put(0, e.gid()).putInt(16, e.gidType().code());
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }
}
