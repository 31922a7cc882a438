package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link Planner#plan}: how each lifetime adds to the totals, processes per host (which limits are per process,
 * which shared), the first limit to break (hugetlb pools included, with processes), iova alignment against large MR
 * pages, and the MTT reservations replayed on a buddy allocator.
 */
class PlannerLifetimesTest
{
    private static final long M = 1L << 20;
    private static final long G = 1L << 30;
    /** Everything plentiful: 64 GiB, no memlock limit, huge pages to spare. */
    private static final Planner.HostSpec ROOMY = new Planner.HostSpec(64 * G, UserProcess.RLIM_INFINITY, false,
        4096, 16, 1 << 20);

    private static Planner.HostSpec host(final long ram, final long memlock, final long pages2M, final long pages1G,
        final int maxMapCount, final int processes)
    {
        return new Planner.HostSpec(ram, memlock, false, pages2M, pages1G, maxMapCount, processes);
    }

    private static Plan.Limit limit(final Plan p, final String name)
    {
        return p.limits().stream().filter(l -> l.name().equals(name)).findFirst().orElseThrow();
    }

    private static Map<String, Plan.GroupResult> byName(final Plan p)
    {
        return p.groups().stream().collect(Collectors.toMap(Plan.GroupResult::name, Function.identity()));
    }

    private static List<String> notFitting(final Plan p)
    {
        return p.limits().stream().filter(l -> !l.fits()).map(Plan.Limit::name).toList();
    }

