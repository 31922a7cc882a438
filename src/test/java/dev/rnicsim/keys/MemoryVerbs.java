package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyWorld.PAGE;
import static dev.rnicsim.keys.KeyWorld.mmap4k;
import static dev.rnicsim.keys.KeyWorld.run;
import static dev.rnicsim.keys.WorldModel.ZERO;

import dev.rnicsim.keys.WorldModel.Buf;
import dev.rnicsim.keys.WorldModel.Page;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.Madvice;
import java.util.Arrays;
import java.util.Locale;

/**
 * The actions of a {@link KeyWorld} on app_b's memory: mmap, CPU writes and reads, munmap, madvise, fork, reclaim and
 * compaction, each predicted from {@link BetaMemory}, run on the simulator, compared, and applied to the model. Not
 * thread safe.
 */
final class MemoryVerbs
{
    private final KeyWorld world;

    MemoryVerbs(final KeyWorld world)
    {
        this.world = world;
    }

    // ------------------------------------------------------------------ actions: memory

    void mmap(final String buf, final long size)
    {
        world.start(() -> "mmap " + buf + " app_b " + Script.size(size));
        final long addr = mmap4k(world.appB, size);
        for (long va = addr; va < addr + size; va += PAGE)
        {
            if (world.memory.pages.containsKey(va))
            {
                throw world.failure("mmap placed " + buf + " over page 0x" + Long.toHexString(va) + ", mapped already");
            }
            world.memory.pages.put(va, new Page());
            world.memory.pagesVersion++;
        }
        world.bufs.put(buf, new Buf(buf, addr, size));
        world.bound.add(buf);
    }

    void cpuWrite(final String buf, final long off, final String text)
    {
        final Script.Line line = () -> "write " + Script.at(buf, off) + " \"" + text + "\"";
        if (world.skipUnbound(line, buf))
        {
            return;
        }
        world.start(line);
        final long addr = world.bufAddr(buf) + off;
        final byte[] data = text.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        final String predicted = world.memory.allMapped(addr, data.length) ? "ok" : "EFAULT";
        world.expectLine(predicted);
        world.expectOutcome(predicted, run(() -> world.appB.write(addr, data)));
        if (predicted.equals("ok"))
        {
            world.memory.write(addr, data);
        }
    }

    void cpuRead(final String buf, final long off, final int len)
    {
        final Script.Line line = () -> "touch " + Script.at(buf, off) + " " + len;
        if (world.skipUnbound(line, buf))
        {
            return;
        }
        world.start(line);
        final long addr = world.bufAddr(buf) + off;
        if (!world.memory.allMapped(addr, len))
        {
            world.expectLine("EFAULT");
            world.expectOutcome("EFAULT", run(() -> world.appB.touch(addr, len, false)));
            return;
        }
        final byte[] expected = world.memory.read(addr, len);
        world.line(() -> "expect bytes " + Script.at(buf, off) + " " + Script.hex(expected));
        world.expectOutcome("ok", run(() -> world.appB.touch(addr, len, false)));
        final byte[] got = world.appB.read(addr, len);
        if (!Arrays.equals(expected, got))
        {
            throw world.failure(Mismatch.Kind.BYTES, "a CPU read of " + len + " bytes at 0x" + Long.toHexString(addr)
                + " gave "
                + Script.hex(got) + ", the model " + Script.hex(expected));
        }
    }

    void munmap(final String buf, final long off, final long len)
    {
        final Script.Line line = () -> "munmap " + Script.at(buf, off) + " " + Script.size(len);
        if (world.skipUnbound(line, buf))
        {
            return;
        }
        world.start(line);
        final long addr = world.bufAddr(buf) + off;
        world.expectOutcome("ok", run(() -> world.appB.munmap(addr, len)));
        for (long va = addr; va < addr + len; va += PAGE)
        {
            world.memory.unmapPage(va);
        }
    }

    void madvise(final String buf, final long off, final long len, final Madvice advice)
    {
        final Script.Line line = () -> "madvise " + Script.at(buf, off) + " " + Script.size(len) + " "
            + advice.name().toLowerCase(Locale.ROOT);
        if (world.skipUnbound(line, buf))
        {
            return;
        }
        world.start(line);
        final long addr = world.bufAddr(buf) + off;
        final String predicted = world.memory.allMapped(addr, len) ? "ok" : "ENOMEM";
        world.expectLine(predicted);
        world.expectOutcome(predicted, run(() -> world.appB.madvise(addr, len, advice)));
        if (!predicted.equals("ok"))
        {
            return;
        }
        for (long va = addr; va < addr + len; va += PAGE)
        {
            final Page p = world.memory.pages.get(va);
            switch (advice)
            {
                case DONTNEED -> BetaMemory.drop(p);
                case DONTFORK -> p.dontfork = true;
                case DOFORK -> p.dontfork = false;
                default ->
                {
                }
            }
        }
    }

    void fork(final String child)
    {
        world.start("fork " + child + " app_b");
        final boolean modern = world.params.fork() == ForkBehaviour.MODERN;
        world.expectOutcome("ok", run(() -> world.appB.fork(child)));
        for (final long va : world.memory.pages.sortedAddresses())
        {
            final Page p = world.memory.pages.get(va);
            if (p.dontfork || p.swapped || p.frame == null || p.frame == ZERO)
            {
                continue;
            }
            if (!(modern && p.frame.pins > 0))
            {
                p.frame.mapCount++;
            }
        }
        world.bound.add(child);
    }

    void reclaim(final long target)
    {
        world.start("reclaim beta " + target);
        world.hostB.host().reclaim(target);
        for (final long va : world.memory.pages.sortedAddresses())
        {
            final Page p = world.memory.pages.get(va);
            if (p.swapped || p.frame == null || p.frame == ZERO || world.appB.translate(va) >= 0)
            {
                continue;
            }
            if (p.frame.pins > 0 || p.frame.mapCount != 1)
            {
                throw world.failure("reclaim took page 0x" + Long.toHexString(va) + ", whose frame has "
                    + p.frame.pins
                    + " pin(s) and " + p.frame.mapCount + " mapping(s): only exclusive unpinned pages may go");
            }
            p.frame.mapCount--;
            p.swapped = true;
        }
    }

    void compact()
    {
        world.start("compact beta");
        world.hostB.host().compact();
        for (final long va : world.memory.pages.sortedAddresses())
        {
            final Page p = world.memory.pages.get(va);
            if (!p.swapped && p.frame != null && world.appB.translate(va) < 0)
            {
                throw world.failure("compaction left page 0x" + Long.toHexString(va) + " not present");
            }
        }
    }
}
