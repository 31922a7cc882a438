package dev.rnicsim.pagetable.proc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.io.StringReader;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class SmapsParserTest
{
    private static final Path SELF_SMAPS = Path.of("/proc/self/smaps");
    private static final Path SELF_MAPS = Path.of("/proc/self/maps");

    /** The hand-written sample: 11 areas, in this order. */
    private static final int SAMPLE_AREAS = 11;
    private static final int JAVA_TEXT = 1;
    private static final int HEAP = 2;
    private static final int ANON_THP = 3;
    private static final int HUGETLB = 4;
    private static final int SHM = 5;
    private static final int LIBC_TEXT = 6;
    private static final int STACK = 7;
    private static final int VVAR = 8;
    private static final int VDSO = 9;
    private static final int VSYSCALL = 10;

    private static Path resource(final String name) throws URISyntaxException
    {
        final URL url = Objects.requireNonNull(SmapsParserTest.class.getResource("/smaps/" + name), name);
        return Path.of(url.toURI());
    }

    private static List<SmapsEntry> parseText(final String text) throws IOException
    {
        return SmapsParser.parse(new StringReader(text));
    }

    private static List<SmapsEntry> sampleSmaps() throws IOException, URISyntaxException
    {
        return SmapsParser.parse(resource("sample-jvm.smaps"));
    }

    // ---------------------------------------------------------------------------------------------------------
    // The committed smaps sample
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void sampleHasEveryAreaWithSelfConsistentSizes() throws Exception
    {
        final List<SmapsEntry> entries = sampleSmaps();

        assertThat(entries).hasSize(SAMPLE_AREAS);
        for (final SmapsEntry e : entries)
        {
            assertThat(e.fieldKb("Size")).as("Size of %s", e).isEqualTo(e.lengthBytes() / 1024);
            assertThat(e.fieldKb("Rss")).as("Rss of %s", e).isLessThanOrEqualTo(e.fieldKb("Size"));
            assertThat(e.fieldKb("Rss")).as("Rss of %s", e).isEqualTo(e.fieldKb("Shared_Clean")
                + e.fieldKb("Shared_Dirty") + e.fieldKb("Private_Clean") + e.fieldKb("Private_Dirty"));
            assertThat(e.fieldsKb()).hasSize(22);
            assertThat(e.otherFields()).containsOnlyKeys("THPeligible", "ProtectionKey");
            assertThat(e.vmFlags()).isNotEmpty();
        }
        for (int i = 1; i < entries.size(); i++)
        {
            assertThat(Long.compareUnsigned(entries.get(i - 1).endAddress(), entries.get(i).startAddress()))
                .as("areas sorted and disjoint at %d", i).isLessThanOrEqualTo(0);
        }
    }

    @Test
    void fieldsKeepFileOrder() throws Exception
    {
        final SmapsEntry heap = sampleSmaps().get(HEAP);

        assertThat(heap.fieldsKb().keySet()).containsExactly("Size", "KernelPageSize", "MMUPageSize", "Rss", "Pss",
            "Pss_Dirty", "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced", "Anonymous",
            "KSM", "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped", "Shared_Hugetlb",
            "Private_Hugetlb", "Swap", "SwapPss", "Locked");
        assertThat(heap.otherFields().keySet()).containsExactly("THPeligible", "ProtectionKey");
    }

    @Test
    void hugetlbAreaIsRecognised() throws Exception
    {
        final List<SmapsEntry> entries = sampleSmaps();
        final SmapsEntry huge = entries.get(HUGETLB);

        assertThat(huge.pathname()).isEqualTo("/anon_hugepage (deleted)");
        assertThat(huge.isHugetlb()).isTrue();
        assertThat(huge.kernelPageSizeBytes()).isEqualTo(2L * 1024 * 1024);
        assertThat(huge.lengthBytes()).isEqualTo(2L * 1024 * 1024);
        assertThat(huge.fieldKb("Private_Hugetlb")).isEqualTo(2048);
        assertThat(huge.fieldKb("Rss")).isZero();
        assertThat(huge.vmFlags()).contains("ht");
        assertThat(huge.device()).isEqualTo("00:0f");
        assertThat(huge.inode()).isEqualTo(1048601);
        assertThat(entries).filteredOn(SmapsEntry::isHugetlb).containsExactly(huge);
    }

    @Test
    void anonymousAreaWithTransparentHugePages() throws Exception
    {
        final SmapsEntry anon = sampleSmaps().get(ANON_THP);

        assertThat(anon.pathname()).isEmpty();
        assertThat(anon.startAddress()).isEqualTo(0x7f3a40000000L);
        assertThat(anon.endAddress()).isEqualTo(0x7f3a48000000L);
        assertThat(anon.lengthBytes()).isEqualTo(128L * 1024 * 1024);
        assertThat(anon.fieldKb("Size")).isEqualTo(131072);
        assertThat(anon.fieldKb("AnonHugePages")).isEqualTo(4096);
        assertThat(anon.fieldKb("Anonymous")).isEqualTo(10240);
        assertThat(anon.fieldKb("Rss")).isEqualTo(10240);
        assertThat(anon.kernelPageSizeBytes()).isEqualTo(4096);
        assertThat(anon.isHugetlb()).isFalse();
        assertThat(anon.otherFields()).containsEntry("THPeligible", "1").containsEntry("ProtectionKey", "0");
        assertThat(anon.device()).isEqualTo("00:00");
        assertThat(anon.inode()).isZero();
        assertThat(anon.offsetBytes()).isZero();
    }

    @Test
    void vsyscallAddressIsUnsigned() throws Exception
    {
        final SmapsEntry vsyscall = sampleSmaps().get(VSYSCALL);

        assertThat(vsyscall.pathname()).isEqualTo("[vsyscall]");
        assertThat(vsyscall.startAddress()).isEqualTo(0xffffffffff600000L);
        assertThat(vsyscall.endAddress()).isEqualTo(0xffffffffff601000L);
        assertThat(Long.toHexString(vsyscall.startAddress())).isEqualTo("ffffffffff600000");
        assertThat(vsyscall.lengthBytes()).isEqualTo(4096);
        assertThat(vsyscall.fieldKb("Size")).isEqualTo(4);
        assertThat(vsyscall.permissions()).isEqualTo("--xp");
        assertThat(vsyscall.vmFlags()).containsExactly("ex");
    }

    @Test
    void pathnamesWithSpacesAndPseudoNamesAreKeptExactly() throws Exception
    {
        final List<SmapsEntry> entries = sampleSmaps();

        assertThat(entries).extracting(SmapsEntry::pathname).containsExactly(
            "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java",
            "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java",
            "[heap]",
            "",
            "/anon_hugepage (deleted)",
            "/dev/shm/rnic ring 0",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "[stack]",
            "[vvar]",
            "[vdso]",
            "[vsyscall]");
        final SmapsEntry shm = entries.get(SHM);
        assertThat(shm.shared()).isTrue();
        assertThat(shm.fieldKb("Shared_Dirty")).isEqualTo(1024);
        assertThat(shm.fieldKb("Pss")).isEqualTo(512);
    }

    @Test
    void vmFlagsAreListedInOrder() throws Exception
    {
        final List<SmapsEntry> entries = sampleSmaps();

        assertThat(entries.get(HEAP).vmFlags()).containsExactly("rd", "wr", "mr", "mw", "me", "ac");
        assertThat(entries.get(STACK).vmFlags()).containsExactly("rd", "wr", "mr", "mw", "me", "gd", "ac");
        assertThat(entries.get(SHM).vmFlags()).containsExactly("rd", "wr", "sh", "mr", "mw", "me", "ms");
        assertThat(entries.get(HUGETLB).vmFlags()).containsExactly("rd", "wr", "mr", "mw", "me", "de", "ht");
        assertThat(entries.get(VVAR).vmFlags()).containsExactly("rd", "mr", "pf", "io", "de", "dd");
    }

    @Test
    void permsAreDecoded() throws Exception
    {
        final List<SmapsEntry> entries = sampleSmaps();

        final SmapsEntry text = entries.get(JAVA_TEXT);
        assertThat(text.readable()).isTrue();
        assertThat(text.writable()).isFalse();
        assertThat(text.executable()).isTrue();
        assertThat(text.shared()).isFalse();
        assertThat(text.offsetBytes()).isEqualTo(0x1000);
        assertThat(text.device()).isEqualTo("fd:01");
        assertThat(text.inode()).isEqualTo(1837305);

        final SmapsEntry libc = entries.get(LIBC_TEXT);
        assertThat(libc.offsetBytes()).isEqualTo(0x28000);
        assertThat(libc.fieldKb("Pss")).isEqualTo(52);

        assertThat(entries).extracting(SmapsEntry::permissions).containsExactly(
            "r--p", "r-xp", "rw-p", "rw-p", "rw-p", "rw-s", "r-xp", "rw-p", "r--p", "r-xp", "--xp");
        assertThat(entries.get(VDSO).executable()).isTrue();
        assertThat(entries.get(SHM).writable()).isTrue();
    }

    @Test
    void resultIsUnmodifiable() throws Exception
    {
        final List<SmapsEntry> entries = sampleSmaps();
        final SmapsEntry heap = entries.get(HEAP);

        assertThatThrownBy(() -> entries.remove(0)).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> heap.fieldsKb().put("Rss", 1L)).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> heap.otherFields().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> heap.vmFlags().add("ht")).isInstanceOf(UnsupportedOperationException.class);
    }

    // ---------------------------------------------------------------------------------------------------------
    // The committed maps sample
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void mapsSampleMatchesSmapsSampleHeaders() throws Exception
    {
        final List<SmapsEntry> maps = SmapsParser.parse(resource("sample.maps"));
        final List<SmapsEntry> smaps = sampleSmaps();

        assertThat(maps).hasSize(SAMPLE_AREAS);
        for (int i = 0; i < SAMPLE_AREAS; i++)
        {
            final SmapsEntry m = maps.get(i);
            final SmapsEntry s = smaps.get(i);
            assertThat(m.fieldsKb()).isEmpty();
            assertThat(m.otherFields()).isEmpty();
            assertThat(m.vmFlags()).isEmpty();
            assertThat(m.kernelPageSizeBytes()).isEqualTo(4096);
            assertThat(m.fieldKb("Rss")).isZero();
            assertThat(m).usingRecursiveComparison().ignoringFields("fieldsKb", "otherFields", "vmFlags")
                .isEqualTo(s);
        }
        assertThat(maps.get(HUGETLB).isHugetlb()).as("recognised by pathname alone").isTrue();
        assertThat(maps.get(VSYSCALL).startAddress()).isEqualTo(0xffffffffff600000L);
    }

    // ---------------------------------------------------------------------------------------------------------
    // The live smaps of this JVM
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void liveSelfSmapsIsConsistentWithSelfMaps() throws Exception
    {
        Assumptions.assumeTrue(Files.isReadable(SELF_SMAPS), "no readable /proc/self/smaps");

        final List<SmapsEntry> entries = SmapsParser.parse(SELF_SMAPS);
        final long mapsLines = Files.readAllLines(SELF_MAPS, StandardCharsets.ISO_8859_1).stream()
            .filter(line -> !line.isBlank()).count();

        assertThat(entries).isNotEmpty();
        for (final SmapsEntry e : entries)
        {
            assertThat(Long.compareUnsigned(e.startAddress(), e.endAddress())).as("start < end in %s", e)
                .isNegative();
            assertThat(e.fieldsKb()).as("fields of %s", e).containsKeys("Size", "Rss");
            assertThat(e.fieldKb("Size")).as("Size of %s", e).isEqualTo(e.lengthBytes() / 1024);
            assertThat(e.fieldKb("Rss")).as("Rss of %s", e).isLessThanOrEqualTo(e.fieldKb("Size"));
        }
        assertThat(entries).anySatisfy(e -> assertThat(e.pathname()).isIn("[stack]", "[heap]", ""));
        assertThat((long) entries.size()).as("areas in smaps vs lines in maps read right after")
            .isCloseTo(mapsLines, within(5L));
    }

    @Test
    void liveSelfMapsParses() throws Exception
    {
        Assumptions.assumeTrue(Files.isReadable(SELF_MAPS), "no readable /proc/self/maps");

        final List<SmapsEntry> entries = SmapsParser.parse(SELF_MAPS);

        assertThat(entries).isNotEmpty().allSatisfy(e -> assertThat(e.fieldsKb()).isEmpty());
    }

    // ---------------------------------------------------------------------------------------------------------
    // Small inputs and edge cases
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void emptyAndBlankInputGiveNoAreas() throws Exception
    {
        assertThat(parseText("")).isEmpty();
        assertThat(parseText("\n   \n\t\n")).isEmpty();
    }

    @Test
    void blankLinesAndCrLfAreIgnored() throws Exception
    {
        final List<SmapsEntry> entries = parseText(
            "\r\n00400000-00401000 r-xp 00000000 08:02 173521 /usr/bin/dbus-daemon\r\n\r\n"
                + "Size:                  4 kB\r\n\n"
                + "00601000-00602000 rw-p 00001000 08:02 173521 /usr/bin/dbus-daemon\r\n");

        assertThat(entries).hasSize(2);
        assertThat(entries.get(0).fieldsKb()).containsExactly(Map.entry("Size", 4L));
        assertThat(entries.get(0).pathname()).isEqualTo("/usr/bin/dbus-daemon");
        assertThat(entries.get(1).startAddress()).isEqualTo(0x601000L);
        assertThat(entries.get(1).fieldsKb()).isEmpty();
    }

    @Test
    void pathnameKeepsInnerAndTrailingWhitespace() throws Exception
    {
        final List<SmapsEntry> entries = parseText(
            "7f0000000000-7f0000001000 rw-s 00000000 00:1a 7   \t  /path with  space\tand tab \n"
                + "7f0000001000-7f0000002000 ---p 00000000 00:00 0\n");

        assertThat(entries.get(0).pathname()).isEqualTo("/path with  space\tand tab ");
        assertThat(entries.get(1).pathname()).isEmpty();
        assertThat(entries.get(1).permissions()).isEqualTo("---p");
    }

    @Test
    void emptyVmFlagsAndOtherValuesAreKept() throws Exception
    {
        final SmapsEntry e = parseText(
            "7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n"
                + "THPeligible:    0\n"
                + "Name:\n"
                + "VmFlags: \n").get(0);

        assertThat(e.vmFlags()).isEmpty();
        assertThat(e.otherFields()).containsExactly(Map.entry("THPeligible", "0"),
            Map.entry("Name", ""));
    }

    @Test
    void kernelPageSizeAboveBasePageMeansHugetlb() throws Exception
    {
        final SmapsEntry e = parseText(
            "7f0000000000-7f0040000000 rw-s 00000000 00:10 99 /dev/hugepages/buf\n"
                + "KernelPageSize:  1048576 kB\n").get(0);

        assertThat(e.isHugetlb()).isTrue();
        assertThat(e.kernelPageSizeBytes()).isEqualTo(1024L * 1024 * 1024);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Malformed input
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void fieldBeforeAnyHeaderIsRejected()
    {
        assertThatThrownBy(() -> parseText("\n\nRss:                  4 kB\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 3")
            .hasMessageContaining("Rss:                  4 kB")
            .hasMessageContaining("before any field line")
            .satisfies(e -> assertThat(((SmapsFormatException) e).lineNumber()).isEqualTo(3));
    }

    @Test
    void badHexIsRejected()
    {
        assertThatThrownBy(() -> parseText(
            "00400000-00401000 r-xp 00000000 08:02 173521 /bin/x\n"
                + "Size:                  4 kB\n"
                + "55d4zz000000-55d4c8a01000 r--p 00000000 fd:01 1837305 /bin/y\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 3")
            .hasMessageContaining("55d4zz000000")
            .hasMessageContaining("hex");
        assertThatThrownBy(() -> parseText("00400000-00401000 r-xp 0000g000 08:02 1 /bin/x\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 1")
            .hasMessageContaining("offset")
            .hasMessageContaining("0000g000");
        assertThatThrownBy(() -> parseText("00400000-10000000000000000 r-xp 00000000 08:02 1\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 1")
            .hasMessageContaining("10000000000000000");
    }

    @Test
    void startNotBelowEndIsRejected()
    {
        assertThatThrownBy(() -> parseText(
            "00400000-00401000 r-xp 00000000 08:02 1\n\n"
                + "00402000-00402000 r-xp 00000000 08:02 1\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 3")
            .hasMessageContaining("00402000-00402000")
            .hasMessageContaining("start >= end");
        assertThatThrownBy(() -> parseText("ffffffffff601000-ffffffffff600000 --xp 00000000 00:00 0 [vsyscall]\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 1")
            .hasMessageContaining("start >= end");
    }

    @Test
    void badPermsAreRejected()
    {
        assertThatThrownBy(() -> parseText(
            "00400000-00401000 r-xp 00000000 08:02 1\n"
                + "Size:                  4 kB\n"
                + "00401000-00402000 rwzp 00000000 08:02 1 /bin/z\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 3")
            .hasMessageContaining("rwzp")
            .hasMessageContaining("[r-][w-][x-][ps]");
        assertThatThrownBy(() -> parseText("00401000-00402000 rwx 00000000 08:02 1\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 1")
            .hasMessageContaining("'rwx'");
    }

    @Test
    void otherMalformedHeadersAreRejected()
    {
        assertThatThrownBy(() -> parseText("00400000-00401000 r-xp 00000000 08:02\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 1")
            .hasMessageContaining("at least 5");
        assertThatThrownBy(() -> parseText("00400000 r-xp 00000000 08:02 1\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("'start-end'");
        assertThatThrownBy(() -> parseText("00400000-00401000 r-xp 00000000 0802 1\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("device")
            .hasMessageContaining("'0802'");
        assertThatThrownBy(() -> parseText("00400000-00401000 r-xp 00000000 08:02 12a\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("inode")
            .hasMessageContaining("'12a'");
        assertThatThrownBy(() -> parseText("Rss 4 kB\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 1")
            .hasMessageContaining("Rss 4 kB");
    }

    @Test
    void malformedFieldsAreRejected()
    {
        assertThatThrownBy(() -> parseText(
            "00400000-00401000 r-xp 00000000 08:02 1\n"
                + "Rss:                  -4 kB\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 2")
            .hasMessageContaining("-4 kB")
            .hasMessageContaining("decimal");
        assertThatThrownBy(() -> parseText(
            "00400000-00401000 r-xp 00000000 08:02 1\n"
                + "Rss:                  4 kB\n"
                + "Rss:                  8 kB\n"))
            .isInstanceOf(SmapsFormatException.class)
            .hasMessageContaining("line 3")
            .hasMessageContaining("repeated");
    }

    @Test
    void longLinesAreShortenedInTheMessage()
    {
        final String line = "x".repeat(1000);
        assertThatThrownBy(() -> parseText(line))
            .isInstanceOfSatisfying(SmapsFormatException.class, e -> {
                assertThat(e.lineText()).isEqualTo(line);
                assertThat(e.getMessage()).hasSizeLessThan(400).contains("x".repeat(200) + "...");
            });
    }

    // ---------------------------------------------------------------------------------------------------------
    // Round trip of kernel-formatted text
    // ---------------------------------------------------------------------------------------------------------

    /**
     * Formats areas like {@code show_vma_header_prefix} and {@code show_map_vma} do (pathname padded to column 73,
     * none after a trailing space), with a {@code Rss} line and a {@code VmFlags} line, and parses them back. A
     * plain seeded loop rather than a jqwik property, so Surefire counts this class's tests from one engine.
     */
    @Test
    void kernelFormattedAreasRoundTrip() throws IOException
    {
        final Random random = new Random(20_260_101L);
        final String nameChars = "aZ0 /()[].-:_";
        final long[] edgeStarts = {0L, 0x400000L, 0x7ffffffff000L, 0xffffffffff600000L, -2L};
        for (int i = 0; i < 2000; i++)
        {
            final long start = i < edgeStarts.length ? edgeStarts[i] : random.nextLong();
            final long length = i < edgeStarts.length ? 1 : 1 + random.nextLong(1L << 40);
            final long end = start + length;
            if (Long.compareUnsigned(start, end) >= 0)
            {
                continue;
            }
            final boolean r = random.nextBoolean();
            final boolean w = random.nextBoolean();
            final boolean x = random.nextBoolean();
            final boolean s = random.nextBoolean();
            final long offset = random.nextBoolean() ? 0 : random.nextLong() & Long.MAX_VALUE;
            final String device = String.format("%02x:%02x", random.nextInt(0x1000), random.nextInt(0x100000));
            final long inode = random.nextBoolean() ? 0 : random.nextLong() & Long.MAX_VALUE;
            final StringBuilder name = new StringBuilder();
            final int nameLength = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(30);
            for (int c = 0; c < nameLength; c++)
            {
                name.append(nameChars.charAt(random.nextInt(nameChars.length())));
            }
            final String pathname = name.isEmpty() ? "" : "/" + name;
            final long rssKb = random.nextLong(1L << 50);
            final String perms = (r ? "r" : "-") + (w ? "w" : "-") + (x ? "x" : "-") + (s ? "s" : "p");
            final StringBuilder header = new StringBuilder(String.format("%08x-%08x %s %08x %s %s ",
                start, end, perms, offset, device, Long.toUnsignedString(inode)));
            if (!pathname.isEmpty())
            {
                while (header.length() < 72)
                {
                    header.append(' ');
                }
                header.append(' ').append(pathname);
            }
            final String text = header + "\n" + String.format("%-16s%8d kB%n", "Rss:", rssKb) + "VmFlags: rd \n";

            final List<SmapsEntry> entries = parseText(text);

            assertThat(entries).as("round trip of %s", text).containsExactly(new SmapsEntry(start, end, r, w, x, s,
                offset, device, inode, pathname, Map.of("Rss", rssKb), Map.of(), List.of("rd")));
            assertThat(entries.get(0).permissions()).isEqualTo(perms);
        }
    }
}
