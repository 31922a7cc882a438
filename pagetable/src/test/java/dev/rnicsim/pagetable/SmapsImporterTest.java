package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.pagetable.proc.SmapsEntry;
import dev.rnicsim.pagetable.proc.SmapsParser;

import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SmapsImporterTest
{
    private static List<SmapsEntry> sample() throws IOException
    {
        try (Reader r = new InputStreamReader(Objects.requireNonNull(
            SmapsImporterTest.class.getResourceAsStream("/smaps/sample-jvm.smaps")), StandardCharsets.UTF_8))
        {
            return SmapsParser.parse(r);
        }
    }

    private static Host host(final long hugepages2M)
    {
        return new Host(HostConfig.builder().physicalMemoryBytes(8L << 30).hugepages2M(hugepages2M).build());
    }

    @Test
    void shouldRebuildTheSampleVmasWithTheirRangesPermissionsAndBacking() throws IOException
    {
        final List<SmapsEntry> entries = sample();
        final UserProcess p = host(4).spawn("java");

        final SmapsImporter.Report report = SmapsImporter.importEntries(p, entries, false);

        assertThat(report.vmasImported()).isEqualTo(entries.size() - 1);
        assertThat(report.notes()).anySatisfy(n -> assertThat(n).contains("[vsyscall]"));
        final List<Vma> vmas = p.vmas();
        for (int i = 0; i < vmas.size(); i++)
        {
            assertThat(vmas.get(i).startAddress()).isEqualTo(entries.get(i).startAddress());
            assertThat(vmas.get(i).endAddress()).isEqualTo(entries.get(i).endAddress());
            assertThat(vmas.get(i).permissions()).isEqualTo(entries.get(i).permissions());
        }
        assertThat(p.vmaAt(0x7f3a4c000000L).kind()).isEqualTo(VmaKind.HUGETLB);
        assertThat(p.vmaAt(0x7f3a4c000000L).hugePageSize()).isEqualTo(PageSize.SIZE_2M);
        assertThat(p.vmaAt(0x55d4c8a01000L).kind()).isEqualTo(VmaKind.FILE);
        assertThat(p.vmaAt(0x7f3a40000000L).kind()).isEqualTo(VmaKind.ANONYMOUS);
        assertThat(p.host().hugepagesReserved(PageSize.SIZE_2M)).isEqualTo(1);
    }

    @Test
    void shouldReproduceRssAnonHugePagesAndHugetlbOfEachSampleVma() throws IOException
    {
        final List<SmapsEntry> entries = sample();
        final UserProcess p = host(4).spawn("java");

        final SmapsImporter.Report report = SmapsImporter.importEntries(p, entries, true);

        assertThat(report.thpFolios()).isEqualTo(2);
        for (final SmapsEntry e : entries.subList(0, entries.size() - 1))
        {
            final ProcFs.VmaUsage usage = ProcFs.usage(p, p.vmaAt(e.startAddress()));
            assertThat(usage.rssKb()).as("Rss of %s", e.pathname()).isEqualTo(e.fieldKb("Rss"));
            assertThat(usage.anonHugeKb()).as("AnonHugePages of %s", e.pathname())
                .isEqualTo(e.fieldKb("AnonHugePages"));
            assertThat(usage.hugetlbPrivateKb()).isEqualTo(e.fieldKb("Private_Hugetlb"));
        }
    }

    @Test
    void shouldImportTheLiveSmapsOfThisJvmWithTheSameVmasAndRss(@TempDir final Path dir) throws IOException
    {
        final Path live = Path.of("/proc/self/smaps");
        Assumptions.assumeTrue(Files.isReadable(live), "no /proc/self/smaps on this system");
        final Path capture = dir.resolve("smaps");
        final List<SmapsEntry> entries = stableCapture(live, capture);
        long hugetlbPages = 0;
        for (final SmapsEntry e : entries)
        {
            if (e.isHugetlb())
            {
                hugetlbPages += e.lengthBytes() / PageSize.SIZE_2M.bytes();
            }
        }
        final UserProcess p = new Host(HostConfig.builder().physicalMemoryBytes(64L << 30)
            .hugepages2M(hugetlbPages).build()).spawn("java");

        final SmapsImporter.Report report = SmapsImporter.importFile(p, capture, true);

        final List<SmapsEntry> user = entries.stream()
            .filter(e -> Long.compareUnsigned(e.endAddress(), UserProcess.TASK_SIZE) <= 0).toList();
        assertThat(report.vmasImported()).isEqualTo(user.size());
        assertThat(p.vmaCount()).isEqualTo(user.size());
        for (final SmapsEntry e : user)
        {
            final Vma v = p.vmaAt(e.startAddress());
            assertThat(v.endAddress()).isEqualTo(e.endAddress());
            assertThat(v.permissions()).isEqualTo(e.permissions());
            if ((e.readable() || e.writable()) && !e.isHugetlb())
            {
                assertThat(ProcFs.usage(p, v).rssKb()).as("Rss of %s at %x", e.pathname(), e.startAddress())
                    .isEqualTo(e.fieldKb("Rss"));
            }
        }
        final List<SmapsEntry> reparsed = SmapsParser.parse(new StringReader(ProcFs.smaps(p)));
        assertThat(reparsed).hasSize(user.size());
        for (int i = 0; i < user.size(); i++)
        {
            assertThat(reparsed.get(i).startAddress()).isEqualTo(user.get(i).startAddress());
            assertThat(reparsed.get(i).fieldKb("Size")).isEqualTo(user.get(i).fieldKb("Size"));
        }
    }

    /**
     * /proc/self/smaps is not read atomically: a JVM thread that maps memory during the read can leave two entries
     * that overlap. Reads until two reads in a row list the same areas, sorted without overlap.
     */
    private static List<SmapsEntry> stableCapture(final Path live, final Path capture) throws IOException
    {
        List<String> previousAreas = List.of();
        for (int attempt = 0; attempt < 100; attempt++)
        {
            final byte[] bytes = Files.readAllBytes(live);
            Files.write(capture, bytes);
            final List<SmapsEntry> entries = SmapsParser.parse(capture);
            final List<String> areas = entries.stream()
                .map(e -> Long.toHexString(e.startAddress()) + "-" + Long.toHexString(e.endAddress())).toList();
            boolean ordered = true;
            for (int i = 1; i < entries.size(); i++)
            {
                ordered &= Long.compareUnsigned(entries.get(i - 1).endAddress(), entries.get(i).startAddress()) <= 0;
            }
            if (ordered && areas.equals(previousAreas))
            {
                return entries;
            }
            previousAreas = areas;
        }
        Assumptions.abort("/proc/self/smaps kept changing while it was read");
        return List.of();
    }

    @Test
    void shouldFailWithEnomemAndImportNothingWhenTheHugetlbPoolIsTooSmall() throws IOException
    {
        final UserProcess p = host(0).spawn("java");
        final long free = p.host().physicalMemory().freeFrames();

        assertThatThrownBy(() -> SmapsImporter.importEntries(p, sample(), true))
            .isInstanceOfSatisfying(KernelException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENOMEM))
            .hasMessageContaining("hugetlb");

        assertThat(p.vmaCount()).isZero();
        assertThat(p.host().physicalMemory().freeFrames()).isEqualTo(free);
    }

    @Test
    void shouldFailWithEinvalWhenTheProcessAlreadyHasMappings() throws IOException
    {
        final UserProcess p = host(4).spawn("java");
        p.mmapAnonymous(1 << 20);

        assertThatThrownBy(() -> SmapsImporter.importEntries(p, sample(), false))
            .isInstanceOfSatisfying(KernelException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EINVAL));
        assertThat(p.vmaCount()).isEqualTo(1);
    }
}
