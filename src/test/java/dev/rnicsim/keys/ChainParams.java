package dev.rnicsim.keys;

import dev.rnicsim.pagetable.ForkBehaviour;
import java.util.Locale;

/**
 * What a generated chain fixes before its first action: the fork behaviour of host b (LEGACY lets the parent's
 * first write after a fork move its address away from a pinned frame), the RLIMIT_MEMLOCK of the process whose memory
 * is registered, and device b's {@code max_mr} (small, so that MPT indices are reused within a chain).
 *
 * @param fork         host b's fork behaviour.
 * @param memlockBytes RLIMIT_MEMLOCK of process app_b.
 * @param maxMr        max_mr of device b (max_mr entries fit: the MPT has index 0 besides them).
 * @param buddyMtt     device b's MTT is mlx4's buddy allocator ({@code log_num_mtt=16 log_mtts_per_seg=3}: an MR
 *                     reserves a power of two of entries, at least a segment of 8) instead of connectx5's exact one.
 */
record ChainParams(ForkBehaviour fork, long memlockBytes, int maxMr, boolean buddyMtt)
{
    /** Segments of the buddy MTT: 2^16 of 2^3 entries. */
    static final int LOG_NUM_MTT = 16;
    static final int LOG_MTTS_PER_SEG = 3;

    /** MTT entries an MR of {@code entries} entries reserves. */
    long reserved(final long entries)
    {
        if (!buddyMtt)
        {
            return entries;
        }
        final long pow2 = entries <= 1 ? 1 : Long.highestOneBit(entries - 1) << 1;
        return Math.max(pow2, 1L << LOG_MTTS_PER_SEG);
    }

    String forkWord()
    {
        return fork.name().toLowerCase(Locale.ROOT);
    }

    /**
     * Written out, as are {@link #hashCode}: the record's own go through invokedynamic, slow in the soak's
     * C1-compiled run, and every world looks its configuration up by its parameters.
     */
    @Override
    public boolean equals(final Object o)
    {
        return o instanceof ChainParams p && fork == p.fork && memlockBytes == p.memlockBytes && maxMr == p.maxMr
            && buddyMtt == p.buddyMtt;
    }

    @Override
    public int hashCode()
    {
        return ((fork.ordinal() * 31 + Long.hashCode(memlockBytes)) * 31 + maxMr) * 2 + (buddyMtt ? 1 : 0);
    }

    @Override
    public String toString()
    {
        return "fork=" + forkWord() + " memlock=" + Script.size(memlockBytes) + " max_mr=" + maxMr
            + (buddyMtt ? " mtt=buddy" : "");
    }
}
