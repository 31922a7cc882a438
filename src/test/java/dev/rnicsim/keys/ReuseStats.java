package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the chains saw of stale MR keys, per key policy: accesses made with a key whose MR no longer holds it, after
 * how many reuses of its MPT index (allocations of the index since the key died), and whether the key named a live
 * MPT entry again then. Thread safe.
 */
final class ReuseStats
{
    /** What holds the stale key's MPT index at the access. */
    enum Holder
    {
        FREE,
        MR,
        WINDOW
    }

    /** Per reuse count: accesses, and of those how many found the key valid again. */
    private final Map<VariantPolicy, TreeMap<Integer, long[]>> byPolicy = new EnumMap<>(VariantPolicy.class);
    /** Per holder of the index: accesses, valid again. */
    private final Map<VariantPolicy, Map<Holder, long[]>> byHolder = new EnumMap<>(VariantPolicy.class);

    synchronized void staleAccess(final VariantPolicy policy, final int reuses, final Holder holder,
        final boolean validates)
    {
        final long[] c = byPolicy.computeIfAbsent(policy, p -> new TreeMap<>()).computeIfAbsent(reuses,
            r -> new long[2]);
        final long[] h = byHolder.computeIfAbsent(policy, p -> new EnumMap<>(Holder.class)).computeIfAbsent(holder,
            x -> new long[2]);
        c[0]++;
        h[0]++;
        if (validates)
        {
            c[1]++;
            h[1]++;
        }
    }

    /** @return per holder of the index at the access: {accesses, of which the key validated}. */
    synchronized Map<Holder, long[]> byHolder(final VariantPolicy policy)
    {
        final Map<Holder, long[]> copy = new EnumMap<>(Holder.class);
        byHolder.getOrDefault(policy, Map.of()).forEach((k, v) -> copy.put(k, v.clone()));
        return copy;
    }

    /** @return per reuse count: {accesses, of which the key validated}. */
    synchronized TreeMap<Integer, long[]> of(final VariantPolicy policy)
    {
        final TreeMap<Integer, long[]> copy = new TreeMap<>();
        byPolicy.getOrDefault(policy, new TreeMap<>()).forEach((k, v) -> copy.put(k, v.clone()));
        return copy;
    }

    synchronized void clear()
    {
        byPolicy.clear();
        byHolder.clear();
    }
}
