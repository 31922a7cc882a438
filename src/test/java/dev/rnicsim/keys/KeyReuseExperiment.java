package dev.rnicsim.keys;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;

/**
 * How soon a stale key validates again, per key variant policy: on a connectx5 whose {@code max_mr} is 1 (one usable
 * MPT index, so every registration reuses it), one 4 KiB MR is registered and deregistered {@code cycles} times; after
 * every registration each earlier, stale key is presented to the adapter (a REMOTE_READ translation through the MPT,
 * as a responder checks an rkey). A key's reuse count at a registration is the number of registrations that took its
 * index since it was freed.
 *
 * @param policy        the key variant policy.
 * @param cycles        registrations.
 * @param window        reuse counts checked per stale key (1..window).
 * @param firstReturn   per key (by registration), the first reuse count at which it validated again, or -1.
 * @param checks        per reuse count d (index d): stale keys checked at reuse d.
 * @param hits          per reuse count d: of those, how many validated.
 */
record KeyReuseExperiment(VariantPolicy policy, int cycles, int window, int[] firstReturn, long[] checks, long[] hits)
{
    static KeyReuseExperiment run(final VariantPolicy policy, final int cycles, final int window)
    {
        final SimFabric fabric = new SimFabric();
        DeviceProfile p = DeviceProfiles.connectx5();
        p = p.withAttributes(p.attributes().toBuilder().maxMr(1).build()).withVariantPolicy(policy);
        final SimDevice nic = fabric.addHost("beta", HostConfig.builder().physicalMemoryBytes(64L << 20).build())
            .addDevice("sim:beta/nic_b", p);
        final UserProcess app = nic.host().host().spawn("app_b");
        final SimContext ctx = nic.open(app);
        final SimPd pd = (SimPd)ctx.allocPd();
        final long buf = ctx.memory().allocate(4096, dev.rnicsim.verbs.Backing.BASE_PAGES);
        final int[] keys = new int[cycles];
        final int[] firstReturn = new int[cycles];
        Arrays.fill(firstReturn, -1);
        final long[] checks = new long[window + 1];
        final long[] hits = new long[window + 1];
        for (int j = 0; j < cycles; j++)
        {
            final MemoryRegion mr = pd.regMr(buf, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
            keys[j] = mr.lkey();
            for (int i = Math.max(0, j - window); i < j; i++)
            {
                final int d = j - i;
                final boolean valid = nic.tables().translate(keys[i], pd.pdNum(), AccessFlags.REMOTE_READ, buf, 8) >= 0;
                checks[d]++;
                if (valid)
                {
                    hits[d]++;
                    if (firstReturn[i] < 0)
                    {
                        firstReturn[i] = d;
                    }
                }
            }
            mr.close();
        }
        ctx.close();
        return new KeyReuseExperiment(policy, cycles, window, firstReturn, checks, hits);
    }

    /** Keys that were checked at every reuse count up to {@code d}. */
    int keysObservedFor(final int d)
    {
        return Math.max(0, cycles - d);
    }

    /** Of the keys observed for {@code d} reuses, how many validated again within d. */
    int returnedWithin(final int d)
    {
        int n = 0;
        for (int i = 0; i < keysObservedFor(d); i++)
        {
            if (firstReturn[i] >= 1 && firstReturn[i] <= d)
            {
                n++;
            }
        }
        return n;
    }

    long hitsBetween(final int from, final int to)
    {
        long n = 0;
        for (int d = from; d <= to; d++)
        {
            n += hits[d];
        }
        return n;
    }

    long checksBetween(final int from, final int to)
    {
        long n = 0;
        for (int d = from; d <= to; d++)
        {
            n += checks[d];
        }
        return n;
    }

    /** Reuse counts at which observed keys first validated again: min, median, max (over keys that did). */
    int[] firstReturnSummary(final int observedFor)
    {
        final int[] r = Arrays.stream(firstReturn, 0, keysObservedFor(observedFor)).filter(x -> x > 0).sorted()
            .toArray();
        return r.length == 0 ? new int[0] : new int[] {r[0], r[r.length / 2], r[r.length - 1]};
    }

    String describe()
    {
        final int obs = 255;
        final int[] s = firstReturnSummary(window);
        return String.format(Locale.ROOT, "%-10s  at reuse 1: %4d of %4d   within 255 reuses: %4d of %4d keys   "
            + "at 256: %4d of %4d   rate per reuse over 2..255: %d / %d = 1/%s   first return min/median/max: %s",
            policy, hits[1], checks[1], returnedWithin(obs), keysObservedFor(obs),
            window >= 256 ? hits[256] : -1, window >= 256 ? checks[256] : -1, hitsBetween(2, 255),
            checksBetween(2, 255), hitsBetween(2, 255) == 0 ? "inf" : String.format(Locale.ROOT, "%.0f",
                (double)checksBetween(2, 255) / hitsBetween(2, 255)), s.length == 0 ? "none"
                : s[0] + "/" + s[1] + "/" + s[2]);
    }
}
