package dev.rnicsim.keys;

import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The actions of the key-lifecycle chains. Each is symbolic (it names buffers, MRs, windows, PDs and keys, never an
 * address or a key value), so that the same action runs in the worlds of every key policy, and its {@link #toString}
 * is its line in the scenario language ({@code Spec.VERBS}), as jqwik prints a chain.
 */
final class KeyOps
{
    private KeyOps()
    {
    }

    /** The remote operations. */
    enum Op
    {
        READ,
        WRITE,
        FAA,
        CAS
    }

    /** An action: applied to one world, and named by its script line. */
    sealed interface KeyOp
    {
        void apply(KeyWorld w);

        /** Advances the chain's name counters past the names this action introduces. */
        default void advance(final Names n)
        {
        }
    }

    /** The counters behind the names actions introduce, shared by every world of a chain. */
    static final class Names
    {
        int buf;
        int mr;
        int mw;
        int pd = 1;
        int key;
        int child;
        int ctx = 1;
    }

    static String words(final Set<Access> access)
    {
        if (access.isEmpty())
        {
            return "none";
        }
        final List<String> w = new ArrayList<>();
        for (final Access a : Access.values())
        {
            if (access.contains(a))
            {
                w.add(switch (a)
                {
                    case LOCAL_WRITE -> "lw";
                    case REMOTE_WRITE -> "rw";
                    case REMOTE_READ -> "rr";
                    case REMOTE_ATOMIC -> "ra";
                    case MW_BIND -> "mw";
                    default -> a.name().toLowerCase(Locale.ROOT);
                });
            }
        }
        return String.join(",", w);
    }

    static String accessLine(final Op op, final int pd, final int keyN, final String buf, final long off,
        final int len, final long compareOrAdd, final long swap)
    {
        final String remote = " remote=" + Script.at(buf, off) + " rkey=k" + keyN;
        return switch (op)
        {
            case READ -> "post read qa" + pd + " sgl=smr:" + len + remote;
            case WRITE -> "post write qa" + pd + " sgl=smr:" + len + remote;
            case FAA -> "post faa qa" + pd + " sgl=smr:8" + remote + " add=" + compareOrAdd;
            case CAS -> "post cas qa" + pd + " sgl=smr:8" + remote + " compare=" + compareOrAdd + " swap=" + swap;
        };
    }

    record Mmap(String buf, long size) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.mmap(buf, size);
        }

        @Override
        public void advance(final Names n)
        {
            n.buf++;
        }

        @Override
        public String toString()
        {
            return "mmap " + buf + " app_b " + Script.size(size);
        }
    }

    record CpuWrite(String buf, long off, String text) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.cpuWrite(buf, off, text);
        }

        @Override
        public String toString()
        {
            return "write " + Script.at(buf, off) + " \"" + text + "\"";
        }
    }

    record CpuRead(String buf, long off, int len) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.cpuRead(buf, off, len);
        }

        @Override
        public String toString()
        {
            return "touch " + Script.at(buf, off) + " " + len;
        }
    }

    record Munmap(String buf, long off, long len) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.munmap(buf, off, len);
        }

        @Override
        public String toString()
        {
            return "munmap " + Script.at(buf, off) + " " + Script.size(len);
        }
    }

    record Madvise(String buf, long off, long len, Madvice advice) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.madvise(buf, off, len, advice);
        }

        @Override
        public String toString()
        {
            return "madvise " + Script.at(buf, off) + " " + Script.size(len) + " "
                + advice.name().toLowerCase(Locale.ROOT);
        }
    }

    record Fork(String child) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.fork(child);
        }

        @Override
        public void advance(final Names n)
        {
            n.child++;
        }

        @Override
        public String toString()
        {
            return "fork " + child + " app_b";
        }
    }

    record Reclaim(long pages) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.reclaim(pages);
        }

        @Override
        public String toString()
        {
            return "reclaim beta " + pages;
        }
    }

    record Compact() implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.memoryVerbs.compact();
        }

        @Override
        public String toString()
        {
            return "compact beta";
        }
    }

    record Reg(String mr, int pd, String buf, long off, long len, Set<Access> access, int keyN) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.registrations.reg(mr, pd, buf, off, len, access, keyN);
        }

        @Override
        public void advance(final Names n)
        {
            n.mr++;
            n.key++;
        }

        @Override
        public String toString()
        {
            return "reg " + mr + " pd_b" + pd + " " + Script.at(buf, off) + " " + Script.size(len) + " access="
                + words(access);
        }
    }

    record Dereg(String mr) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.registrations.dereg(mr);
        }

        @Override
        public String toString()
        {
            return "dereg " + mr;
        }
    }

    /** ibv_rereg_mr: pd= is CHANGE_PD, addr= and size= CHANGE_TRANSLATION, access= CHANGE_ACCESS; none: flags 0. */
    record Rereg(String mr, Integer pd, String buf, long off, long len, Set<Access> access, int keyN) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.registrations.rereg(mr, pd, buf, off, len, access, keyN);
        }

        @Override
        public void advance(final Names n)
        {
            n.key++;
        }

        @Override
        public String toString()
        {
            return "rereg " + mr + (pd == null ? "" : " pd=pd_b" + pd) + (buf == null ? "" : " addr="
                + Script.at(buf, off) + " size=" + Script.size(len)) + (access == null ? "" : " access="
                + words(access));
        }
    }

    record AllocMw(String mw, int pd, MwType type, int keyN) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.windows.allocMw(mw, pd, type, keyN);
        }

        @Override
        public void advance(final Names n)
        {
            n.mw++;
            n.key++;
        }

        @Override
        public String toString()
        {
            return "mw " + mw + " pd_b" + pd + " type=" + type.code();
        }
    }

    record Bind(String mw, int pd, String mr, long off, long len, Set<Access> rights, int keyN) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.windows.bind(mw, pd, mr, off, len, rights, keyN);
        }

        @Override
        public void advance(final Names n)
        {
            n.key++;
        }

        @Override
        public String toString()
        {
            return "bind " + mw + " qb" + pd + " " + mr + " addr=" + Script.at(mr, off) + " length=" + Script.size(len)
                + " access=" + words(rights);
        }
    }

    record Unbind(String mw, int pd, int keyN) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.windows.unbind(mw, pd, keyN);
        }

        @Override
        public void advance(final Names n)
        {
            n.key++;
        }

        @Override
        public String toString()
        {
            return "unbind " + mw + " qb" + pd;
        }
    }

    record LocalInv(int pd, int keyN) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.windows.localInv(pd, keyN);
        }

        @Override
        public String toString()
        {
            return "post local_inv qb" + pd + " rkey=k" + keyN;
        }
    }

    record Dealloc(String mw) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.windows.dealloc(mw);
        }

        @Override
        public String toString()
        {
            return "close " + mw;
        }
    }

    record Remote(Op op, int pd, int keyN, String buf, long off, int len, String text, long compareOrAdd, long swap)
        implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.remoteAccess.access(op, pd, keyN, buf, off, len, text, compareOrAdd, swap);
        }

        @Override
        public String toString()
        {
            return accessLine(op, pd, keyN, buf, off, len, compareOrAdd, swap);
        }
    }

    record AllocPd(int pd, String ctx) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.connections.allocPd(pd);
        }

        @Override
        public void advance(final Names n)
        {
            n.pd++;
        }

        @Override
        public String toString()
        {
            return "pd pd_b" + pd + " " + ctx;
        }
    }

    record ClosePd(int pd) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.connections.closePd(pd);
        }

        @Override
        public String toString()
        {
            return "close pd_b" + pd;
        }
    }

    record CloseContext(String ctx, int next) implements KeyOp
    {
        @Override
        public void apply(final KeyWorld w)
        {
            w.connections.closeContext("ctx_b" + next, "cq_b" + next);
        }

        @Override
        public void advance(final Names n)
        {
            n.ctx++;
        }

        @Override
        public String toString()
        {
            return "close " + ctx;
        }
    }
}
