package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * Assertions shared by the adapter-table tests: the exact errno of a refused call, and that a refused call changed
 * nothing a user can observe (MTT counters other than the failure count, live MPT entries, cache counters).
 */
final class TableAssertions
{
    private TableAssertions()
    {
    }

    /**
     * What a refused call must leave unchanged.
     *
     * @param mtt          the MTT counters with {@code failures} set to 0 (a refused MTT allocation counts one).
     * @param mptInUse     live MPT entries.
     * @param mptAllocs    successful MPT allocations.
     * @param mptFrees     MPT frees.
     * @param cacheHits    cache hits.
     * @param cacheMisses  cache misses.
     * @param cacheEvicts  cache evictions.
     * @param cacheInvals  cache invalidations.
     * @param cacheDropped cache entries dropped.
     * @param written      MTT entries written by registrations.
     * @param zapped       MTT entries zapped by deregistrations.
     */
    record State(MttCounters mtt, long mptInUse, long mptAllocs, long mptFrees, long cacheHits, long cacheMisses,
                 long cacheEvicts, long cacheInvals, long cacheDropped, long written, long zapped)
    {
        static State of(final AdapterTables t)
        {
            final TranslationCache c = t.cache();
            return new State(withoutFailures(t.mtt().counters()), t.mpt().inUse(), t.mpt().allocations(),
                t.mpt().frees(), c.hits(), c.misses(), c.evictions(), c.invalidations(), c.entriesDropped(),
                t.entriesWritten(), t.entriesZapped());
        }
    }

    /** The counters with the failure count zeroed, to compare before and after a refused call. */
    static MttCounters withoutFailures(final MttCounters c)
    {
        return new MttCounters(c.capacityEntries(), c.entriesInUse(), c.entriesRequested(), c.entriesFree(),
            c.largestFreeBlock(), c.allocations(), 0, c.frees());
    }

    /** Asserts that {@code call} throws a TableException with {@code errno}, and returns it. */
    static TableException assertErrno(final Errno errno, final ThrowingCallable call)
    {
        final Throwable thrown = catchThrowable(call);
        assertThat(thrown).as("exception thrown").isInstanceOf(TableException.class);
        final TableException e = (TableException)thrown;
        assertThat(e.errno()).as("errno of: %s", e.getMessage()).isEqualTo(errno);
        return e;
    }

    /** Runs a call on the adapter tables that must fail with {@code errno} and checks that it changed nothing. */
    static TableException assertFailsUnchanged(final AdapterTables t, final Errno errno, final ThrowingCallable call)
    {
        final State before = State.of(t);
        final TableException e = assertErrno(errno, call);
        assertThat(State.of(t)).as("state after the refused call").isEqualTo(before);
        return e;
    }

    /** Runs a call on an MTT that must fail with {@code errno} and checks that only the failure count moved. */
    static TableException assertFailsUnchanged(final Mtt mtt, final Errno errno, final ThrowingCallable call)
    {
        final MttCounters before = withoutFailures(mtt.counters());
        final TableException e = assertErrno(errno, call);
        assertThat(withoutFailures(mtt.counters())).as("MTT counters after the refused call").isEqualTo(before);
        return e;
    }

    /** Runs a call on an MPT that must fail with {@code errno} and checks that no entry or count moved. */
    static TableException assertFailsUnchanged(final MptTable mpt, final Errno errno, final ThrowingCallable call)
    {
        final long inUse = mpt.inUse();
        final long allocations = mpt.allocations();
        final long frees = mpt.frees();
        final TableException e = assertErrno(errno, call);
        assertThat(new long[] {mpt.inUse(), mpt.allocations(), mpt.frees()}).as("inUse, allocations, frees")
            .containsExactly(inUse, allocations, frees);
        return e;
    }
}
