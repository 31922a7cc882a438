package dev.rnicsim.scenarios.script;

import dev.rnicsim.verbs.FlushPlacement;
import dev.rnicsim.verbs.FlushSelectivity;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The script forms of {@code ibv_wr_flush} and {@code ibv_wr_atomic_write}: {@code post flush QP remote=ADDR
 * [rkey=KEY] [length=SIZE] [type=global|persistent] [level=range|mr]} and {@code post atomic_write QP remote=ADDR
 * [rkey=KEY] value=N}. Stateless.
 */
final class ScriptPlacement
{
    private ScriptPlacement()
    {
    }

    /**
     * Builds the work request of a {@code post flush} or {@code post atomic_write} line.
     *
     * @param s      the session.
     * @param l      the line.
     * @param op     FLUSH or ATOMIC_WRITE.
     * @param id     the wr_id.
     * @param sgl    the gather list given with {@code sgl=} (both operations refuse one at post: EINVAL).
     * @param flags  the send flags.
     * @param remote the remote address.
     * @param rkey   the remote key.
     * @return the work request.
     */
    static SendWr workRequest(final Session s, final ScriptLine l, final WrOpcode op, final long id,
        final List<Sge> sgl, final Set<SendFlag> flags, final long remote, final int rkey)
    {
        final Map<String, String> o = l.options();
        if (op == WrOpcode.ATOMIC_WRITE)
        {
            return new SendWr(id, op, sgl, flags, remote, rkey, 0, s.evalNum(l, o.get("value")), 0, 0);
        }
        final FlushPlacement type = "persistent".equals(o.getOrDefault("type", "global").toLowerCase(Locale.ROOT))
            ? FlushPlacement.PERSISTENT : FlushPlacement.GLOBAL;
        final FlushSelectivity level = "mr".equals(o.getOrDefault("level", "range").toLowerCase(Locale.ROOT))
            ? FlushSelectivity.MR : FlushSelectivity.RANGE;
        final long length;
        if (o.containsKey("length"))
        {
            length = s.evalNum(l, o.get("length"));
        }
        else
        {
            final Session.Val r = s.eval(l, o.get("remote"));
            if (level == FlushSelectivity.MR)
            {
                length = 0;
            }
            else if (r.mr() != null)
            {
                length = Math.max(0, r.mr().addr() + r.mr().lengthBytes() - remote);
            }
            else
            {
                throw l.error("post flush of a range needs length=SIZE, unless remote= starts at an MR name (then "
                    + "the range runs to the MR's end), or level=mr");
            }
        }
        try
        {
            return new SendWr(id, op, sgl, flags, remote, rkey, 0, 0, 0, 0, new SendWr.Flush(length, type, level));
        }
        catch (final IllegalArgumentException e)
        {
            throw l.error("post flush: " + e.getMessage());
        }
    }

    /**
     * @param wr a posted work request.
     * @return what the post line prints of it: the opcode and its bytes, a FLUSH's placement type, selectivity and
     * range, an ATOMIC_WRITE's 8 bytes.
     */
    static String describe(final SendWr wr)
    {
        if (wr.localOp() instanceof SendWr.Flush f)
        {
            return String.format(Locale.ROOT, "FLUSH %s, %s", f.type().name().toLowerCase(Locale.ROOT),
                f.level() == FlushSelectivity.MR ? "the whole MR" : f.lengthBytes() + " bytes at 0x"
                + Long.toHexString(wr.remoteAddr()));
        }
        if (wr.opcode() == WrOpcode.ATOMIC_WRITE)
        {
            return String.format(Locale.ROOT, "ATOMIC_WRITE of 8 bytes, 0x%016x, at 0x%x", wr.compareAdd(),
                wr.remoteAddr());
        }
        return wr.opcode() + ", " + wr.totalBytes() + " bytes";
    }
}
