package dev.rnicsim.testkit;

import static dev.rnicsim.testkit.Picks.INDEX;
import static dev.rnicsim.testkit.ScriptWords.at;
import static dev.rnicsim.testkit.ScriptWords.size;
import static dev.rnicsim.testkit.VerbsActions.forkResponder;
import static dev.rnicsim.testkit.VerbsActions.picking;
import static dev.rnicsim.testkit.VerbsActions.step;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.testkit.VerbsActions.Pick;
import dev.rnicsim.testkit.VerbsState.Buffer;
import dev.rnicsim.testkit.VerbsState.Mr;
import dev.rnicsim.verbs.VerbsException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.state.Action;

/**
 * The actions of {@link VerbsActions} on side B's process memory, as mm's system calls and the CPU see it: mmap of a
 * new buffer, munmap (with or without deregistering its MRs first), mmap at the same address again
 * (MAP_FIXED_NOREPLACE), a CPU store, fork, and madvise(MADV_DONTFORK). Stateless; their Javadoc is in
 * {@link VerbsActions}.
 */
final class MemoryActions
{
    private MemoryActions()
    {
    }

    /** @return the action of {@link VerbsActions#mmap()}. */
    static Action<VerbsState> mmap()
    {
        return picking("mmap", s -> true, Set.of(Pick.Use.LENGTH), s ->
        {
            final String name = s.nextBufferName();
            final long max = s.maxBufferBytes();
            return p ->
            {
                final long len = p.lengthUpTo(max);
                return step("mmap " + name + " app_b " + size(len), st ->
                {
                    if (st.buffer(name) == null)
                    {
                        st.addBuffer(new Buffer(name, Side.B, st.nic().alloc(Side.B, len), len, true));
                    }
                });
            };
        });
    }

    /**
     * @param deregFirst true to deregister the MRs over the buffer first ({@link VerbsActions#munmapAfterDereg()}),
     *                   false to leave them registered ({@link VerbsActions#munmap()}).
     * @return the action.
     */
    static Action<VerbsState> unmapping(final boolean deregFirst)
    {
        return picking(deregFirst ? "munmap after dereg" : "munmap", s -> !s.mappedBuffers().isEmpty(), INDEX, s ->
        {
            final List<Buffer> mapped = s.mappedBuffers().stream().map(s::buffer).toList();
            return p ->
            {
                final Buffer pick = p.of(mapped);
                final String name = pick.name();
                return step("munmap " + name + " " + size(pick.mappedBytes()) + (deregFirst
                    ? "  # after dereg of its MRs" : ""), st ->
                    {
                        final Buffer b = st.buffer(name);
                        if (b == null || !b.mapped())
                        {
                            return;
                        }
                        if (deregFirst)
                        {
                            final List<String> dereg = new ArrayList<>();
                            for (final Mr m : st.mrs())
                            {
                                if (m.live() && m.buffer().equals(name))
                                {
                                    m.mr().close();
                                    dereg.add(m.name());
                                }
                            }
                            if (!dereg.isEmpty())
                            {
                                st.record("  (dereg " + String.join(", ", dereg) + ")");
                            }
                        }
                        st.nic().munmap(b.side(), b.addr(), b.mappedBytes());
                        st.setMapped(name, false);
                    });
            };
        });
    }

    /** @return the action of {@link VerbsActions#mmapAgain()}. */
    static Action<VerbsState> mmapAgain()
    {
        return picking("mmap again", s -> !s.unmappedBuffers().isEmpty(), INDEX, s ->
        {
            final List<Buffer> unmapped = s.unmappedBuffers().stream().map(s::buffer).toList();
            return p ->
            {
                final Buffer pick = p.of(unmapped);
                final String name = pick.name();
                return step("mmap " + name + " app_b " + size(pick.lengthBytes())
                    + "  # MAP_FIXED: the same address again", st ->
                    {
                        final Buffer b = st.buffer(name);
                        if (b == null || b.mapped())
                        {
                            return;
                        }
                        try
                        {
                            st.nic().mmapFixed(b.side(), b.addr(), b.mappedBytes());
                            st.setMapped(name, true);
                        }
                        catch (final VerbsException e)
                        {
                            st.record("  -> " + e.errnoName());
                        }
                    });
            };
        });
    }

    /** @return the action of {@link VerbsActions#cpuWrite()}. */
    static Action<VerbsState> cpuWrite()
    {
        return picking("cpu write", s -> !s.mappedBuffers().isEmpty(), Set.of(Pick.Use.INDEX, Pick.Use.OFFSET), s ->
        {
            final List<Buffer> mapped = s.mappedBuffers().stream().map(s::buffer).toList();
            return p ->
            {
                final Buffer pick = p.of(mapped);
                final String name = pick.name();
                final long off = p.range(pick.lengthBytes())[0];
                final String text = "cpu" + off;
                final String data = text.substring(0, (int)Math.min(text.length(), pick.lengthBytes() - off));
                return step("write " + at(name, off) + " \"" + data + "\"", st ->
                {
                    final Buffer b = st.buffer(name);
                    if (b != null && b.mapped() && off + data.length() <= b.lengthBytes())
                    {
                        st.nic().cpuWrite(b.side(), b.addr() + off, data.getBytes(
                            StandardCharsets.US_ASCII));
                    }
                });
            };
        });
    }

    /** @return the action of {@link VerbsActions#fork()}. */
    static Action<VerbsState> fork()
    {
        return picking("fork", s -> true, Set.of(), s ->
        {
            final String name = s.nextChildName();
            return p -> step("fork " + name + " app_b", st -> forkResponder(st));
        });
    }

    /** @return the action of {@link VerbsActions#dontFork()}. */
    static Action<VerbsState> dontFork()
    {
        return picking("dontfork", s -> !s.mappedBuffers().isEmpty(), INDEX, s ->
        {
            final List<Buffer> mapped = s.mappedBuffers().stream().map(s::buffer).toList();
            return p ->
            {
                final Buffer pick = p.of(mapped);
                final String name = pick.name();
                return step("madvise " + name + " " + size(pick.mappedBytes()) + " dontfork", st ->
                {
                    final Buffer b = st.buffer(name);
                    if (b != null && b.mapped())
                    {
                        try
                        {
                            st.nic().process(b.side()).madvise(b.addr(), b.mappedBytes(), Madvice.DONTFORK);
                        }
                        catch (final KernelException e)
                        {
                            st.record("  -> " + e.errno());
                        }
                    }
                });
            };
        });
    }
}
