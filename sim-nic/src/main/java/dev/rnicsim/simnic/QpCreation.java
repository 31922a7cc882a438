package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;

/**
 * {@code ibv_create_qp} for the simulated device: the checks, the rings and the QP's place on its device.
 */
final class QpCreation
{
    private QpCreation()
    {
    }

    /**
     * {@code ibv_create_qp}: checks, maps and pins the rings (charged to RLIMIT_MEMLOCK). A type outside the
     * driver's {@link DriverTraits#qpTypes()} is EOPNOTSUPP before anything is allocated (EFA: efa_verbs.c
     * {@code efa_create_qp} / {@code efa_qp_validate_attr} take UD and SRD only). The receive capacities of a QP on an
     * SRQ are checked as its driver checks them ({@link RecvCapsOnSrq}), the work requests against max_qp_wr (on
     * irdma against the queues' quanta instead, {@link IrdmaQueueSizes#check}), a send WQE against the provider's
     * largest ({@link QpCaps#checkMlx5SendQueue}, {@link Mlx4QueueSizes#check}), and the QP reports and holds the
     * capacities its provider grants ({@link QpCaps}).
     */
    static SimQp create(final SimPd pd, final QpInitAttr attr)
    {
        final String verb = "ibv_create_qp";
        final SimDevice device = pd.context().device();
        final DeviceAttributes a = device.profile().attributes();
        final DriverTraits traits = device.profile().traits();
        if (!traits.acceptsQpType(attr.type()))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, "type " + attr.type() + ": the " + traits.driver()
                + " driver's create_qp accepts " + traits.qpTypes() + " QPs only and refuses any other type ("
                + traits.source() + "); nothing was created. Create a QP of a type in " + traits.qpTypes() + " on "
                + device.name() + ", or use a profile whose driver has " + attr.type()
                + " QPs (mlx5, rxe, ...)");
        }
        SendOps.check(verb, device, attr);
        QpAttributes.checkCreate(verb, pd, attr);
        XrcRules.checkCreate(verb, pd, attr);
        if (attr.type() != QpType.XRC_RECV && (!(attr.sendCq() instanceof SimCq s) || !(attr.recvCq() instanceof SimCq r) || s.context() != pd.context()
            || r.context() != pd.context() || s.isClosed() || r.isClosed()))
        {
            throw Errors.invalid(verb, "the CQs must be open CQs of the PD's context"
                + "; create the CQs on this context and do not destroy them");
        }
        final QpCap c = attr.cap();
        // a send queue of 0 is a receive-only QP (mlx5 calc_sq_size answers 0 for it; rxe_queue_init takes 0 elements),
        // as the receive side of a tag-matching SRQ's QPs in rdma-core's tests/test_tag_matching.py asks for
        final RecvCapsOnSrq recv = RecvCapsOnSrq.of(device.profile(), attr);
        // libirdma bounds the counts by the queues' quanta, not max_qp_wr (IrdmaQueueSizes.check below)
        final boolean byQuanta = device.profile().follows(ProviderRule.QP_CAPS_FROM_IRDMA_QUANTA);
        if (!byQuanta && (c.maxSendWr() < 0 || c.maxSendWr() > a.maxQpWr()
            || recv.wrChecked() && (c.maxRecvWr() < 0 || c.maxRecvWr() > a.maxQpWr())))
        {
            throw Errors.invalid(verb, "max_send_wr=" + Integer.toUnsignedString(c.maxSendWr()) + " max_recv_wr="
                + Integer.toUnsignedString(c.maxRecvWr())
                + " must be 0..max_qp_wr=" + a.maxQpWr()
                + recv.why(true, c.maxRecvWr() < 0 || c.maxRecvWr() > a.maxQpWr())
                + "; ask for fewer work requests; nothing was created");
        }
        if (c.maxSendSge() < 0 || c.maxSendSge() > a.maxSge()
            || recv.sgeChecked() && (c.maxRecvSge() < 0 || c.maxRecvSge() > a.maxSge()))
        {
            throw Errors.invalid(verb, "max_send_sge=" + Integer.toUnsignedString(c.maxSendSge()) + " max_recv_sge="
                + Integer.toUnsignedString(c.maxRecvSge())
                + " must be 0..max_sge=" + a.maxSge()
                + recv.why(false, c.maxRecvSge() < 0 || c.maxRecvSge() > a.maxSge())
                + "; ask for fewer SGEs; nothing was created");
        }
        InlineDataLimits.check(verb, device, c.maxInlineDataBytes());
        QpCaps.checkMlx5SendQueue(verb, device.profile(), attr);
        Mlx4QueueSizes.check(verb, device.profile(), attr);
        if (byQuanta)
        {
            IrdmaQueueSizes.check(verb, attr, attr.srq() != null);
        }
        if (device.objects().qpsLive() >= a.maxQp())
        {
            throw Errors.of(verb, Errno.ENOMEM, "QPs live=" + device.objects().qpsLive() + " = max_qp=" + a.maxQp()
                + "; destroy a QP first or use a device with a larger max_qp");
        }
        final Ring ring;
        final ForkSafety fork = device.host().forkSafety(pd.context().process());
        final long workBefore = fork.workNs(device.fabric().costModel());
        try
        {
            // a QP on an SRQ has no receive ring of its own (whatever it asked for where the driver does not check it)
            ring = Ring.map(fork, ringBytes(attr.srq() == null ? c
                : new QpCap(c.maxSendWr(), 0, c.maxSendSge(), 0, c.maxInlineDataBytes())));
        }
        catch (final KernelException e)
        {
            throw Errors.of(verb, e);
        }
        finally
        {
            SimPd.madviseSpan(device, fork, workBefore, "MADV_DONTFORK (QP ring)");
        }
        final SimQp qp = new SimQp(pd, attr, QpCaps.reported(device.profile(), attr), ring);
        qp.num = device.objects().addQp(qp);
        if (qp.srq != null)
        {
            qp.srq.attach(qp);
        }
        if (qp.sendCq != null)
        {
            qp.sendCq.attach();
        }
        if (qp.recvCq != null && qp.recvCq != qp.sendCq)
        {
            qp.recvCq.attach();
        }
        device.count(SimCounter.PINNED_BYTES, ring.lengthBytes());
        device.fabric().span(device, "create_qp", "queue", device.fabric().costModel().queueCreateNs(ring.pages()),
            !device.fabric().tracing() ? java.util.Map.of()
            : java.util.Map.of("qp_num", qp.num, "ring_bytes", ring.lengthBytes()));
        return qp;
    }

    /**
     * Ring size, mlx5-like (assumed for every profile): send WQEs of 64-byte basic blocks holding a 48-byte header
     * and 16 bytes per SGE or the inline data, receive WQEs of 16 bytes per SGE, both queues rounded up to powers
     * of two.
     */
    static long ringBytes(final QpCap c)
    {
        final long sqStride = pow2(Math.max(64, Math.max(48 + 16L * c.maxSendSge(), 48 + c.maxInlineDataBytes())));
        final long rqStride = pow2(16L * Math.max(1, c.maxRecvSge()));
        return pow2(c.maxSendWr()) * sqStride + pow2(Math.max(1, c.maxRecvWr())) * rqStride;
    }

    static long pow2(final long n)
    {
        return n <= 1 ? 1 : Long.highestOneBit(n - 1) << 1;
    }
}
