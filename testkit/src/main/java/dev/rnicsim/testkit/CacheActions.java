package dev.rnicsim.testkit;

import dev.rnicsim.testkit.VerbsActions.Pick;
import dev.rnicsim.testkit.VerbsState.Buffer;
import dev.rnicsim.verbs.MemoryRegion;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;

/**
 * Actions that put a registration cache of your own into a chain of {@link VerbsActions}: side A writes into a buffer
 * of side B under the rkey of the MR your cache returns for the range, while the other actions allocate, free, map
 * again and fork. A cache that is not told when memory goes away hands out an MR that still pins the old pages;
 * strict mode reports the write that lands there ({@link Violation.Kind#STALE_MAPPING}). This is the bug UCX's and
 * Open MPI's memory hooks exist to prevent. Stateless.
 */
public final class CacheActions
{
    /** Buffers up to 64 KiB: enough for page edges, cheap to run hundreds of chains. */
    public static final long MAX_BUFFER = 64 << 10;

    /**
     * The cache under test, as these actions see it.
     */
    @FunctionalInterface
    public interface MrCache
    {
        /**
         * @param addr        first byte of a range of side B's memory.
         * @param lengthBytes bytes, at least 1.
         * @return a registered MR of side B's PD covering the range with at least LOCAL_WRITE and REMOTE_WRITE:
         *         one it registered earlier, or a new one.
         */
        MemoryRegion cover(long addr, long lengthBytes);
    }

    private CacheActions()
    {
    }

    /**
     * A correct application ({@link VerbsActions#correctUse}) that also writes into side B's buffers through a cache.
     *
     * @param cacheOf makes the cache under test for a state (called once per state, on the first write through
     *                it).
     * @return chains of up to 20 actions over buffers of up to {@link #MAX_BUFFER} bytes.
     */
    public static Arbitrary<ActionChain<VerbsState>> chains(final Function<VerbsState, ? extends MrCache> cacheOf)
    {
        return VerbsActions.correctUse(ActionChain.startWith(() -> VerbsState.create(TestNic.builder(), MAX_BUFFER)))
            .withAction(4, cacheWrite(cacheOf))
            .withMaxTransformations(20);
    }

    /**
     * {@code post write qp_a sgl=src:LEN remote=bufN+OFF  # rkey from the registration cache}: asks the cache for an
     * MR over a range of a mapped buffer of side B (the cache registers on a miss) and writes into it from side A.
     * Its precondition: side B has a mapped buffer.
     *
     * @param cacheOf makes the cache under test for a state (called once per state).
     * @return the action.
     */
    public static Action<VerbsState> cacheWrite(final Function<VerbsState, ? extends MrCache> cacheOf)
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
                        final MrCache cache = st.attachment(MrCache.class, () -> cacheOf.apply(st));
                        final MemoryRegion mr = cache.cover(b.addr() + r[0], r[1]);
                        VerbsActions.outcome(st, st.nic().write(st.source(), st.source().addr(), r[1],
                            b.addr() + r[0], mr.rkey()));
                    });
            };
        });
    }
}
