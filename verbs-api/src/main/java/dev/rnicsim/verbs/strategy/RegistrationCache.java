package dev.rnicsim.verbs.strategy;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * A registration cache (the seed's S16; UCX's rcache, libfabric's MR cache, Open MPI's grdma): {@link #acquire}
 * returns the MR of an earlier registration when one covers the range with at least the rights asked for, and
 * registers the range, widened to whole 4 KiB pages, otherwise. Entries in use are reference counted; idle ones are
 * kept for later hits and evicted least recently used first when a new registration would pass
 * {@link Config#maxRegions()} or {@link Config#maxBytes()}. When memory is released, {@link #invalidate} (called from
 * the application's free path, or by the memory's unmap hook installed with {@link #hookUnmaps}) drops every entry
 * overlapping it: idle ones are deregistered at once, ones in use when released. Without invalidation a cache hands
 * out MRs whose pinned pages no longer back the virtual addresses: the stale-mapping bug this class exists to avoid.
 * A hit may have more rights than asked for and covers whole pages (as UCX's rcache); misses count every request
 * that needed a registration, including those whose registration failed. Not thread safe.
 */
public final class RegistrationCache implements AutoCloseable
{
    /** Page granularity of cached ranges. */
    private static final long PAGE = 4096;

    /**
     * Bounds of a cache.
     *
     * @param maxRegions the most MRs held (in use and idle), at least 1.
     * @param maxBytes   the most bytes held, at least 4096.
     */
    public record Config(int maxRegions, long maxBytes)
    {
        /**
         * @throws IllegalArgumentException for a bound below its minimum.
         */
        public Config
        {
            if (maxRegions < 1)
            {
                throw new IllegalArgumentException("at most " + maxRegions + " regions: expected 1 or more");
            }
            if (maxBytes < PAGE)
            {
                throw new IllegalArgumentException("at most " + maxBytes + " bytes: expected 4096 or more (one page)");
            }
        }

        /**
         * @return a cache with no bound of its own (only the device's and the host's limits).
         */
        public static Config unbounded()
        {
            return new Config(Integer.MAX_VALUE, Long.MAX_VALUE);
        }
    }

    /** One cached registration. */
    private static final class Entry
    {
        final long start;
        final long end;
        final EnumSet<Access> access;
        final MemoryRegion mr;
        int refs;
        boolean invalid;
        /** Still counted in regions and bytes. */
        boolean counted = true;

        Entry(final long start, final long end, final Set<Access> access, final MemoryRegion mr)
        {
            this.start = start;
            this.end = end;
            this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
            this.mr = mr;
        }

        boolean covers(final long from, final long to, final Set<Access> wanted)
        {
            return !invalid && start <= from && to <= end && access.containsAll(wanted);
        }
    }

    /**
     * An acquired registration: use its keys for addresses in the range acquired, then {@link #release} it.
     */
    public static final class Handle
    {
        private final Entry entry;
        private boolean released;

        private Handle(final Entry entry)
        {
            this.entry = entry;
        }

        /**
         * @return the MR (its iova is its first byte's address: addresses are used as they are).
         */
        public MemoryRegion mr()
        {
            return entry.mr;
        }

        /**
         * @return the MR's lkey.
         */
        public int lkey()
        {
            return entry.mr.lkey();
        }

        /**
         * @return the MR's rkey.
         */
        public int rkey()
        {
            return entry.mr.rkey();
        }
    }

    private final ProtectionDomain pd;
    private final Config config;
    /** Entries by first byte; several may start at the same page. */
    private final TreeMap<Long, List<Entry>> byStart = new TreeMap<>();
    /** Idle entries, least recently used first. */
    private final LinkedHashSet<Entry> idle = new LinkedHashSet<>();
    /** Invalidated entries whose MR could not be deregistered then; retried at close. */
    private final List<Entry> undeletable = new ArrayList<>();
    private long longest;
    private int regions;
    private long bytes;
    private long hits;
    private long misses;
    private long evictions;
    private long invalidations;
    private long registrations;
    private long bytesRegistered;
    private boolean closed;

    private RegistrationCache(final ProtectionDomain pd, final Config config)
    {
        this.pd = pd;
        this.config = config;
    }

    /**
     * @param pd     the PD registrations go to.
     * @param config the bounds.
     * @return an empty cache.
     */
    public static RegistrationCache create(final ProtectionDomain pd, final Config config)
    {
        return new RegistrationCache(Objects.requireNonNull(pd, "pd"), Objects.requireNonNull(config, "config"));
    }

    /**
     * Invalidates the cache on every unmap of {@code memory} (the memory hooks UCX installs).
     *
     * @param memory the memory whose unmaps to follow.
     * @throws UnsupportedOperationException when that memory cannot report unmaps.
     */
    public void hookUnmaps(final HostMemory memory)
    {
        memory.onUnmap(this::invalidate);
    }

    /**
     * @param addr        first byte.
     * @param lengthBytes bytes, at least 1.
     * @param access      rights needed.
     * @return a handle on an MR covering {@code [addr, addr + lengthBytes)} with at least {@code access}: a cached
     * one (a hit) or a new registration of the range widened to 4 KiB pages (a miss).
     * @throws VerbsException EINVAL for an empty or wrapping range or a closed cache; ENOMEM when the bounds are
     *                        reached and no entry is idle, or when the device or host refuses the registration (the
     *                        message adds the idle entries the cache holds); the registration's other errors.
     */
    public Handle acquire(final long addr, final long lengthBytes, final Set<Access> access)
    {
        check("acquire");
        Objects.requireNonNull(access, "access");
        if (lengthBytes < 1 || addr + lengthBytes < addr)
        {
            throw new VerbsException("RegistrationCache.acquire", Errno.EINVAL.code(), "range 0x"
                + Long.toHexString(addr) + "+" + lengthBytes + " is empty or wraps"
                + "; give a non-empty range that ends below 2^64");
        }
        final long end = addr + lengthBytes;
        Entry hit = find(addr, end, access);
        while (hit != null && hit.mr.isClosed())
        {
            // Deregistered under the cache (its PD or context closed): forget it and look again.
            forget(hit);
            hit = find(addr, end, access);
        }
        if (hit != null)
        {
            hits++;
            idle.remove(hit);
            hit.refs++;
            return new Handle(hit);
        }
        misses++;
        final long start = addr & -PAGE;
        final long stop = (end + PAGE - 1) & -PAGE;
        makeRoom(stop - start);
        final MemoryRegion mr;
        try
        {
            mr = pd.regMr(start, stop - start, access);
        }
        catch (final VerbsException e)
        {
            if (e.errno() == Errno.ENOMEM.code() && !idle.isEmpty())
            {
                long idleBytes = 0;
                for (final Entry x : idle)
                {
                    idleBytes += x.end - x.start;
                }
                throw new VerbsException("RegistrationCache.acquire", e.errno(), e.verb() + ": " + e.detail()
                    + "; the cache "
                    + "holds " + idle.size() + " idle MRs (" + idleBytes + " bytes) that a bound on regions or bytes "
                    + "would have released", e);
            }
            throw e;
        }
        registrations++;
        bytesRegistered += stop - start;
        final Entry entry = new Entry(start, stop, access, mr);
        entry.refs = 1;
        byStart.computeIfAbsent(start, k -> new ArrayList<>(1)).add(entry);
        longest = Math.max(longest, stop - start);
        regions++;
        bytes += stop - start;
        return new Handle(entry);
    }

    /** The live entry covering the range with the rights, searching back from the last one starting at or before. */
    private Entry find(final long from, final long to, final Set<Access> access)
    {
        for (Map.Entry<Long, List<Entry>> e = byStart.floorEntry(from); e != null && e.getKey() >= from - longest;
            e = byStart.lowerEntry(e.getKey()))
        {
            for (final Entry x : e.getValue())
            {
                if (x.covers(from, to, access))
                {
                    return x;
                }
            }
        }
        return null;
    }

    /** Evicts idle entries, least recently used first, until a registration of that size fits the bounds. */
    private void makeRoom(final long newBytes)
    {
        final Iterator<Entry> it = idle.iterator();
        while ((regions + 1L > config.maxRegions() || bytes + newBytes > config.maxBytes()) && it.hasNext())
        {
            final Entry victim = it.next();
            it.remove();
            drop(victim);
            evictions++;
        }
        if (regions + 1L > config.maxRegions() || bytes + newBytes > config.maxBytes())
        {
            throw new VerbsException("RegistrationCache.acquire", Errno.ENOMEM.code(), "cache full: " + regions
                + " MRs of " + bytes + " bytes in use, none idle; maxRegions=" + config.maxRegions() + " maxBytes="
                + config.maxBytes() + " (a new MR of " + newBytes + " bytes)"
                + "; release handles first or raise maxRegions/maxBytes");
        }
    }

    /** Removes an entry whose MR is gone already from every index and count. */
    private void forget(final Entry e)
    {
        idle.remove(e);
        final List<Entry> at = byStart.get(e.start);
        if (at != null && at.remove(e) && at.isEmpty())
        {
            byStart.remove(e.start);
        }
        uncount(e);
        e.invalid = true;
    }

    private void uncount(final Entry e)
    {
        if (e.counted)
        {
            e.counted = false;
            regions--;
            bytes -= e.end - e.start;
        }
    }

    /** Deregisters an entry's MR, then forgets the entry; when the deregistration fails nothing changes. */
    private void drop(final Entry e)
    {
        e.mr.close();
        final List<Entry> at = byStart.get(e.start);
        if (at != null && at.remove(e) && at.isEmpty())
        {
            byStart.remove(e.start);
        }
        e.invalid = true;
        uncount(e);
    }

    /**
     * Gives a handle back: the entry becomes idle (kept for hits) or, when invalidated meanwhile, is deregistered.
     *
     * @param handle a handle from {@link #acquire}, released once.
     * @throws VerbsException EINVAL when released twice.
     */
    public void release(final Handle handle)
    {
        if (handle.released)
        {
            throw new VerbsException("RegistrationCache.release", Errno.EINVAL.code(), "handle released twice"
                + "; release each handle once");
        }
        handle.released = true;
        final Entry e = handle.entry;
        e.refs--;
        if (e.refs > 0 || closed)
        {
            return;
        }
        if (e.invalid)
        {
            e.mr.close();
            uncount(e);
        }
        else
        {
            idle.add(e);
        }
    }

    /**
     * Drops every entry overlapping the range, because its memory is being released (free, munmap): idle entries are
     * deregistered now, entries in use when their last handle is released. No later acquire returns them.
     *
     * @param addr        first byte released.
     * @param lengthBytes bytes released.
     * @return entries dropped.
     */
    public int invalidate(final long addr, final long lengthBytes)
    {
        if (closed || lengthBytes <= 0)
        {
            return 0;
        }
        final long end = addr + lengthBytes;
        final List<Entry> hit = new ArrayList<>();
        for (final List<Entry> at : byStart.subMap(addr - longest, false, end, false).values())
        {
            for (final Entry x : at)
            {
                if (x.start < end && addr < x.end)
                {
                    hit.add(x);
                }
            }
        }
        for (final Entry x : hit)
        {
            invalidations++;
            if (x.refs == 0)
            {
                idle.remove(x);
                try
                {
                    drop(x);
                }
                catch (final RuntimeException e)
                {
                    // The MR cannot be deregistered now (a window is bound to it): no acquire may return it, and
                    // it stays counted until the cache closes. An unmap hook must not fail the unmap.
                    final List<Entry> at = byStart.get(x.start);
                    if (at != null && at.remove(x) && at.isEmpty())
                    {
                        byStart.remove(x.start);
                    }
                    x.invalid = true;
                    undeletable.add(x);
                }
            }
            else
            {
                // Still registered until its last release: it keeps counting against the bounds until then.
                final List<Entry> at = byStart.get(x.start);
                if (at != null && at.remove(x) && at.isEmpty())
                {
                    byStart.remove(x.start);
                }
                x.invalid = true;
            }
        }
        return hit.size();
    }

    /**
     * @return hits, misses, evictions, invalidations, registrations, bytes registered, live MRs and bytes.
     */
    public StrategyCounters counters()
    {
        return new StrategyCounters(hits, misses, evictions, invalidations, registrations, bytesRegistered, regions,
            bytes);
    }

    /**
     * @return idle entries held now.
     */
    public int idleEntries()
    {
        return idle.size();
    }

    private void check(final String op)
    {
        if (closed)
        {
            throw new VerbsException("RegistrationCache." + op, Errno.EINVAL.code(), "the cache is closed"
                + " (close() released it); create a new cache");
        }
    }

    /**
     * Deregisters every idle entry and forgets the rest (their MRs are deregistered by their owner's PD); idempotent.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final List<Entry> all = new ArrayList<>(idle);
        all.addAll(undeletable);
        idle.clear();
        undeletable.clear();
        byStart.clear();
        Release.each(all, e -> e.mr.close());
    }
}
