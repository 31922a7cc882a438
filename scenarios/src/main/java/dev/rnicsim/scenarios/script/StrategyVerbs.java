package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import dev.rnicsim.verbs.strategy.StrategyCounters;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Script verbs of the registration strategies of verbs-api: a memory pool ({@code pool}, {@code alloc},
 * {@code free}) and a registration cache ({@code cache}, {@code acquire}, {@code release}, {@code invalidate}).
 * Each says whether it registered and what that cost. Stateless.
 */
final class StrategyVerbs
{
    private StrategyVerbs()
    {
    }

    /** {@code pool NAME PD CHUNK [chunks=] [min=] [backing=] [access=]}: a MemoryPool. */
    static Outcome pool(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final Map<String, String> o = l.options();
        final long chunk = s.evalNum(l, l.args().get(2));
        final int chunks = s.evalCount(l, o.getOrDefault("chunks", "16"));
        final long min = s.evalNum(l, o.getOrDefault("min", "4K"));
        final String backingWord = o.getOrDefault("backing", "4k");
        final Backing backing = BackingWords.of(backingWord);
        final Set<Access> access = Spec.accessFlags(o.getOrDefault("access", "local_write"));
        final MemoryPool.Config config;
        try
        {
            config = new MemoryPool.Config(chunk, chunks, min, backing, access);
        }
        catch (final IllegalArgumentException e)
        {
            return Outcome.failed("EINVAL", e.getMessage());
        }
        final MemoryPool pool = MemoryPool.create(pd, pd.context().memory(), config);
        s.names.put(l.args().get(0), new Session.PoolBinding(pool, config, pd));
        return Outcome.ok(String.format(Locale.ROOT, "chunks of %s (%s pages, at most %d), fragments of %s to %s "
            + "(buddy), access %s; nothing registered until the first alloc", Units.bytes(chunk), backingWord, chunks,
            Units.bytes(min), Units.bytes(chunk), accessText(config.access())));
    }

    /** Access flags in their declaration order ({@code MemoryPool.Config} keeps them in a set of no fixed order). */
    static String accessText(final Set<Access> access)
    {
        return access.isEmpty() ? "[]" : EnumSet.copyOf(access).toString();
    }

    /** {@code alloc NAME POOL SIZE}: a fragment; a chunk is registered only when none has room. */
    static Outcome alloc(final Session s, final ScriptLine l)
    {
        final Session.PoolBinding p = s.get(l, l.args().get(1), Session.PoolBinding.class);
        final long bytes = s.evalNum(l, l.args().get(2));
        final long regs = p.pool().counters().registrations();
        final long before = s.fabric.clock().nowNs();
        final MemoryPool.Fragment[] got = new MemoryPool.Fragment[1];
        scriptVerb("alloc", () -> got[0] = p.pool().allocate(bytes));
        final MemoryPool.Fragment f = got[0];
        MemoryRegion chunkMr = null;
        for (final MemoryRegion mr : p.pool().memoryRegions())
        {
            if (mr.lkey() == f.lkey())
            {
                chunkMr = mr;
            }
        }
        s.names.put(l.args().get(0), new Session.FragmentBinding(f, p, chunkMr));
        long block = p.config().minFragmentBytes();
        while (block < bytes)
        {
            block <<= 1;
        }
        final StrategyCounters c = p.pool().counters();
        return Outcome.ok(String.format(Locale.ROOT, "0x%x, %s (a block of %s), lkey=0x%08x rkey=0x%08x; %s",
            f.addr(), Units.bytes(f.lengthBytes()), Units.bytes(block), f.lkey(), f.rkey(),
            c.registrations() > regs ? String.format(Locale.ROOT, "no chunk had room: a chunk of %s mapped and "
            + "registered (chunk %d of at most %d, %s)", Units.bytes(p.config().chunkBytes()), c.liveMrs(),
            p.config().maxChunks(), Units.duration(s.fabric.clock().nowNs() - before))
            : "from a registered chunk: no registration"));
    }

    /**
     * Runs a strategy call under the script verb's name: its refusal reads {@code free: EINVAL: ...}, not the Java
     * class's method.
     */
    private static void scriptVerb(final String verb, final Runnable call)
    {
        try
        {
            call.run();
        }
        catch (final dev.rnicsim.verbs.VerbsException e)
        {
            if (!e.verb().startsWith("MemoryPool.") && !e.verb().startsWith("RegistrationCache."))
            {
                throw e;
            }
            throw new dev.rnicsim.verbs.VerbsException(verb, e.errno(), e.detail(), e);
        }
    }

    /** {@code free FRAGMENT}: the block back to its pool; never deregisters. */
    static Outcome free(final Session s, final ScriptLine l)
    {
        final Session.FragmentBinding f = s.get(l, l.args().get(0), Session.FragmentBinding.class);
        scriptVerb("free", () -> f.pool().pool().free(f.fragment()));
        return Outcome.ok(String.format(Locale.ROOT, "0x%x back in the pool (merged with free buddies); its chunk "
            + "stays registered; %d fragment(s) out", f.fragment().addr(), f.pool().pool().liveFragments()));
    }