    @Test
    void shouldAddEachLifetimeToItsOwnTotal()
    {
        final Workload w = Workload.parse("w.yaml", """
            groups:
              - name: st
                count: 4
                size: 1M
              - name: ca
                count: 5
                size: 1M
                lifetime: cached
              - name: pr
                count: 6
                size: 1M
                lifetime: per-request
                requestsPerSecond: 1000
            """);
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), ROOMY, w);
        final Map<String, Plan.GroupResult> g = byName(p);
        final Plan.GroupResult st = g.get("st");
        final Plan.GroupResult ca = g.get("ca");
        final Plan.GroupResult pr = g.get("pr");
        assertThat(p.groups()).allSatisfy(r -> {
            assertThat(r.regNsPerMr()).isPositive();
            assertThat(r.deregNsPerMr()).isPositive();
        });
        assertThat(st.lifetime()).isEqualTo(Workload.Lifetime.STATIC);
        assertThat(ca.lifetime()).isEqualTo(Workload.Lifetime.CACHED);
        assertThat(pr.lifetime()).isEqualTo(Workload.Lifetime.PER_REQUEST);
        assertThat(pr.requestsPerSecond()).isEqualTo(1000);

        assertThat(p.totals().registrationTimeNs()).isEqualTo(4 * st.regNsPerMr());
        assertThat(p.totals().firstUseTimeNs()).isEqualTo(5 * ca.regNsPerMr());
        assertThat(p.totals().hotPathNsPerSecond()).isEqualTo(1000 * (pr.regNsPerMr() + pr.deregNsPerMr()));

        // Every lifetime's MRs are live at the peak.
        assertThat(p.totals().mrs()).isEqualTo(15);
        assertThat(limit(p, "max_mr").required()).isEqualTo(15);
        assertThat(limit(p, "vm.max_map_count").required()).isEqualTo(15);
        assertThat(p.totals().mttEntries()).isEqualTo(4 * st.mttReservedPerMr() + 5 * ca.mttReservedPerMr()
            + 6 * pr.mttReservedPerMr());
        assertThat(p.totals().pinnedBytes()).isEqualTo(15 * M);
        assertThat(limit(p, "RLIMIT_MEMLOCK").required()).isEqualTo(15 * M);

        final long perRequest = pr.regNsPerMr() + pr.deregNsPerMr();
        assertThat(p.advice().stream().filter(a -> a.contains("registers per request")).toList())
            .singleElement().asString().startsWith("group pr registers per request: ")
            .contains("at 1,000 requests/s " + String.format(Locale.ROOT, "%.1f", perRequest * 1000 / 1e7)
                + " % of one core")
            .contains("a pool of 6 regions registered at start-up");
    }

    @ParameterizedTest
    @EnumSource(Workload.Lifetime.class)
    void shouldPutOneLifetimeInItsTotalOnlyAndCountItsMrs(final Workload.Lifetime lifetime)
    {
        final Workload w = new Workload(List.of(new Workload.Group("g", 7, 256 * 1024, "4k", "lw", 0, lifetime,
            lifetime == Workload.Lifetime.PER_REQUEST ? 50 : 0)));
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), ROOMY, w);
        final Plan.GroupResult g = p.groups().get(0);
        final Plan.Totals t = p.totals();
        assertThat(t.mrs()).isEqualTo(7);
        assertThat(t.mttEntries()).isEqualTo(7 * g.mttReservedPerMr()).isPositive();
        assertThat(t.pinnedBytes()).isEqualTo(7 * 256 * 1024);
        assertThat(t.registrationTimeNs()).isEqualTo(lifetime == Workload.Lifetime.STATIC ? 7 * g.regNsPerMr() : 0);
        assertThat(t.firstUseTimeNs()).isEqualTo(lifetime == Workload.Lifetime.CACHED ? 7 * g.regNsPerMr() : 0);
        assertThat(t.hotPathNsPerSecond()).isEqualTo(lifetime == Workload.Lifetime.PER_REQUEST
            ? 50 * (g.regNsPerMr() + g.deregNsPerMr()) : 0);
        assertThat(p.advice().stream().anyMatch(a -> a.contains("registers per request")))
            .isEqualTo(lifetime == Workload.Lifetime.PER_REQUEST);
    }

    @Test
    void shouldAdvisePerRequestGroupsEvenWithoutARate()
    {
        final Workload w = new Workload(List.of(new Workload.Group("burst", 3, M, "4k", "lw", 0,
            Workload.Lifetime.PER_REQUEST, 0)));
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), ROOMY, w);
        assertThat(p.totals().hotPathNsPerSecond()).isZero();
        assertThat(p.totals().registrationTimeNs()).isZero();
        assertThat(p.advice()).anySatisfy(a -> assertThat(a).startsWith("group burst registers per request: ")
            .doesNotContain("requests/s"));
    }

    @Test
    void shouldScaleDeviceAndHostLimitsByProcessesAndKeepPerProcessLimits()
    {
        final Workload w = Workload.parse("w.yaml", """
            groups:
              - name: small
                count: 10
                size: 1M
              - name: huge
                count: 3
                size: 4M
                backing: 2m
              - name: giga
                count: 1
                size: 1G
                backing: 1g
            """);
        final DeviceProfile cx3 = DeviceProfiles.connectx3();
        final Plan one = Planner.plan(cx3, host(64 * G, 4 * G, 100, 8, 1000, 1), w);
        final Plan four = Planner.plan(cx3, host(64 * G, 4 * G, 100, 8, 1000, 4), w);
        assertThat(four.groups()).isEqualTo(one.groups());
        assertThat(one.totals().processes()).isEqualTo(1);
        assertThat(four.totals().processes()).isEqualTo(4);

        // Totals are over every process.
        assertThat(four.totals().mrs()).isEqualTo(4 * one.totals().mrs()).isEqualTo(4 * 14);
        assertThat(four.totals().mttEntries()).isEqualTo(4 * one.totals().mttEntries());
        assertThat(four.totals().pinnedBytes()).isEqualTo(4 * one.totals().pinnedBytes());
        assertThat(four.totals().cacheFootprint()).isEqualTo(4 * one.totals().cacheFootprint());
        // Times are those of one process.
        assertThat(four.totals().registrationTimeNs()).isEqualTo(one.totals().registrationTimeNs()).isPositive();

        // Shared by the processes: the device's max_mr and MTT, the host's RAM and hugetlb pools.
        for (final String shared : List.of("max_mr", "MTT entries", "RAM", "hugetlb 2 MiB pool",
            "hugetlb 1 GiB pool"))
        {
            assertThat(limit(four, shared).required()).as(shared).isEqualTo(4 * limit(one, shared).required())
                .isPositive();
            assertThat(limit(four, shared).available()).as(shared).isEqualTo(limit(one, shared).available());
        }
        assertThat(limit(one, "hugetlb 2 MiB pool").required()).isEqualTo(3 * 2);
        assertThat(limit(one, "hugetlb 1 GiB pool").required()).isEqualTo(1);
        // Per process: RLIMIT_MEMLOCK and vm.max_map_count; max_mr_size is per MR.
        for (final String perProcess : List.of("RLIMIT_MEMLOCK", "vm.max_map_count", "max_mr_size"))
        {
            assertThat(limit(four, perProcess)).as(perProcess).isEqualTo(limit(one, perProcess));
        }
        assertThat(limit(one, "vm.max_map_count").required()).isEqualTo(14);
        assertThat(limit(one, "RLIMIT_MEMLOCK").required()).isEqualTo(10 * M + 3 * 4 * M + G);
        assertThat(one.firstLimit()).isNull();
        // 4 x 8 GiB of 2m/1g pages need 4 x 6 = 24 of 100 2 MiB pages and 4 x 1 = 4 of 8 1 GiB pages: all fits.
        assertThat(four.firstLimit()).isNull();
        assertThat(notFitting(four)).isEmpty();
    }

    @Test
    void shouldNameTheHugetlbPoolAsTheFirstLimitWhenItIsTheSmallest()
    {
        // 4 MiB regions on 2 MiB hugetlb pages: 2 pages each, so a pool of 5 pages holds 2 MRs; the 3rd breaks it.
        final Workload w = new Workload(List.of(new Workload.Group("hp", 10, 4 * M, "2m", "lw")));
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, UserProcess.RLIM_INFINITY, 5, 0, 65530,
            1), w);
        assertThat(limit(p, "hugetlb 2 MiB pool").required()).isEqualTo(20);
        assertThat(limit(p, "hugetlb 2 MiB pool").fits()).isFalse();
        assertThat(notFitting(p)).containsExactly("hugetlb 2 MiB pool");
        assertThat(p.firstLimit()).isNotNull()
            .isEqualTo("hugetlb 2 MiB pool exhausted at the 3rd MR (group 'hp', 4 MiB each)");
        assertThat(p.advice()).anySatisfy(a -> assertThat(a).startsWith("set vm.nr_hugepages=20"));

        // The pool also comes first when another limit breaks later: 16 MiB of memlock lasts 4 MRs.
        final Plan both = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, 16 * M, 5, 0, 65530, 1), w);
        assertThat(notFitting(both)).containsExactlyInAnyOrder("hugetlb 2 MiB pool", "RLIMIT_MEMLOCK");
        assertThat(both.firstLimit()).startsWith("hugetlb 2 MiB pool exhausted at the 3rd MR");
        // ... and not when the other limit breaks first: 8 MiB of memlock lasts 2 MRs, a pool of 7 pages 3.
        final Plan memlock = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, 8 * M, 7, 0, 65530, 1), w);
        assertThat(memlock.firstLimit()).startsWith("RLIMIT_MEMLOCK exhausted at the 3rd MR");
    }

    @Test
    void shouldNameTheOneGibPoolAsTheFirstLimit()
    {
        final Workload w = new Workload(List.of(new Workload.Group("giant", 3, G, "1g", "lw")));
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, UserProcess.RLIM_INFINITY, 0, 2, 65530,
            1), w);
        assertThat(notFitting(p)).containsExactly("hugetlb 1 GiB pool");
        assertThat(p.firstLimit()).isEqualTo("hugetlb 1 GiB pool exhausted at the 3rd MR (group 'giant', 1 GiB each)");
    }

    @Test
    void shouldCountAllProcessesForSharedLimitsAndSayWhichProcessBreaks()
    {
        // 100 MRs of 4 MiB per process in 1 GiB of RAM: 256 MRs fit, the 257th is in the 3rd process (201-300).
        final Workload w = new Workload(List.of(new Workload.Group("g", 100, 4 * M, "4k", "lw")));
        final Plan ram = Planner.plan(DeviceProfiles.connectx5(), host(G, UserProcess.RLIM_INFINITY, 0, 0, 65530, 4),
            w);
        assertThat(limit(ram, "RAM").required()).isEqualTo(1600 * M);
        assertThat(notFitting(ram)).containsExactly("RAM");
        assertThat(ram.firstLimit()).isEqualTo(
            "RAM exhausted at the 257th MR (counting all 4 processes, in process 3, group 'g', 4 MiB each)");

        // The hugetlb pool is shared too: 20 pages per process, 50 pages; the 26th MR is in process 3.
        final Workload hp = new Workload(List.of(new Workload.Group("hp", 10, 4 * M, "2m", "lw")));
        final Plan pool = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, UserProcess.RLIM_INFINITY, 50, 0,
            65530, 3), hp);
        assertThat(limit(pool, "hugetlb 2 MiB pool").required()).isEqualTo(60);
        assertThat(pool.firstLimit()).isEqualTo("hugetlb 2 MiB pool exhausted at the 26th MR (counting all 3 "
            + "processes, in process 3, group 'hp', 4 MiB each)");

        // max_mr is the device's: 30 MRs per process, so the first MR past it is in process 1 + available / 30.
        final DeviceProfile few = DeviceProfiles.connectx5().withAttributes(DeviceProfiles.connectx5().attributes()
            .toBuilder().maxMr(100).build());
        final Workload small = new Workload(List.of(new Workload.Group("s", 30, 4096, "4k", "lw")));
        final Plan mr = Planner.plan(few, host(64 * G, UserProcess.RLIM_INFINITY, 0, 0, 65530, 4), small);
        final long available = limit(mr, "max_mr").available();
        // A device reporting max_mr=100 takes 100 MRs: the 101st is the first refused.
        assertThat(available).isEqualTo(100);
        assertThat(limit(mr, "max_mr").required()).isEqualTo(120);
        assertThat(limit(mr, "max_mr").fits()).isFalse();
        assertThat(mr.firstLimit()).startsWith("max_mr exhausted at the 101st MR (counting all 4 processes, in "
            + "process 4, group 's'");
    }

    @Test
    void shouldCountPerProcessLimitsInOneProcess()
    {
        // 8 MiB of memlock per process lasts 8 MRs of 1 MiB, whatever the number of processes.
        final Workload w = new Workload(List.of(new Workload.Group("g", 40, M, "4k", "lw")));
        final Plan one = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, 8 * M, 0, 0, 65530, 1), w);
        final Plan four = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, 8 * M, 0, 0, 65530, 4), w);
        assertThat(one.firstLimit()).isEqualTo("RLIMIT_MEMLOCK exhausted at the 9th MR (group 'g', 1 MiB each)");
        assertThat(four.firstLimit()).isEqualTo(
            "RLIMIT_MEMLOCK exhausted at the 9th MR (in each process, group 'g', 1 MiB each)");
        assertThat(limit(four, "RLIMIT_MEMLOCK").required()).isEqualTo(40 * M);

        final Workload maps = new Workload(List.of(new Workload.Group("m", 60, 4096, "4k", "lw")));
        final Plan mapCount = Planner.plan(DeviceProfiles.connectx5(), host(64 * G, UserProcess.RLIM_INFINITY, 0, 0,
            50, 3), maps);
        assertThat(limit(mapCount, "vm.max_map_count").required()).isEqualTo(60);
        assertThat(mapCount.firstLimit()).isEqualTo(
            "vm.max_map_count exhausted at the 51st MR (in each process, group 'm', 4 KiB each)");
    }

    @Test
    void shouldRegisterWithFourKibPagesWhenTheIovaIsOnlyFourKibAligned()
    {
        final Workload w = Workload.parse("w.yaml", """
            groups:
              - name: plain
                count: 4
                size: 2M
                backing: 2m
              - name: aligned4k
                count: 4
                size: 2M
                backing: 2m
                iovaAlign: 4K
              - name: big4k
                count: 2
                size: 8M
                backing: 2m
                iovaAlign: 4K
              - name: big64k
                count: 2
                size: 8M
                backing: 2m
                iovaAlign: 64K
            """);
        final Map<String, Plan.GroupResult> g = byName(Planner.plan(DeviceProfiles.connectx5(), ROOMY, w));
        final Plan.GroupResult plain = g.get("plain");
        final Plan.GroupResult aligned = g.get("aligned4k");
        assertThat(plain.pageSizeBytes()).isGreaterThanOrEqualTo(2 * M);
        assertThat(aligned.pageSizeBytes()).isEqualTo(4096);
        assertThat(aligned.mttEntriesPerMr()).isEqualTo(2 * M / 4096).isEqualTo(512 * plain.mttEntriesPerMr());
        assertThat(g.get("big4k").pageSizeBytes()).isEqualTo(4096);
        assertThat(g.get("big4k").mttEntriesPerMr()).isEqualTo(8 * M / 4096);
        // An alignment below the backing's page bounds the MR page.
        assertThat(g.get("big64k").pageSizeBytes()).isBetween(4096L, 64L * 1024);
        assertThat(g.get("big64k").mttEntriesPerMr() * g.get("big64k").pageSizeBytes()).isEqualTo(8 * M);
        // The pins do not change with the iova.
        assertThat(aligned.pinnedBytesPerMr()).isEqualTo(plain.pinnedBytesPerMr()).isEqualTo(2 * M);
    }

    @Test
    void shouldFindTheMttLimitOnABuddyDeviceWhereRoundingBreaksItBeforeTheEntriesWritten()
    {
        // 2^4 segments of 8 entries = 128. 20 KiB writes 5 entries and reserves 8; 132 KiB writes 33 and reserves 64.
        // Written: 3 x 5 + 2 x 33 = 81 entries, which would fit; reserved: 24 + 64 fit, the 2nd 132 KiB MR does not.
        final DeviceProfile cx3 = DeviceProfiles.connectx3().withMtt(MttConfig.buddy(4, 3));
        final Workload w = Workload.parse("w.yaml", """
            groups:
              - name: a
                count: 3
                size: 20K
              - name: b
                count: 2
                size: 132K
            """);
        final Plan p = Planner.plan(cx3, ROOMY, w);
        final Map<String, Plan.GroupResult> g = byName(p);
        assertThat(g.get("a").mttEntriesPerMr()).isEqualTo(5);
        assertThat(g.get("a").mttReservedPerMr()).isEqualTo(8);
        assertThat(g.get("b").mttEntriesPerMr()).isEqualTo(33);
        assertThat(g.get("b").mttReservedPerMr()).isEqualTo(64);
        final long written = 3 * 5 + 2 * 33;
        assertThat(written).isLessThanOrEqualTo(cx3.mtt().entries());
        assertThat(limit(p, "MTT entries").required()).isEqualTo(3 * 8 + 2 * 64);
        assertThat(limit(p, "MTT entries").available()).isEqualTo(128);
        assertThat(limit(p, "MTT entries").fits()).isFalse();
        assertThat(notFitting(p)).containsExactly("MTT entries");
        assertThat(p.firstLimit()).startsWith("MTT entries exhausted at the 5th MR (group 'b', 132 KiB each)");

        // Replayed process after process: with 2 processes of (a) only, 6 x 8 = 48 of 128 fit.
        final Plan twoSmall = Planner.plan(cx3, new Planner.HostSpec(64 * G, UserProcess.RLIM_INFINITY, false, 0, 0,
            65530, 2), new Workload(List.of(w.groups().get(0))));
        assertThat(twoSmall.firstLimit()).isNull();
        assertThat(limit(twoSmall, "MTT entries").required()).isEqualTo(48);
    }

    @Provide
    Arbitrary<List<Long>> regionKiB()
    {
        // 4 KiB to 160 KiB regions: up to 40 entries per MR, so reservations of 8 to 64 entries on 8-entry segments.
        return Arbitraries.longs().between(1, 40).map(pages -> pages * 4).list().ofMinSize(1).ofMaxSize(3);
    }

    /**
     * The MTT limit of a buddy device, from the replay, against the documented rule: every MR reserves its entries
     * rounded to a power of two and at least a segment, group after group; the limit fits exactly when the sum of
     * the reservations does, and the first limit is the MTT's at the first MR whose reservation passes it.
     */
    @Property(tries = 25)
    void shouldFindTheFirstMrPastTheBuddyMttFromTheReservations(@ForAll("regionKiB") final List<Long> sizesKiB,
        @ForAll("counts") final List<Integer> counts)
    {
        final DeviceProfile cx3 = DeviceProfiles.connectx3().withMtt(MttConfig.buddy(6, 3));
        final List<Workload.Group> groups = new ArrayList<>();
        for (int i = 0; i < sizesKiB.size(); i++)
        {
            groups.add(new Workload.Group("g" + i, counts.get(i % counts.size()), sizesKiB.get(i) * 1024, "4k", "lw"));
        }
        final Plan p = Planner.plan(cx3, ROOMY, new Workload(groups));
        long used = 0;
        long mr = 0;
        long breaksAt = -1;
        String breaksIn = null;
        for (final Workload.Group wg : groups)
        {
            final Plan.GroupResult r = byName(p).get(wg.name());
            final long entries = r.mttEntriesPerMr();
            assertThat(entries * r.pageSizeBytes()).isGreaterThanOrEqualTo(wg.sizeBytes());
            long reserved = 8;
            while (reserved < entries)
            {
                reserved <<= 1;
            }
            assertThat(r.mttReservedPerMr()).isEqualTo(reserved);
            for (long i = 0; i < wg.count(); i++)
            {
                mr++;
                used += reserved;
                if (used > cx3.mtt().entries() && breaksAt < 0)
                {
                    breaksAt = mr;
                    breaksIn = wg.name();
                }
            }
        }
        assertThat(limit(p, "MTT entries").required()).isEqualTo(used);
        assertThat(limit(p, "MTT entries").fits()).isEqualTo(breaksAt < 0);
        if (breaksAt < 0)
        {
            assertThat(p.firstLimit()).isNull();
        }
        else
        {
            assertThat(p.firstLimit()).startsWith(String.format(Locale.ROOT, "MTT entries exhausted at the %,d",
                breaksAt)).contains("(group '" + breaksIn + "'");
        }
    }

    @Provide
    Arbitrary<List<Integer>> counts()
    {
        return Arbitraries.integers().between(1, 30).list().ofMinSize(3).ofMaxSize(3);
    }

    @Test
    void shouldSayEverythingFitsOnlyWhenEveryLimitFits()
    {
        // A spread of hosts and workloads: the first limit is null exactly when no limit says NO.
        final Workload w = Workload.parse("w.yaml", """
            groups:
              - name: a
                count: 20
                size: 1M
              - name: b
                count: 4
                size: 4M
                backing: 2m
            """);
        final List<Planner.HostSpec> hosts = List.of(ROOMY, host(64 * G, 8 * M, 100, 0, 65530, 1),
            host(64 * G, UserProcess.RLIM_INFINITY, 7, 0, 65530, 1), host(64 * G, UserProcess.RLIM_INFINITY, 100, 0,
            10, 1), host(64 * G, UserProcess.RLIM_INFINITY, 20, 0, 65530, 3), host(128 * M, UserProcess.RLIM_INFINITY,
            100, 0, 65530, 4));
        for (final Planner.HostSpec h : hosts)
        {
            final Plan p = Planner.plan(DeviceProfiles.connectx5(), h, w);
            assertThat(p.firstLimit() == null).as("%s: %s / %s", h, p.firstLimit(), notFitting(p))
                .isEqualTo(notFitting(p).isEmpty());
            if (p.firstLimit() != null)
            {
                assertThat(notFitting(p)).anySatisfy(n -> assertThat(p.firstLimit()).startsWith(n + " exhausted"));
            }
        }
    }
}
