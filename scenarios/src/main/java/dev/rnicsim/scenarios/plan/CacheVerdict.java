package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.simnic.CostModel;
import dev.rnicsim.simnic.DeviceProfile;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Whether a workload's translations fit the device's translation cache, from the cache model itself: the device's
 * {@link TranslationCache} (its lines and ways) is driven with operations spread uniformly over the bytes of every
 * live MR, each looking up its MR's MPT entry and the MTT entry of the page it touches (an operation within one MR
 * page, as the NIC's translation of a small message). The misses per operation come from the model's counters after
 * a warm-up; the cost per operation is those misses at the cost model's {@link CostModel#cacheMissNs()} (a PCIe
 * round trip to the tables in host memory). Deterministic: a fixed seed.
 *
 * <p>Immutable and thread safe.
 *
 * @param workingSetEntries MPT entries plus MTT entries the live MRs of every process use.
 * @param cacheEntries      the device's translation-cache lines.
 * @param cacheWays         its associativity.
 * @param operations        operations counted after the warm-up.
 * @param missesPerOp       translation-cache misses per operation (0 to 2: the MPT and the MTT lookup).
 * @param missNs            cost of one miss, in ns.
 * @param costNsPerOp       misses per operation times the cost of one, in ns.
 * @param verdict           the same in words.
 */
public record CacheVerdict(long workingSetEntries, long cacheEntries, int cacheWays, long operations,
    double missesPerOp, long missNs, double costNsPerOp, String verdict)
{
    /** Operations counted after the warm-up. */
    public static final int OPERATIONS = 200_000;
    /** Most warm-up operations: enough to fill the largest cache twice over. */
    private static final int MAX_WARM_UP = 1 << 22;
    private static final long SEED = 0x7ca4eL;

    /** The group whose share of the bytes holds {@code at}: the first whose cumulative bytes pass it. */
    private static int pick(final double[] cumulative, final double at)
    {
        int lo = 0;
        int hi = cumulative.length - 1;
        while (lo < hi)
        {
            final int mid = (lo + hi) >>> 1;
            if (cumulative[mid] > at)
            {
                hi = mid;
            }
            else
            {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /**
     * Runs the cache model over the workload's live MRs.
     *
     * @param profile   the device (its cache geometry).
     * @param cost      the cost model (the price of a miss).
     * @param groups    the groups; refused groups (sampled 0) take no part.
     * @param processes processes, each with every group's MRs.
     * @return the verdict.
     */
    public static CacheVerdict of(final DeviceProfile profile, final CostModel cost,
        final List<Plan.GroupResult> groups, final int processes)
    {
        final int n = groups.size();
        final double[] weight = new double[n];
        final long[] mrs = new long[n];
        final long[] mptBase = new long[n];
        final long[] mttBase = new long[n];
        double totalBytes = 0;
        long mpt = 0;
        long mtt = 0;
        for (int i = 0; i < n; i++)
        {
            final Plan.GroupResult g = groups.get(i);
            if (g.sampled() == 0 || g.mttEntriesPerMr() <= 0)
            {
                continue;
            }
            mrs[i] = Math.multiplyExact(g.mrs(), (long)processes);
            weight[i] = (double)mrs[i] * g.sizeBytes();
            totalBytes += weight[i];
            mptBase[i] = mpt;
            mttBase[i] = mtt;
            mpt = Math.addExact(mpt, mrs[i]);
            mtt = Math.addExact(mtt, Math.multiplyExact(mrs[i], g.mttEntriesPerMr()));
        }
        final long workingSet = mpt + mtt;
        if (totalBytes == 0)
        {
            return new CacheVerdict(0, profile.cacheEntries(), profile.cacheWays(), 0, 0, cost.cacheMissNs(), 0,
                "no MR takes translations: nothing to cache");
        }
        final double[] cumulative = new double[n];
        double sum = 0;
        int lastWithBytes = 0;
        for (int i = 0; i < n; i++)
        {
            sum += weight[i];
            cumulative[i] = sum;
            lastWithBytes = weight[i] > 0 ? i : lastWithBytes;
        }
        final TranslationCache cache = new TranslationCache(profile.cacheEntries(), profile.cacheWays());
        final SplittableRandom random = new SplittableRandom(SEED);
        final int warmUp = (int)Math.min(MAX_WARM_UP, Math.max(OPERATIONS, 2L * profile.cacheEntries()));
        long missesBefore = 0;
        for (int op = 0; op < warmUp + OPERATIONS; op++)
        {
            if (op == warmUp)
            {
                missesBefore = cache.misses();
            }
            final int picked = pick(cumulative, random.nextDouble() * totalBytes);
            final int i = weight[picked] > 0 ? picked : lastWithBytes;
            final long mr = random.nextLong(mrs[i]);
            final long entry = random.nextLong(groups.get(i).mttEntriesPerMr());
            cache.access(TranslationCache.mptTag(mptBase[i] + mr));
            cache.access(TranslationCache.mttTag(mttBase[i] + mr * groups.get(i).mttEntriesPerMr() + entry));
        }
        final double perOp = (double)(cache.misses() - missesBefore) / OPERATIONS;
        final double costNs = perOp * cost.cacheMissNs();
        final String words = String.format(java.util.Locale.ROOT, "%,d translations (MPT and MTT entries) against a "
            + "cache of %,d lines, %d ways: %s; %.3f misses per operation, %.0f ns per operation at %,d ns a miss",
            workingSet, profile.cacheEntries(), profile.cacheWays(), workingSet <= profile.cacheEntries()
            ? "the working set fits" : String.format(java.util.Locale.ROOT, "the working set is %.1f times the cache",
            (double)workingSet / profile.cacheEntries()), perOp, costNs, cost.cacheMissNs());
        return new CacheVerdict(workingSet, profile.cacheEntries(), profile.cacheWays(), OPERATIONS, perOp,
            cost.cacheMissNs(), costNs, words);
    }
}
