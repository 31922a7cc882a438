package dev.rnicsim.scenarios.charts;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

class ChartsTest
{
    private static final double MIB = Charts.MIB_BYTES;

    @TempDir
    Path dir;

    @Test
    void registrationTimeShouldGrowWithSizeAndCostMoreOnBasePages() throws Exception
    {
        final Path svg = dir.resolve("registration-time.svg");
        final long t0 = System.nanoTime();
        final ChartData data = Charts.registrationTime(svg);
        System.out.printf("registration-time chart: %d ms wall%n", (System.nanoTime() - t0) / 1_000_000);

        assertSvg(svg);
        assertThat(data.series().keySet()).containsExactly(Charts.SERIES_4K, Charts.SERIES_2M, Charts.SERIES_1G);
        assertThat(data.logX()).isTrue();
        assertThat(data.logY()).isTrue();
        assertThat(data.xAxisLabel()).contains("(MiB)");
        assertThat(data.yAxisLabel()).contains("(µs)");
        for (final String series : data.series().keySet())
        {
            assertThat(data.ys(series)).as(series).isSortedAccordingTo(Double::compare).doesNotHaveDuplicates();
            assertThat(data.points(series).getLast().x()).as(series).isEqualTo(Charts.SWEEP_MAX_BYTES / MIB);
        }
        assertThat(data.points(Charts.SERIES_4K).getFirst().x()).isEqualTo(1.0);
        assertThat(data.points(Charts.SERIES_2M).getFirst().x()).isEqualTo(2.0);
        assertThat(data.points(Charts.SERIES_1G).getFirst().x()).isEqualTo(1024.0);
        // 4 KiB pages cost more than twice as much as 2 MiB pages at every common size (the cost model's ~2.5x).
        for (final ChartData.Point huge : data.points(Charts.SERIES_2M))
        {
            assertThat(data.yAt(Charts.SERIES_4K, huge.x())).as("%s MiB", huge.x())
                .isGreaterThan(2 * huge.y());
        }
        // 1 GiB pages: about as cheap as 2 MiB pages (pinning dominates), never dearer.
        for (final ChartData.Point giant : data.points(Charts.SERIES_1G))
        {
            assertThat(giant.y()).isLessThanOrEqualTo(data.yAt(Charts.SERIES_2M, giant.x()));
        }
        // 1 GiB of base pages costs tens of milliseconds, as docs/cost-model.md says (about 64 ms).
        assertThat(data.yAt(Charts.SERIES_4K, 1024.0)).isBetween(50_000.0, 80_000.0);
    }

    @Test
    void mttEntriesShouldBeOnePerCpuPage() throws Exception
    {
        final Path svg = dir.resolve("mtt-entries.svg");
        final long t0 = System.nanoTime();
        final ChartData data = Charts.mttEntries(svg);
        System.out.printf("mtt-entries chart: %d ms wall%n", (System.nanoTime() - t0) / 1_000_000);

        assertSvg(svg);
        assertThat(data.series().keySet()).containsExactly(Charts.SERIES_4K, Charts.SERIES_2M, Charts.SERIES_1G);
        assertThat(data.points(Charts.SERIES_4K)).hasSize(13);
        assertThat(data.points(Charts.SERIES_2M)).hasSize(12);
        assertThat(data.points(Charts.SERIES_1G)).hasSize(3);
        for (final ChartData.Point p : data.points(Charts.SERIES_4K))
        {
            assertThat(p.y()).as("%s MiB", p.x()).isEqualTo(p.x() * MIB / 4096);
        }
        for (final ChartData.Point p : data.points(Charts.SERIES_2M))
        {
            assertThat(p.y()).as("%s MiB", p.x()).isEqualTo(p.x() / 2);
        }
        for (final ChartData.Point p : data.points(Charts.SERIES_1G))
        {
            assertThat(p.y()).as("%s MiB", p.x()).isEqualTo(p.x() / 1024);
        }
    }

    @Test
    void cacheHitRateShouldFallPastTheCacheSizeForBasePagesOnly() throws Exception
    {
        final Path svg = dir.resolve("cache-hit-rate.svg");
        final long t0 = System.nanoTime();
        final ChartData data = Charts.cacheHitRate(svg);
        System.out.printf("cache-hit-rate chart: %d ms wall%n", (System.nanoTime() - t0) / 1_000_000);

        assertSvg(svg);
        assertThat(data.logX()).isTrue();
        assertThat(data.logY()).isFalse();
        assertThat(data.xMarkers()).containsValue((double)Charts.CACHE_ENTRIES);
        final double cache = Charts.CACHE_ENTRIES;
        final List<ChartData.Point> base = data.points(Charts.SERIES_CACHE_4K);
        final List<ChartData.Point> huge = data.points(Charts.SERIES_CACHE_2M);
        assertThat(base.getFirst().x()).isEqualTo(Charts.WORKING_SET_MIN_PAGES);
        assertThat(base.getLast().x()).isEqualTo(Charts.WORKING_SET_MAX_PAGES).isGreaterThanOrEqualTo(4 * cache);
        for (final ChartData.Point p : base)
        {
            assertThat(p.y()).isBetween(0.0, 1.0);
            if (p.x() <= cache / 2)
            {
                assertThat(p.y()).as("working set %s fits", p.x()).isEqualTo(1.0);
            }
        }
        // Past the cache size the rate falls at every step.
        final List<Double> past = base.stream().filter(p -> p.x() >= cache).map(ChartData.Point::y).toList();
        assertThat(past).hasSizeGreaterThanOrEqualTo(3).isSortedAccordingTo((a, b) -> Double.compare(b, a))
            .doesNotHaveDuplicates();
        assertThat(past.getLast()).isLessThan(0.9);
        // 2 MiB MR pages: the whole working set's MTT entries fit, the rate stays higher.
        assertThat(huge).extracting(ChartData.Point::x).containsExactlyElementsOf(base.stream()
            .map(ChartData.Point::x).toList());
        for (int i = 0; i < base.size(); i++)
        {
            assertThat(huge.get(i).y()).isGreaterThanOrEqualTo(base.get(i).y());
            if (base.get(i).x() > cache)
            {
                assertThat(huge.get(i).y()).isGreaterThan(base.get(i).y()).isGreaterThan(0.99);
            }
        }
    }

