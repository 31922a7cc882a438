package dev.rnicsim.testkit;

import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.testkit.VerbsState.Buffer;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.testkit.VerbsActions.Pick;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;

/**
 * The property both caches are checked with: an application using verbs correctly ({@link VerbsActions#correctUse})
 * that also sends into side B's buffers through a registration cache.
 */
final class CacheActions
{
    /** Buffers up to 64 KiB: enough for page edges, cheap to run hundreds of chains. */
    static final long MAX_BUFFER = 64 << 10;

    private CacheActions()
    {
    }

    /**
     * @param cacheOf makes the cache under test for a state (called once per state).
     * @return chains of up to 20 actions.
     */
    static Arbitrary<ActionChain<VerbsState>> chains(final Function<VerbsState, NaiveRegistrationCache> cacheOf)
    {
        return VerbsActions.correctUse(ActionChain.startWith(() -> VerbsState.create(TestNic.builder(), MAX_BUFFER)))
            .withAction(4, cacheWrite(cacheOf))
            .withMaxTransformations(20);
    }

    /**
     * {@code post write qp_a sgl=src:LEN remote=bufN+OFF  # rkey from the registration cache}: reuses a buffer of
     * side B through the cache (registering on a miss) and writes into it from side A.
     */
    static Action<VerbsState> cacheWrite(final Function<VerbsState, NaiveRegistrationCache> cacheOf)
    {
        return VerbsActions.picking("cache write", s -> !s.mappedBuffers().isEmpty(), Set.of(Pick.Use.INDEX,
            Pick.Use.OFFSET, Pick.Use.LENGTH), s ->
        {
            final List<Buffer> mapped = s.mappedBuffers().stream().map(s::buffer).toList();
            return p ->
            {
                final Buffer pick = p.of(mapped);
                final String buf = pick.name();
                final long[] r = p.range(pick.lengthBytes());
                return VerbsActions.step("post write qp_a sgl=src:" + VerbsActions.size(r[1]) + " remote="
                    + VerbsActions.at(buf, r[0]) + "  # rkey from the registration cache", st ->
                    {
                        final Buffer b = st.buffer(buf);
                        if (b == null || !b.mapped() || r[0] + r[1] > b.lengthBytes())
                        {
                            return;
                        }
                        final NaiveRegistrationCache cache = st.attachment(NaiveRegistrationCache.class,
                            () -> cacheOf.apply(st));
                        final MemoryRegion mr = cache.get(b.addr() + r[0], r[1]);
                        VerbsActions.outcome(st, st.nic().write(st.source(), st.source().addr(), r[1],
                            b.addr() + r[0], mr.rkey()));
                    });
            };
        });
    }

    static NaiveRegistrationCache naive(final VerbsState s)
    {
        return new NaiveRegistrationCache(s.nic().pd(Side.B));
    }

    static NaiveRegistrationCache fixed(final VerbsState s)
    {
        return new FixedRegistrationCache(s.nic().pd(Side.B), s.nic().memory(Side.B));
    }
}