    /** {@code cache NAME PD [regions=] [bytes=] [hook=]}: a RegistrationCache. */
    static Outcome cache(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final Map<String, String> o = l.options();
        final int regions = o.containsKey("regions") ? s.evalCount(l, o.get("regions")) : Integer.MAX_VALUE;
        final long bytes = o.containsKey("bytes") ? s.evalNum(l, o.get("bytes")) : Long.MAX_VALUE;
        final RegistrationCache.Config config;
        try
        {
            config = new RegistrationCache.Config(regions, bytes);
        }
        catch (final IllegalArgumentException e)
        {
            return Outcome.failed("EINVAL", e.getMessage());
        }
        final boolean hook = "yes".equals(o.get("hook"));
        final RegistrationCache cache = RegistrationCache.create(pd, config);
        if (hook)
        {
            cache.hookUnmaps(pd.context().memory());
        }
        s.names.put(l.args().get(0), new Session.CacheBinding(cache, config, pd, hook));
        return Outcome.ok(bounds(config) + "; " + (hook ? "munmap hook installed: every munmap in pid "
            + pd.context().process().pid() + " invalidates the entries it overlaps"
            : "no munmap hook: entries outlive munmap unless 'invalidate' is called"));
    }

    /** A cache's bounds as text. */
    static String bounds(final RegistrationCache.Config c)
    {
        return "bounds: " + (c.maxRegions() == Integer.MAX_VALUE ? "no region bound" : "at most " + c.maxRegions()
            + " MRs") + ", " + (c.maxBytes() == Long.MAX_VALUE ? "no byte bound" : "at most "
            + Units.bytes(c.maxBytes()));
    }

    /** {@code acquire NAME CACHE ADDR SIZE [access=]}: a hit, or a miss that registers. */
    static Outcome acquire(final Session s, final ScriptLine l)
    {
        final Session.CacheBinding c = s.get(l, l.args().get(1), Session.CacheBinding.class);
        final Session.Val a = s.eval(l, l.args().get(2));
        final long len = s.evalNum(l, l.args().get(3));
        final Set<Access> access = Spec.accessFlags(l.options().getOrDefault("access", "local_write"));
        final StrategyCounters before = c.cache().counters();
        final long t0 = s.fabric.clock().nowNs();
        final RegistrationCache.Handle[] got = new RegistrationCache.Handle[1];
        scriptVerb("acquire", () -> got[0] = c.cache().acquire(a.num(), len, access));
        final RegistrationCache.Handle h = got[0];
        final StrategyCounters after = c.cache().counters();
        final boolean hit = after.hits() > before.hits();
        s.names.put(l.args().get(0), new Session.HandleBinding(h, c, a.num(), len, hit));
        final MemoryRegion mr = h.mr();
        final String range = String.format(Locale.ROOT, "MR 0x%x+%s lkey=0x%08x rkey=0x%08x access %s", mr.addr(),
            Units.bytes(mr.lengthBytes()), h.lkey(), h.rkey(), mr.access());
        if (hit)
        {
            return Outcome.ok("hit: " + range + ", registered earlier; no registration");
        }
        final long evicted = after.evictions() - before.evictions();
        return Outcome.ok("miss: registered " + range + " (the range widened to 4 KiB pages)"
            + (evicted == 0 ? "" : ", after evicting " + evicted + " idle MR(s), least recently used first") + "; "
            + Units.duration(s.fabric.clock().nowNs() - t0));
    }

    /** {@code release HANDLE}: the MR idles in the cache (deregistered now if invalidated meanwhile). */
    static Outcome release(final Session s, final ScriptLine l)
    {
        final Session.HandleBinding h = s.get(l, l.args().get(0), Session.HandleBinding.class);
        final RegistrationCache cache = h.cache().cache();
        final long live = cache.counters().liveMrs();
        cache.release(h.handle());
        if (cache.counters().liveMrs() < live)
        {
            return Outcome.ok("released: its entry was invalidated meanwhile, so the MR is deregistered now");
        }
        return Outcome.ok("released: the MR stays registered for later hits; " + cache.idleEntries() + " idle, "
            + cache.counters().liveMrs() + " MR(s) held");
    }

    /** {@code invalidate CACHE ADDR SIZE}: drops every entry overlapping the range. */
    static Outcome invalidate(final Session s, final ScriptLine l)
    {
        final Session.CacheBinding c = s.get(l, l.args().get(0), Session.CacheBinding.class);
        final long addr = s.eval(l, l.args().get(1)).num();
        final long len = s.evalNum(l, l.args().get(2));
        final long live = c.cache().counters().liveMrs();
        final int dropped = c.cache().invalidate(addr, len);
        final long deregistered = live - c.cache().counters().liveMrs();
        return Outcome.ok(String.format(Locale.ROOT, "%d entr%s dropped: %d idle MR(s) deregistered now%s", dropped,
            dropped == 1 ? "y" : "ies", deregistered, dropped > deregistered ? ", " + (dropped - deregistered)
            + " in use deregistered at their release" : ""));
    }
}
