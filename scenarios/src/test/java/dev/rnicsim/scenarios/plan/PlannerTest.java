package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class PlannerTest
{
    private static final long GIB = 1L << 30;
    private static final Planner.HostSpec BIG_HOST = new Planner.HostSpec(128 * GIB, UserProcess.RLIM_INFINITY,
        false, 0, 0, 1 << 20);

    private static Workload oneGroup(final long count, final String size, final String backing)
    {
        return Workload.parse("w.json", "{\"groups\":[{\"name\":\"g\",\"count\":" + count + ",\"size\":\"" + size
            + "\",\"backing\":\"" + backing + "\"}]}");
    }

    private static Plan.Limit limit(final Plan p, final String name)
    {
        return p.limits().stream().filter(l -> l.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void totalsPast64BitsNameTheLargestGroupAndAFix()
    {
        assertThatThrownBy(() -> Planner.plan(DeviceProfiles.connectx5(), BIG_HOST,
            oneGroup(1L << 40, "1T", "4k")))
            .hasMessageContaining("do not fit in 64 bits (1 process, 1 group; the largest is group 'g': "
                + "1,099,511,627,776 regions of 1,099,511,627,776 bytes)")
            .hasMessageEndingWith("plan fewer or smaller regions");
    }

    @Test
    void shouldFitExactly32GibOfFourKibPagesOnMlx4With20And3AndBreakAtTheNextMr()
    {
        final DeviceProfile cx3 = DeviceProfiles.connectx3().withMtt(MttConfig.buddy(20, 3));
        final Plan fits = Planner.plan(cx3, BIG_HOST, oneGroup(32 * 1024, "1M", "4k"));
        assertThat(limit(fits, "MTT entries").required()).isEqualTo(1L << 23);
        assertThat(limit(fits, "MTT entries").fits()).isTrue();
        assertThat(fits.totals().pinnedBytes()).isEqualTo(32 * GIB);
        final Plan breaks = Planner.plan(cx3, BIG_HOST, oneGroup(32 * 1024 + 1, "1M", "4k"));
        assertThat(breaks.firstLimit()).startsWith("MTT entries exhausted at the 32,769th MR");
    }

    @Test
    void shouldGive64GibOfFourKibPagesOnMlx4With23And1()
    {
        final DeviceProfile cx3 = DeviceProfiles.connectx3().withMtt(MttConfig.buddy(23, 1));
        final Plan fits = Planner.plan(cx3, BIG_HOST, oneGroup(64 * 1024, "1M", "4k"));
        assertThat(limit(fits, "MTT entries").available() * 4096).isEqualTo(64 * GIB);
        assertThat(fits.firstLimit()).isNull();
    }

    @Test
    void shouldCountTheBuddyAllocatorsRoundingWhenFindingTheMrThatExhaustsTheMtt()
    {
        // 5 pages reserve 8 entries (one segment of 8): a 512-entry MTT holds 64 such MRs, not 102.
        final DeviceProfile cx3 = DeviceProfiles.connectx3().withMtt(MttConfig.buddy(6, 3));
        final Plan p = Planner.plan(cx3, BIG_HOST, oneGroup(100, "20K", "4k"));
        assertThat(p.groups().get(0).mttEntriesPerMr()).isEqualTo(5);
        assertThat(p.groups().get(0).mttReservedPerMr()).isEqualTo(8);
        assertThat(p.firstLimit()).startsWith("MTT entries exhausted at the 65th MR");
    }

    @Test
    void shouldFitTheSameWorkloadOnTwoMibHugePagesWith512TimesFewerEntries()
    {
        final DeviceProfile cx3 = DeviceProfiles.connectx3().withMtt(MttConfig.buddy(10, 3));
        final Planner.HostSpec host = new Planner.HostSpec(128 * GIB, UserProcess.RLIM_INFINITY, false, 4096, 0,
            1 << 20);
        final Plan small = Planner.plan(cx3, host, oneGroup(64, "4M", "4k"));
        final Plan huge = Planner.plan(cx3, host, oneGroup(64, "4M", "2m"));
        assertThat(small.firstLimit()).startsWith("MTT entries");
        assertThat(huge.firstLimit()).isNull();
        assertThat(small.groups().get(0).mttEntriesPerMr()).isEqualTo(512 * huge.groups().get(0).mttEntriesPerMr()
            * (huge.groups().get(0).pageSizeBytes() / (2L << 20)));
    }

    @Test
    void shouldNameMemlockAsTheFirstLimitWhenItIs()
    {
        final Planner.HostSpec host = new Planner.HostSpec(16 * GIB, 64L << 20, false, 0, 0, 65530);
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), host, oneGroup(100, "1M", "4k"));
        assertThat(p.firstLimit()).startsWith("RLIMIT_MEMLOCK exhausted at the 65th MR");
        assertThat(p.advice()).anySatisfy(a -> assertThat(a).contains("raise RLIMIT_MEMLOCK to at least 100 MiB"));
    }

    @Test
    void shouldPlanOnEveryShippedDevinfoDump() throws Exception
    {
        final Path dir = Path.of(PlannerTest.class.getResource("/devinfo/").toURI());
        try (Stream<Path> dumps = Files.list(dir))
        {
            for (final Path dump : dumps.toList())
            {
                final Plan p = Planner.plan(DevinfoReader.read(dump).profile(), BIG_HOST, oneGroup(10, "1M", "4k"));
                assertThat(p.totals().mrs()).as(dump.toString()).isEqualTo(10);
            }
        }
    }

    @Test
    void shouldPlanA256GibRegionOfFourKibPagesFromASliceAndSayItScaled()
    {
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), new Planner.HostSpec(512 * GIB,
            UserProcess.RLIM_INFINITY, false, 0, 0, 65530), oneGroup(1, "256G", "4k"));
        assertThat(p.groups().get(0).mttEntriesPerMr()).isEqualTo(64L << 20);
        assertThat(p.totals().pinnedBytes()).isEqualTo(256 * GIB);
        assertThat(p.notes()).anySatisfy(n -> assertThat(n).contains("measured on a 1 GiB slice, scaled x256"));
        assertThat(p.totals().registrationTimeNs()).isGreaterThan(1_000_000_000L);
    }

    @Test
    void shouldRefuseAMalformedWorkloadNamingTheGroupAndField()
    {
        assertThatThrownBy(() -> Workload.parse("w.json", "{\"groups\":[{\"count\":0,\"size\":\"1M\"}]}"))
            .hasMessage("w.json:1: groups[0].count: expected a whole number of regions, 1 or more, got '0'");
        assertThatThrownBy(() -> Workload.parse("w.json", "{\"groups\":[{\"count\":1,\"size\":\"-4K\"}]}"))
            .hasMessageContaining("groups[0].size: expected a size");
        assertThatThrownBy(() -> Workload.parse("w.json", "{\"groups\":[{\"count\":1,\"size\":\"4K\","
            + "\"backing\":\"8m\"}]}")).hasMessageContaining("groups[0].backing: expected 4k, thp, 2m, 1g or gpu");
        assertThatThrownBy(() -> Workload.parse("w.json", "{oops")).hasMessageStartingWith("w.json:1: not JSON");
        // a name must be text: a list is refused at its field, not planned under a blank name
        assertThatThrownBy(() -> Workload.parse("w.json", "{\"groups\": [{\"name\": [1, 2], \"count\": 1, "
            + "\"size\": \"4K\"}]}")).hasMessageContaining("name").hasMessageContaining("expected a name (text), "
            + "got array");
        // an unclosed list: the message gives the line, never Jackson's own location text
        assertThatThrownBy(() -> Workload.parse("w.json", "{\"groups\": [")).hasMessageStartingWith("w.json:1: not JSON")
            .hasMessageNotContaining("Source").hasMessageNotContaining("StreamReadFeature");
    }
}
