package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyChains.*;

import dev.rnicsim.keys.KeyChains.Snapshot;
import dev.rnicsim.keys.KeyChains.Step;
import dev.rnicsim.keys.KeyOps.KeyOp;
import dev.rnicsim.keys.WorldModel.Buf;
import dev.rnicsim.pagetable.Madvice;

/**
 * The kinds of action of {@link KeyChains} that act on the host and the verbs objects around the keys: memory
 * (mmap, CPU stores and loads, munmap, madvise, fork, reclaim, compaction), protection domains and contexts.
 */
final class HostSteps
{
    private HostSteps()
    {
    }

    // ------------------------------------------------------------------ memory actions

    static final class MmapAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.bufs().size() < 8;
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.Mmap("buf" + s.nextBuf(), d.of(8L << 10, 16L << 10, 32L << 10));
        }
    }

    static final class CpuWriteAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final Buf b = d.of(s.bufs());
            final long off = offset(d, b.lengthBytes());
            final int n = d.between(1, (int)Math.min(32, b.lengthBytes() - off));
            return new KeyOps.CpuWrite(b.name(), off, d.text(n));
        }
    }

    static final class CpuReadAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final Buf b = d.of(s.bufs());
            final long off = offset(d, b.lengthBytes());
            return new KeyOps.CpuRead(b.name(), off, d.between(1, (int)Math.min(48, b.lengthBytes() - off)));
        }
    }

    static final class MunmapAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final Buf b = d.of(s.bufs());
            final long p = d.between(0, b.lengthBytes() / PAGE - 1);
            return new KeyOps.Munmap(b.name(), p * PAGE, d.between(1, b.lengthBytes() / PAGE - p) * PAGE);
        }
    }

    static final class MadviseAction implements Step
    {
        private static final Madvice[] ADVICE = {Madvice.DONTNEED, Madvice.DONTFORK, Madvice.DOFORK,
            Madvice.HUGEPAGE, Madvice.NOHUGEPAGE};

        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final Buf b = d.of(s.bufs());
            final long p = d.between(0, b.lengthBytes() / PAGE - 1);
            final long n = d.between(1, b.lengthBytes() / PAGE - p);
            return new KeyOps.Madvise(b.name(), p * PAGE, n * PAGE, ADVICE[d.weighted(4, 2, 1, 1, 1)]);
        }
    }

    static final class ForkAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.nextChild() < 3 && !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.Fork("child" + s.nextChild());
        }
    }

    static final class ReclaimAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.Reclaim(d.of(16L, 256L, 100000L));
        }
    }

    static final class CompactAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.Compact();
        }
    }

    // ------------------------------------------------------------------ PDs and contexts

    static final class AllocPdAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.livePds().size() < 3;
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.AllocPd(s.nextPd(), s.ctx());
        }
    }

    static final class ClosePdAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.livePds().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.ClosePd(d.of(s.livePds()));
        }
    }

    static final class CloseContextAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.nextCtx() < 3;
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.CloseContext(s.ctx(), s.nextCtx());
        }
    }
}
