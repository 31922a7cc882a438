package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.ExtendedCqs;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.verbs.CompletionQueue;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The extended CQ requests of the library (cq_ex.c, extended.c): what the device's provider offers (CQEX_CAPS, read
 * once per context to fill its ops table as the provider's own table is filled), {@code ibv_create_cq_ex} with its
 * attributes checked by sim-nic's {@link ExtendedCqs}, {@code ibv_resize_cq} on the model's CQ
 * ({@link SimCq#resize(int, int)}) and {@code ibv_query_rt_values_ex}'s raw clock from the fabric's simulated clock.
 * Stateless: called under the fabric's lock.
 */
final class CqExVerbs
{
    /** CQEX_CAPS: features bit of {@code ibv_resize_cq}. */
    static final int FEATURE_RESIZE = 1;
    /** CQEX_CAPS: features bit of {@code ibv_query_rt_values_ex}. */
    static final int FEATURE_RT_VALUES = 2;
    /** CQEX_CAPS: features bit of {@code ibv_alloc_td} and {@code ibv_alloc_parent_domain}. */
    static final int FEATURE_DOMAINS = 4;
    /** CQEX_CAPS: features bit of a provider that reads MLX_*_ALLOC_TYPE ({@code ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV}). */
    static final int FEATURE_ALLOC_TYPE_ENV = 8;

    private CqExVerbs()
    {
    }

    /** @return true for the requests this class answers. */
    static boolean handles(final int op)
    {
        return op >= Wire.OP_CQEX_CAPS && op <= Wire.OP_CQ_SYNC;
    }

    static ByteBuffer call(final Session s, final int op, final ByteBuffer p)
    {
        return switch (op)
        {
            case Wire.OP_CQEX_CAPS -> caps(s.get(p.getInt(0), Session.CtxInfo.class));
            case Wire.OP_CREATE_CQ_EX -> create(s, p);
            case Wire.OP_RESIZE_CQ -> resize(s, p);
            case Wire.OP_QUERY_RT_VALUES -> rawClock(s.get(p.getInt(0), Session.CtxInfo.class));
            default -> sync(s);
        };
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** {@code struct wire_cqex_caps}: wc_flags, hca_core_clock (kHz), completion_timestamp_mask, features. */
    private static ByteBuffer caps(final Session.CtxInfo c)
    {
        final ExtendedCqs x = ExtendedCqs.of(c.device().profile());
        return buf(Wire.CQEX_CAPS_BYTES).putLong(0, x.wcFlags()).putLong(8, x.hcaCoreClockKhz())
            .putLong(16, x.completionTimestampMask()).putInt(24, (x.resizeCq() ? FEATURE_RESIZE : 0)
                | (x.rtValues() ? FEATURE_RT_VALUES : 0) | (x.domains() ? FEATURE_DOMAINS : 0)
                | (c.device().profile().follows(dev.rnicsim.simnic.ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV)
                    ? FEATURE_ALLOC_TYPE_ENV : 0));
    }

    /**
     * CREATE_CQ_EX {ctx, cqe, wc_flags, comp_mask, flags, not_parent_domain, comp_vector}: the provider's checks, then
     * the CQ as ibv_create_cq's (with its completion vector checked as ib_uverbs_create_cq does).
     */
    private static ByteBuffer create(final Session s, final ByteBuffer p)
    {
        final Session.CtxInfo c = s.get(p.getInt(0), Session.CtxInfo.class);
        ExtendedCqs.of(c.device().profile()).checkCreateCqEx(p.getLong(8), p.getInt(16), p.getInt(20),
            p.getInt(24) != 0);
        final CompletionQueue cq = c.context().createCq(p.getInt(4), p.getInt(28));
        final int h = s.add(null);
        s.handles.set(h, new Session.CqInfo(s, h, cq));
        return buf(8).putInt(0, h).putInt(4, cq.cqe());
    }

    /** RESIZE_CQ {cq, cqe, completions the library holds}: the answer is the granted cqe. */
    private static ByteBuffer resize(final Session s, final ByteBuffer p)
    {
        final CompletionQueue cq = s.get(p.getInt(0), Session.CqInfo.class).cq();
        ((SimCq) cq).resize(p.getInt(4), p.getInt(8));
        return buf(8).putInt(0, cq.cqe());
    }

    private static ByteBuffer rawClock(final Session.CtxInfo c)
    {
        return buf(8).putLong(0, ExtendedCqs.of(c.device().profile()).rawClock(c.context()));
    }

    /**
     * CQ_SYNC: lets the devices finish what was posted and queues every completion for its process before the
     * answer, so that the library, once answered, holds all the completions of its CQs (ibv_resize_cq counts them).
     */
    private static ByteBuffer sync(final Session s)
    {
        s.server.completions.run();
        return null;
    }
}
