package dev.rnicsim.testkit;

import static dev.rnicsim.testkit.Picks.INDEX;
import static dev.rnicsim.testkit.ScriptWords.accessWords;
import static dev.rnicsim.testkit.ScriptWords.at;
import static dev.rnicsim.testkit.ScriptWords.size;
import static dev.rnicsim.testkit.VerbsActions.picking;
import static dev.rnicsim.testkit.VerbsActions.step;

import dev.rnicsim.testkit.VerbsActions.Pick;
import dev.rnicsim.testkit.VerbsState.Buffer;
import dev.rnicsim.testkit.VerbsState.Mr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.VerbsException;
import java.util.List;
import java.util.Set;
import net.jqwik.api.state.Action;

/**
 * The actions of {@link VerbsActions} on side B's MRs: {@code ibv_reg_mr} over a range of a mapped buffer and
 * {@code ibv_dereg_mr}. Stateless; their Javadoc is in {@link VerbsActions}.
 */
final class RegistrationActions
{
    private RegistrationActions()
    {
    }

    /** @return the action of {@link VerbsActions#register()}. */
    static Action<VerbsState> register()
    {
        final Set<Pick.Use> uses = Set.of(Pick.Use.INDEX, Pick.Use.OFFSET, Pick.Use.LENGTH, Pick.Use.ACCESS);
        return picking("reg", s -> !s.mappedBuffers().isEmpty(), uses, s ->
        {
            final String name = s.nextMrName();
            final List<Buffer> mapped = s.mappedBuffers().stream().map(s::buffer).toList();
            return p ->
            {
                final Buffer pick = p.of(mapped);
                final String buf = pick.name();
                final long[] r = p.range(pick.lengthBytes());
                final Set<Access> access = p.access();
                return step("reg " + name + " pd_b " + at(buf, r[0]) + " " + size(r[1]) + " access="
                    + accessWords(access), st ->
                    {
                        st.mrNamed();
                        final Buffer b = st.buffer(buf);
                        if (b == null || st.mr(name) != null || r[0] + r[1] > b.lengthBytes())
                        {
                            return;
                        }
                        try
                        {
                            final MemoryRegion mr = st.nic().reg(b.side(), b.addr() + r[0], r[1], access);
                            st.addMr(new Mr(name, buf, mr, mr.addr(), mr.lengthBytes(), mr.lkey(), mr.rkey(),
                                VerbsState.copy(access)));
                        }
                        catch (final VerbsException e)
                        {
                            st.record("  -> " + e.errnoName());
                        }
                    });
            };
        });
    }

    /** @return the action of {@link VerbsActions#deregister()}. */
    static Action<VerbsState> deregister()
    {
        return picking("dereg", s -> !s.liveMrs().isEmpty(), INDEX, s ->
        {
            final List<String> live = s.liveMrs();
            return p ->
            {
                final String name = p.of(live);
                return step("dereg " + name, st ->
                {
                    final Mr m = st.mr(name);
                    if (m != null)
                    {
                        m.mr().close();
                    }
                });
            };
        });
    }
}
