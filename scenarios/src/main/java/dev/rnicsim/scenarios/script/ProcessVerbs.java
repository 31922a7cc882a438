package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Set;

/**
 * Script verbs of a process's memory and life, as system calls and CPU accesses make them: {@code mmap},
 * {@code touch}, {@code write}, {@code munmap}, {@code madvise}, {@code mprotect}, {@code fork} and {@code exit};
 * also how ADDR and DATA arguments are read ({@link #address}, {@link #data}, {@link #filled}). Stateless.
 */
final class ProcessVerbs
{
    private ProcessVerbs()
    {
    }

    /** @return the hugetlb page size a backing word names (64k, 2m, 32m, 512m, 1g, 16g). */
    private static PageSize hugeSizeOf(final String word)
    {
        for (final PageSize size : PageSize.values())
        {
            if (size.word().equals(word))
            {
                return size;
            }
        }
        throw new IllegalArgumentException("backing=" + word);
    }

    /** {@code mmap NAME PROCESS SIZE [backing=] [prot=]}: anonymous memory of base pages, THP or a hugetlb size. */
    static Outcome mmap(final Session s, final ScriptLine l)
    {
        final UserProcess p = s.get(l, l.args().get(1), UserProcess.class);
        final long len = s.evalNum(l, l.args().get(2));
        final String backing = l.options().getOrDefault("backing", "4k");
        final Set<Prot> prot = prot(l.options().getOrDefault("prot", "rw"));
        // noreserve: MAP_NORESERVE, a mapping the overcommit check does not account (mm/mmap.c accountable_mapping)
        final Set<MapFlag> flags = java.util.EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS);
        if (l.flags().contains("noreserve"))
        {
            flags.add(MapFlag.NORESERVE);
        }
        final long addr = switch (backing)
        {
            case "hugetlb" -> p.mmap(0, len, prot, with(flags, MapFlag.HUGETLB));
            case "64k", "2m", "32m", "512m", "1g", "16g" -> p.mmap(0, len, prot, with(with(flags, MapFlag.HUGETLB),
                MapFlag.hugeSize(hugeSizeOf(backing))));
            default ->
            {
                final long a = p.mmap(0, len, prot, flags);
                final long page = p.host().config().basePage().bytes();
                p.madvise(a, (len + page - 1) & -page, backing.equals("thp") ? Madvice.HUGEPAGE : Madvice.NOHUGEPAGE);
                yield a;
            }
        };
        s.names.put(l.args().get(0), new Session.Buffer(p, addr, len));
        // base pages are labelled with the host's page size (4k, 16k or 64k)
        return Outcome.ok("0x" + Long.toHexString(addr) + ", " + ProcessChecks.mappedLength(p, addr, len) + " ("
            + (backing.equals("4k") && p.host().config().basePage().kb() != 4 ? p.host().config().basePage().kb()
                + "k base pages" : backing)
            + (flags.contains(MapFlag.NORESERVE) ? ", MAP_NORESERVE" : "") + ")");
    }

    private static Set<MapFlag> with(final Set<MapFlag> flags, final MapFlag flag)
    {
        final Set<MapFlag> all = java.util.EnumSet.copyOf(flags);
        all.add(flag);
        return all;
    }

    /** @return the protection a {@code prot=} word names (rw by default). */
    static Set<Prot> prot(final String word)
    {
        return switch (word)
        {
            case "r" -> Set.of(Prot.READ);
            case "none" -> Set.of();
            default -> Prot.READ_WRITE;
        };
    }

    /** {@code touch ADDR SIZE [write] [process=P]}: CPU accesses that fault the pages in. */
    static Outcome touch(final Session s, final ScriptLine l)
    {
        final Session.Val a = address(s, l, l.args().get(0));
        // process=: the same address in another process, e.g. a child after fork.
        final UserProcess p = l.options().containsKey("process")
            ? s.get(l, l.options().get("process"), UserProcess.class) : a.process();
        final long t0 = s.fabric.clock().nowNs();
        final long pages = s.fabric.cpuWork(p, "touch", () -> p.touch(a.num(),
            s.evalAmount(l, l.args().get(1), "a size in bytes"), l.flags().contains("write")));
        return Outcome.ok(Units.count(pages, "page", "pages") + " faulted in ("
            + Units.duration(s.fabric.clock().nowNs() - t0) + " of page faults)");
    }

    /** {@code write ADDR DATA [SIZE]}: a CPU store. */
    static Outcome write(final Session s, final ScriptLine l)
    {
        final Session.Val a = address(s, l, l.args().get(0));
        final byte[] data = filled(s, l, data(l.args().get(1)), 2);
        s.fabric.cpuWork(a.process(), "write", () ->
        {
            a.process().write(a.num(), data);
            return null;
        });
        return Outcome.ok(data.length + " bytes at 0x" + Long.toHexString(a.num()));
    }

    /** A memory verb on ADDR SIZE. */
    interface MemoryOp
    {
        void apply(UserProcess p, long addr, long length);
    }

    /** A memory system call on {@code ADDR SIZE}: munmap, madvise, mprotect. */
    static Outcome memory(final Session s, final ScriptLine l, final MemoryOp op, final String done)
    {
        final Session.Val a = address(s, l, l.args().get(0));
        final long len = s.evalNum(l, l.args().get(1));
        op.apply(a.process(), a.num(), len);
        return Outcome.ok(done + " " + Units.bytes(len) + " at 0x" + Long.toHexString(a.num()));
    }

    /** @return the value of an ADDR argument, which must point into a process (not GPU memory). */
    static Session.Val address(final Session s, final ScriptLine l, final String expr)
    {
        final Session.Val v = s.eval(l, expr);
        if (v.process() == null || Gpus.at(s, l, v) != null)
        {
            throw l.error("'" + expr + "' is no address in a process: start it with a buffer or MR name"
                + (Gpus.at(s, l, v) != null ? " (it is GPU memory: gpuwrite stores there, memcpy copies)" : ""));
        }
        return v;
    }

    /**
     * @param data  the bytes of a DATA argument.
     * @param index where the optional SIZE argument is.
     * @return the bytes, repeated to SIZE bytes when SIZE is given.
     */
    static byte[] filled(final Session s, final ScriptLine l, final byte[] data, final int index)
    {
        if (l.args().size() <= index)
        {
            return data;
        }
        final long size = s.evalNum(l, l.args().get(index));
        if (size <= 0 || size > 1L << 30 || data.length == 0)
        {
            throw l.error("SIZE " + size + ": give 1 byte to 1 GiB of a non-empty pattern to repeat");
        }
        final byte[] out = new byte[(int)size];
        for (int i = 0; i < out.length; i++)
        {
            out[i] = data[i % data.length];
        }
        return out;
    }

    /** @return the bytes of a DATA argument: a quoted string, or {@code hex:BYTES}. */
    static byte[] data(final String token)
    {
        if (token.startsWith("hex:"))
        {
            return HexFormat.of().parseHex(token.substring(4));
        }
        return ScriptParser.unquote(token).getBytes(StandardCharsets.UTF_8);
    }

    /** {@code fork NAME PROCESS}: a child, copy-on-write (modern or legacy per the host). */
    static Outcome fork(final Session s, final ScriptLine l)
    {
        final UserProcess parent = s.get(l, l.args().get(1), UserProcess.class);
        final UserProcess child = parent.fork(l.args().get(0));
        s.names.put(l.args().get(0), child);
        final long notCopied = parent.vmaCount() - child.vmaCount();
        return Outcome.ok("child pid " + child.pid() + (notCopied > 0 ? ", without the " + notCopied
            + " VM_DONTCOPY (MADV_DONTFORK) VMAs of its parent" : ""));
    }

    /** {@code exit PROCESS}: the process exits; its contexts close as the kernel closes its files. */
    static Outcome exit(final Session s, final ScriptLine l)
    {
        final UserProcess p = s.get(l, l.args().get(0), UserProcess.class);
        if (p.exited())
        {
            // as every other verb on an exited process (mmap, fork): the process is gone, it cannot exit again
            throw new dev.rnicsim.pagetable.KernelException(dev.rnicsim.pagetable.Errno.EINVAL, "process " + p.pid()
                + " (" + p.name() + ") has exited already; create a new process (the exited one keeps nothing)");
        }
        p.exit();
        return Outcome.ok("pid " + p.pid() + " exited; its contexts closed");
    }
}
