package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.pagetable.proc.SmapsEntry;
import dev.rnicsim.pagetable.proc.SmapsParser;
import dev.rnicsim.simnic.DeviceProfiles;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class PlanSmapsTest
{
    private static final String SMAPS = """
        55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]
        Size:                132 kB
        KernelPageSize:        4 kB
        AnonHugePages:         0 kB
        VmFlags: rd wr mr mw me ac
        7f0000000000-7f0000400000 rw-p 00000000 00:00 0
        Size:               4096 kB
        KernelPageSize:        4 kB
        AnonHugePages:      2048 kB
        VmFlags: rd wr mr mw me ac hg
        7f1000000000-7f1000400000 rw-s 00000000 00:0f 1048601                    /anon_hugepage (deleted)
        Size:               4096 kB
        KernelPageSize:     2048 kB
        AnonHugePages:         0 kB
        VmFlags: rd wr sh mr mw me ms de ht
        7f2000000000-7f2040000000 rw-p 00000000 00:10 77                         /dev/hugepages/big
        Size:            1048576 kB
        KernelPageSize:  1048576 kB
        VmFlags: rd wr mr mw me de ht
        7f3000000000-7f3000001000 rw-p 00002000 fd:01 123456                     /usr/lib/libc.so.6
        Size:                  4 kB
        KernelPageSize:        4 kB
        7f3000002000-7f3000003000 r--p 00000000 00:00 0
        Size:                  4 kB
        7f4000000000-7f4000010000 rw-p 00000000 00:00 0                          [anon:rx pool]
        Size:                 64 kB
        KernelPageSize:        4 kB
        7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
        Size:                132 kB
        7ffc00100000-7ffc00102000 r-xp 00000000 00:00 0                          [vdso]
        Size:                  8 kB
        ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
        Size:                  4 kB
        """;

    @Test
    void shouldMakeOneGroupPerWritableAnonymousOrHugetlbMapping()
    {
        final Workload w = SmapsWorkload.parse("t.smaps", SMAPS, null);
        assertThat(w.groups()).extracting(Workload.Group::name).containsExactly(
            "0x55d0c0a00000-0x55d0c0a21000 [heap]", "0x7f0000000000-0x7f0000400000",
            "0x7f1000000000-0x7f1000400000 /anon_hugepage (deleted)",
            "0x7f2000000000-0x7f2040000000 /dev/hugepages/big", "0x7f4000000000-0x7f4000010000 [anon:rx pool]");
        assertThat(w.groups()).extracting(Workload.Group::backing).containsExactly("4k", "thp", "2m", "1g", "4k");
        assertThat(w.groups()).extracting(Workload.Group::sizeBytes).containsExactly(132L * 1024, 4L << 20,
            4L << 20, 1L << 30, 64L * 1024);
        assertThat(w.groups()).allSatisfy(g -> assertThat(g.count()).isEqualTo(1));
    }

    @Test
    void shouldFilterByName()
    {
        final Workload w = SmapsWorkload.parse("t.smaps", SMAPS, Pattern.compile("heap|rx pool|huge"));
        assertThat(w.groups()).extracting(Workload.Group::backing).containsExactly("4k", "2m", "1g", "4k");
        assertThatThrownBy(() -> SmapsWorkload.parse("t.smaps", SMAPS, Pattern.compile("nothing")))
            .hasMessageContaining("t.smaps: expected at least one writable anonymous or hugetlb mapping");
    }

    @Test
    void shouldNameFileAndLineOfMalformedSmaps()
    {
        assertThatThrownBy(() -> SmapsWorkload.parse("bad.smaps", "7f00-7f01 rw-p 00000000 00:00 0\n"
            + "Size:  lots kB\n", null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("bad.smaps:2: expected");
        assertThatThrownBy(() -> SmapsWorkload.parse("bad.smaps", "Size: 4 kB\n", null))
            .hasMessageStartingWith("bad.smaps:1: expected a header line");
    }

    @Test
    void shouldPlanTheTestJvmsOwnSmaps() throws Exception
    {
        final Path self = Path.of("/proc/self/smaps");
        Assumptions.assumeTrue(Files.isReadable(self), "needs Linux /proc/self/smaps");
        final String text = Files.readString(self, StandardCharsets.UTF_8);
        final List<SmapsEntry> entries = SmapsParser.parse(new StringReader(text));
        final long expected = entries.stream().filter(e -> e.writable() && (e.isHugetlb() || e.inode() == 0
            && !e.pathname().startsWith("/") && !e.pathname().startsWith("[stack")
            && !List.of("[vvar]", "[vdso]", "[vsyscall]", "[vvar_vclock]").contains(e.pathname()))).count();
        final Workload w = SmapsWorkload.parse("/proc/self/smaps", text, null);
        assertThat(w.groups()).hasSize((int)expected).isNotEmpty();
        final Plan plan = Planner.plan(DeviceProfiles.byName("connectx5"), new Planner.HostSpec(64L << 30, -1, true,
            0, 0, 65530), w);
        assertThat(plan.groups()).hasSize(w.groups().size());
        assertThat(plan.totals().mrs()).isEqualTo(expected);
        assertThat(plan.totals().mttEntries()).isPositive();
        assertThat(plan.totals().pinnedBytes()).isPositive();
        assertThat(plan.totals().registrationTimeNs()).isPositive();
    }
}
