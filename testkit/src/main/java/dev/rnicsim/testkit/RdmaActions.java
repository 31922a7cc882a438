package dev.rnicsim.testkit;

import static dev.rnicsim.testkit.Picks.RANGE;
import static dev.rnicsim.testkit.ScriptWords.at;
import static dev.rnicsim.testkit.ScriptWords.size;
import static dev.rnicsim.testkit.VerbsActions.outcome;
import static dev.rnicsim.testkit.VerbsActions.picking;
import static dev.rnicsim.testkit.VerbsActions.step;

import dev.rnicsim.testkit.VerbsActions.Pick;
import dev.rnicsim.testkit.VerbsState.Buffer;
import dev.rnicsim.testkit.VerbsState.Mr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.state.Action;

/**
 * The actions of {@link VerbsActions} that post work requests: RDMA WRITE and READ from side A into side B's MRs,
 * inside their ranges or with any key at any address. A completion that is not a success is an outcome, logged.
 * Stateless; their Javadoc is in {@link VerbsActions}.
 */
final class RdmaActions
{
    private RdmaActions()
    {
    }

    /**
     * @param write true for {@link VerbsActions#remoteWrite()}, false for {@link VerbsActions#remoteRead()}.
     * @return the action.
     */
    static Action<VerbsState> rdmaInRange(final boolean write)
    {
        final Access right = write ? Access.REMOTE_WRITE : Access.REMOTE_READ;
        return picking(write ? "write" : "read", s -> !s.liveMrsWith(right).isEmpty(), RANGE, s ->
        {
            final List<Mr> live = s.liveMrsWith(right).stream().map(s::mr).toList();
            final long srcBytes = s.sourceBytes();
            return p ->
            {
                final Mr pick = p.of(live);
                final String name = pick.name();
                final long[] r = p.range(Math.min(pick.lengthBytes(), srcBytes));
                return step("post " + (write ? "write" : "read") + " qp_a sgl=src:" + size(r[1]) + " remote="
                    + at(name, r[0]), st ->
                    {
                        final Mr m = st.mr(name);
                        if (m != null && m.live() && r[0] + r[1] <= m.lengthBytes())
                        {
                            outcome(st, rdma(st, write, r[1], m.addr() + r[0], m.rkey()));
                        }
                    });
            };
        });
    }

    /** @return the action of {@link VerbsActions#remoteAccessAnyKey()}. */
    static Action<VerbsState> remoteAccessAnyKey()
    {
        final Set<Pick.Use> uses = EnumSet.allOf(Pick.Use.class);
        return picking("any key", s -> !s.mappedBuffers().isEmpty() || !s.mrs().isEmpty(), uses, s ->
        {
            final List<Mr> mrs = s.mrs();
            final List<Buffer> mapped = s.mappedBuffers().stream().map(s::buffer).toList();
            final List<Integer> issued = s.issuedKeys();
            final long maxLen = Math.min(s.sourceBytes(), 64L << 10);
            return p ->
            {
                final boolean write = !p.coin();
                final long len = p.lengthUpTo(maxLen);
                final boolean byMr = mapped.isEmpty() || !mrs.isEmpty() && p.percent() < 60;
                final String name;
                final long length;
                final Integer key;
                if (byMr)
                {
                    final Mr m = p.of(mrs);
                    name = m.name();
                    length = m.lengthBytes();
                    key = null;
                }
                else
                {
                    final Buffer b = p.of(mapped);
                    name = b.name();
                    length = b.lengthBytes();
                    final int k = p.percent() % 10;
                    key = k < 6 && !issued.isEmpty() ? p.of(issued) : k < 7 ? 0 : p.key();
                }
                final int where = p.percent() % 5;
                final long off = switch (where)
                {
                    case 0, 1 -> p.range(length)[0];
                    case 2 -> -1;
                    case 3 -> length;
                    default -> length + VerbsArbitraries.PAGE;
                };
                return step("post " + (write ? "write" : "read") + " qp_a sgl=src:" + size(len) + " remote="
                    + at(name, off) + " rkey=" + (key == null ? name + ".rkey" : "0x" + Integer.toHexString(key)),
                    st ->
                    {
                        final long base;
                        final int rkey;
                        if (key == null)
                        {
                            final Mr m = st.mr(name);
                            if (m == null)
                            {
                                return;
                            }
                            base = m.addr();
                            rkey = m.rkey();
                        }
                        else
                        {
                            final Buffer b = st.buffer(name);
                            if (b == null)
                            {
                                return;
                            }
                            base = b.addr();
                            rkey = key;
                        }
                        outcome(st, rdma(st, write, len, base + off, rkey));
                    });
            };
        });
    }

    private static WorkCompletion rdma(final VerbsState st, final boolean write, final long length,
        final long remote, final int rkey)
    {
        final MemoryRegion src = st.source();
        return write ? st.nic().write(src, src.addr(), length, remote, rkey) : st.nic().read(src, src.addr(), length,
            remote, rkey);
    }
}
