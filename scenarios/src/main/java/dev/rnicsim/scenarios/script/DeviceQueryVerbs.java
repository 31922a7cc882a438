package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.verbs.GidEntry;
import java.util.List;
import java.util.Locale;

/**
 * Script verbs that read a device's port tables: {@code querypkey} ({@code ibv_query_pkey}) and {@code gidtable}
 * ({@code ibv_query_gid_table}).
 *
 * <p>Stateless.
 */
final class DeviceQueryVerbs
{
    private DeviceQueryVerbs()
    {
    }

    /** {@code querypkey CONTEXT PORT INDEX}: ibv_query_pkey. */
    static Outcome queryPkey(final Session s, final ScriptLine l)
    {
        final int port = s.evalInt(l, l.args().get(1));
        final int index = s.evalInt(l, l.args().get(2));
        final int pkey = s.get(l, l.args().get(0), SimContext.class).queryPkey(port, index);
        return Outcome.ok(String.format(Locale.ROOT, "port %d P_Key[%d] = 0x%04x%s", port, index, pkey,
            pkey == 0 ? " (empty)" : ""));
    }

    /** {@code gidtable CONTEXT [MAX]}: ibv_query_gid_table (MAX: the sum of gid_tbl_len over the ports by default). */
    static Outcome gidTable(final Session s, final ScriptLine l)
    {
        final SimContext ctx = s.get(l, l.args().get(0), SimContext.class);
        int max = 0;
        if (l.args().size() > 1)
        {
            max = s.evalInt(l, l.args().get(1));
        }
        else
        {
            for (int p = 1; p <= ctx.queryDevice().physPortCnt(); p++)
            {
                max += ctx.queryPort(p).gidTblLen();
            }
        }
        final List<GidEntry> table = ctx.queryGidTable(max);
        final StringBuilder b = new StringBuilder("ibv_query_gid_table: " + table.size() + " valid of " + max
            + " entries");
        for (final GidEntry e : table)
        {
            b.append("; port ").append(e.portNum()).append(" index ").append(e.gidIndex()).append(' ');
            b.append(dev.rnicsim.simnic.GidTable.text(e.gid()));
            if (e.gidType() != dev.rnicsim.verbs.GidType.IB)
            {
                b.append(' ').append(ConformanceVerbs.typeName(e.gidType()));
            }
        }
        return Outcome.ok(b.toString());
    }
}