    @Test
    void strategyTimeShouldShowTheUpFrontCostAtTheFirstRequestAndPerRequestRegistrationDearestAfterwards()
        throws Exception
    {
        final Path svg = dir.resolve("strategy-time.svg");
        final long t0 = System.nanoTime();
        final ChartData data = Charts.strategyTime(svg);
        System.out.printf("strategy-time chart: %d ms wall; %s%n", (System.nanoTime() - t0) / 1_000_000,
            data.series());

        assertSvg(svg);
        assertThat(Files.readString(svg)).contains("registration cache");
        assertThat(data.series().keySet()).containsExactly(Charts.SERIES_PER_REQUEST, Charts.SERIES_ONCE,
            Charts.SERIES_POOL, Charts.SERIES_CACHE, Charts.SERIES_ODP);
        assertThat(Files.readString(svg)).contains("ODP MR registered once");
        assertThat(data.logX()).isTrue();
        assertThat(data.logY()).isTrue();
        assertThat(data.yAxisLabel()).contains("(µs)");
        for (final String series : data.series().keySet())
        {
            assertThat(data.points(series)).extracting(ChartData.Point::x).containsExactlyElementsOf(
                Charts.STRATEGY_POINTS.stream().map(Integer::doubleValue).toList());
            assertThat(data.ys(series)).allMatch(y -> y > 0);
        }
        final double direct1 = data.yAt(Charts.SERIES_PER_REQUEST, 1);
        final double direct200 = data.yAt(Charts.SERIES_PER_REQUEST, Charts.STRATEGY_REQUESTS);
        // To the first operation: registering 1 MiB up front (or the pool's first chunk) costs more than 64 KiB.
        assertThat(data.yAt(Charts.SERIES_ONCE, 1)).isGreaterThan(direct1);
        // The pool's chunk is fresh memory: its pin also faults its pages in, so it costs at least the up-front MR.
        assertThat(data.yAt(Charts.SERIES_POOL, 1)).isGreaterThan(direct1)
            .isGreaterThanOrEqualTo(data.yAt(Charts.SERIES_ONCE, 1));
        assertThat(data.yAt(Charts.SERIES_CACHE, 1)).isEqualTo(direct1);
        // The ODP MR pins nothing: its first operation comes before the up-front MR's, after the per-request one's.
        assertThat(data.yAt(Charts.SERIES_ODP, 1)).isLessThan(data.yAt(Charts.SERIES_ONCE, 1))
            .isGreaterThan(direct1);
        // Amortised: per-request registration costs several times the others; its average stays near its first.
        for (final String cheaper : List.of(Charts.SERIES_ONCE, Charts.SERIES_POOL, Charts.SERIES_CACHE,
            Charts.SERIES_ODP))
        {
            assertThat(direct200).as(cheaper).isGreaterThan(3 * data.yAt(cheaper, Charts.STRATEGY_REQUESTS));
            assertThat(data.ys(cheaper)).as(cheaper).isSortedAccordingTo((a, b) -> Double.compare(b, a));
        }
        assertThat(direct200).isBetween(direct1 * 0.8, direct1 * 1.25);
    }

    @Test
    void writeSvgShouldDrawAnyChartData() throws Exception
    {
        final ChartData data = new ChartData("t", "s", "x (units)", "y (units)", false, true,
            Map.of("one", List.of(new ChartData.Point(1, 10), new ChartData.Point(2, 100))));
        final Path svg = dir.resolve("plain.svg");
        Charts.writeSvg(data, svg);
        assertSvg(svg);
        assertThat(Files.readString(svg)).contains("one");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Charts.writeSvg(data, dir.resolve("sub/dir/x.svg")))
            .as("no folder is created").isInstanceOf(java.nio.file.NoSuchFileException.class);
        assertThat(dir.resolve("sub")).doesNotExist();
    }

    /** The file exists, is not empty and parses as XML whose root is an svg element. */
    static void assertSvg(final Path svg) throws Exception
    {
        assertThat(svg).exists().isNotEmptyFile();
        final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        factory.setValidating(false);
        // JFreeSVG writes a DOCTYPE naming the SVG 1.0 DTD by URL: do not fetch it.
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        final DocumentBuilder builder = factory.newDocumentBuilder();
        final Document doc = builder.parse(svg.toFile());
        assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("svg");
        assertThat(doc.getDocumentElement().getNamespaceURI()).isEqualTo("http://www.w3.org/2000/svg");
    }
}
