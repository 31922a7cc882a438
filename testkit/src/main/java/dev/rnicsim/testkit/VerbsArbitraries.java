package dev.rnicsim.testkit;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.Sge;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * jqwik arbitraries for the values verbs take: access-flag sets, buffer lengths, offsets, keys, SGEs, window
 * binds. Each shrinks towards the simplest value (no flags, one byte, offset 0, the first issued key). Lengths and
 * offsets are in bytes; lengths and offsets are biased to the edges where registration code breaks: 4 KiB and
 * 2 MiB page boundaries and one byte either side of them. None uses {@code flatMap}, so they stay cheap to
 * generate and shrink in long action chains.
 */
public final class VerbsArbitraries
{
    /** 4 KiB, the base page. */
    public static final long PAGE = 4096;
    /** 2 MiB, the huge page. */
    public static final long HUGE_PAGE = 2L << 20;
    /** The most {@link #bufferLengths()} generates: 4 MiB. */
    public static final long DEFAULT_MAX_LENGTH = 4L << 20;

    /** The flags a plain MR of the simulated devices accepts (ON_DEMAND, FLUSH and HUGETLB are refused, ZERO_BASED
     * changes addressing). */
    private static final List<Access> MR_FLAGS = List.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC, Access.MW_BIND, Access.RELAXED_ORDERING);

    private VerbsArbitraries()
    {
    }

    /**
     * @return sets of any {@link Access} flags, valid or not (EINVAL, EOPNOTSUPP from {@code ibv_reg_mr} included).
     */
    public static Arbitrary<Set<Access>> anyAccess()
    {
        return Arbitraries.of(Access.class).set().map(VerbsArbitraries::copy);
    }

    /**
     * @return sets of MR flags that {@code ibv_reg_mr} accepts: any of LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ,
     * REMOTE_ATOMIC, MW_BIND, RELAXED_ORDERING where REMOTE_WRITE or REMOTE_ATOMIC come with LOCAL_WRITE (the rule of
     * {@code ib_check_mr_access}; S9).
     */
    public static Arbitrary<Set<Access>> validAccess()
    {
        return Arbitraries.of(MR_FLAGS).set().map(VerbsArbitraries::withDependencies);
    }

    /**
     * @return valid MR flags that let a peer write (LOCAL_WRITE, REMOTE_WRITE and maybe others).
     */
    public static Arbitrary<Set<Access>> remotelyWritableAccess()
    {
        return validAccess().map(s ->
        {
            final EnumSet<Access> e = EnumSet.copyOf(s.isEmpty() ? EnumSet.of(Access.LOCAL_WRITE) : s);
            e.add(Access.LOCAL_WRITE);
            e.add(Access.REMOTE_WRITE);
            return (Set<Access>)e;
        });
    }

    /**
     * @return sets of MR flags that break the rule: REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE (EINVAL).
     */
    public static Arbitrary<Set<Access>> invalidAccess()
    {
        return Arbitraries.of(MR_FLAGS).set().map(s ->
        {
            final EnumSet<Access> e = s.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(s);
            e.remove(Access.LOCAL_WRITE);
            if (!e.contains(Access.REMOTE_ATOMIC))
            {
                e.add(Access.REMOTE_WRITE);
            }
            return (Set<Access>)e;
        });
    }

    /**
     * @param access a set of flags.
     * @return true when {@code ibv_reg_mr} accepts it by the dependency rule.
     */
    public static boolean isValid(final Set<Access> access)
    {
        return !(access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
            || access.contains(Access.LOCAL_WRITE);
    }

    /**
     * @return buffer lengths from 1 byte to {@value #DEFAULT_MAX_LENGTH} bytes, biased to page edges.
     */
    public static Arbitrary<Long> bufferLengths()
    {
        return bufferLengths(1, DEFAULT_MAX_LENGTH);
    }

    /**
     * @param min the least length in bytes, at least 1.
     * @param max the most, at least min.
     * @return lengths in {@code [min, max]}: a third uniformly, a third whole 4 KiB pages (or 2 MiB pages where they
     * fit), a third one byte either side of a page multiple. Shrinks towards min.
     * @throws IllegalArgumentException for a bad range.
     */
    public static Arbitrary<Long> bufferLengths(final long min, final long max)
    {
        if (min < 1 || max < min)
        {
            throw new IllegalArgumentException("lengths [" + min + ", " + max + "]: need 1 <= min <= max");
        }
        final Arbitrary<Long> any = Arbitraries.longs().between(min, max).shrinkTowards(min);
        final Arbitrary<Long> pages = pageMultiples(min, max, PAGE);
        final Arbitrary<Long> huge = max >= HUGE_PAGE ? pageMultiples(Math.max(min, HUGE_PAGE), max, HUGE_PAGE)
            : pages;
        final Arbitrary<Long> edges = Arbitraries.oneOf(pages.map(n -> Math.max(min, n - 1)),
            pages.map(n -> Math.min(max, n + 1)));
        return Arbitraries.frequencyOf(Tuple.of(4, any), Tuple.of(3, pages), Tuple.of(1, huge), Tuple.of(3, edges));
    }

    /** Multiples of a page in [min, max], or min when none fits. */
    private static Arbitrary<Long> pageMultiples(final long min, final long max, final long page)
    {
        final long first = (min + page - 1) / page;
        final long last = max / page;
        if (first > last)
        {
            return Arbitraries.just(min);
        }
        return Arbitraries.longs().between(first, last).shrinkTowards(first).map(n -> n * page);
    }

    /**
     * @param lengthBytes a buffer's length, at least 1.
     * @return offsets in {@code [0, lengthBytes)}, biased to 0, the last byte, 4 KiB edges and one byte either
     * side of them. Shrinks towards 0.
     * @throws IllegalArgumentException for a length below 1.
     */
    public static Arbitrary<Long> offsetsWithin(final long lengthBytes)
    {
        if (lengthBytes < 1)
        {
            throw new IllegalArgumentException("lengthBytes=" + lengthBytes + " must be 1 or more");
        }
        final List<Long> edges = new ArrayList<>(List.of(0L, lengthBytes - 1));
        for (long p = PAGE; p < lengthBytes && edges.size() < 32; p += PAGE)
        {
            edges.add(p - 1);
            edges.add(p);
            if (p + 1 < lengthBytes)
            {
                edges.add(p + 1);
            }
        }
        return Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.longs().between(0, lengthBytes - 1).shrinkTowards(0)),
            Tuple.of(2, Arbitraries.of(List.copyOf(new java.util.TreeSet<>(edges)))));
    }

    /**
     * @param lengthBytes a buffer's length, at least 1.
     * @return {@code [offset, length]} pairs of a non-empty range inside the buffer (offset + length &lt;=
     * lengthBytes), offsets as {@link #offsetsWithin}, lengths as {@link #bufferLengths} cut to what is left.
     * @throws IllegalArgumentException for a length below 1.
     */
    public static Arbitrary<long[]> rangesWithin(final long lengthBytes)
    {
        return Combinators.combine(offsetsWithin(lengthBytes), bufferLengths(1, lengthBytes)).as((off, len) ->
            new long[] {off, Math.min(len, lengthBytes - off)});
    }

    /**
     * @param issued keys handed out so far (lkeys and rkeys; stale ones included).
     * @return one of them (most of the time), 0, or any 32-bit value; shrinks towards the first issued key.
     */
    public static Arbitrary<Integer> keys(final Collection<Integer> issued)
    {
        Objects.requireNonNull(issued, "issued");
        final Arbitrary<Integer> random = Arbitraries.integers();
        if (issued.isEmpty())
        {
            return Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(0)), Tuple.of(4, random));
        }
        return Arbitraries.frequencyOf(Tuple.of(8, Arbitraries.of(List.copyOf(issued))), Tuple.of(1,
            Arbitraries.just(0)), Tuple.of(2, random));
    }

    /**
     * @param key a key.
     * @return keys with the same MPT index and another variant (low byte): what a stale key looks like after the
     * index was reused.
     */
    public static Arbitrary<Integer> otherVariants(final int key)
    {
        return Arbitraries.integers().between(1, 255).map(d -> (key & ~0xff) | ((key + d) & 0xff));
    }

    /**
     * @param mr    an MR.
     * @param maxBytes the most bytes of one SGE.
     * @return SGEs inside the MR with its lkey.
     */
    public static Arbitrary<Sge> sgesWithin(final MemoryRegion mr, final long maxBytes)
    {
        return rangesWithin(mr.lengthBytes()).map(r -> new Sge(mr.iova() + r[0], Math.min(r[1], maxBytes),
            mr.lkey()));
    }

    /**
     * @return window rights: any of REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC.
     */
    public static Arbitrary<Set<Access>> windowAccess()
    {
        return Arbitraries.of(Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC).set()
            .map(VerbsArbitraries::copy);
    }

    /**
     * @param mr an MR registered with MW_BIND.
     * @return binds of a window to a non-empty range inside the MR (in its iova space) with window rights.
     */
    public static Arbitrary<MwBindInfo> mwBindInfos(final MemoryRegion mr)
    {
        return Combinators.combine(rangesWithin(mr.lengthBytes()), windowAccess()).as((r, a) -> new MwBindInfo(mr,
            mr.iova() + r[0], r[1], a));
    }

    /**
     * @param mr an MR.
     * @return binds that may be refused: ranges starting before the MR, running past its end, of length 0, or
     * valid, with any window rights.
     */
    public static Arbitrary<MwBindInfo> anyMwBindInfos(final MemoryRegion mr)
    {
        final long len = mr.lengthBytes();
        final Arbitrary<MwBindInfo> outside = Combinators.combine(Arbitraries.longs().between(-PAGE, len + PAGE)
            .shrinkTowards(0), bufferLengths(1, len + 2 * PAGE), windowAccess()).as((off, l, a) -> new MwBindInfo(mr,
                mr.iova() + off, l, a));
        final Arbitrary<MwBindInfo> empty = windowAccess().map(a -> new MwBindInfo(mr, mr.iova(), 0, a));
        return Arbitraries.frequencyOf(Tuple.of(3, mwBindInfos(mr)), Tuple.of(3, outside), Tuple.of(1, empty));
    }

    /**
     * @return what backs a buffer without a hugetlb pool: base pages or transparent huge pages.
     */
    public static Arbitrary<Backing> unpooledBackings()
    {
        return Arbitraries.of(Backing.BASE_PAGES, Backing.TRANSPARENT_HUGE_PAGES);
    }

    private static Set<Access> withDependencies(final Set<Access> s)
    {
        final EnumSet<Access> e = s.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(s);
        if (e.contains(Access.REMOTE_WRITE) || e.contains(Access.REMOTE_ATOMIC))
        {
            e.add(Access.LOCAL_WRITE);
        }
        return e;
    }

    private static Set<Access> copy(final Set<Access> s)
    {
        return s.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(s);
    }
}
