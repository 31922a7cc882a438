package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Host-model fidelity in scripts: the walk of arm64's page tables on 16 and 64 KiB hosts
 * (Documentation/arch/arm64/memory.rst), mmap reporting the length the kernel rounded to whole pages
 * (mm/mmap.c do_mmap: {@code len = PAGE_ALIGN(len)}), the overcommit heuristic (mm/util.c __vm_enough_memory),
 * a second {@code process} of one name and an env= libibverbs would not read (libibverbs/init.c ibverbs_init).
 */
class HostFidelityScriptTest
{
    @Test
    void shouldWalkArm64TablesWithElevenBitIndexesOn16KAndThirteenOn64K()
    {
        final String out16 = ScriptRun.ok("walk.rnicsim", """
            host alpha ram=256M page=16k
            process app alpha
            mmap buf app 64K
            touch buf 64K write
            show walk buf+0x4010
            """).out();
        // 16 KiB: PGD bit 47, PUD 46:36, PMD 35:25, PTE 24:14 (11 bits), offset 13:0.
        assertThat(out16).containsPattern("PGD\\[[01]\\] -> PUD\\[\\d+\\] -> PMD\\[\\d+\\] -> PTE\\[\\d+\\], offset "
            + "0x10\\b");
        final java.util.regex.Matcher m16 = java.util.regex.Pattern.compile("va 0x([0-9a-f]+): PGD\\[(\\d+)\\] -> "
            + "PUD\\[(\\d+)\\] -> PMD\\[(\\d+)\\] -> PTE\\[(\\d+)\\]").matcher(out16);
        assertThat(m16.find()).isTrue();
        final long va16 = Long.parseUnsignedLong(m16.group(1), 16);
        assertThat(Long.parseLong(m16.group(5))).isEqualTo((va16 >>> 14) & 2047);
        assertThat(Long.parseLong(m16.group(4))).isEqualTo((va16 >>> 25) & 2047);
        assertThat(Long.parseLong(m16.group(3))).isEqualTo((va16 >>> 36) & 2047);
        final String out64 = ScriptRun.ok("walk.rnicsim", """
            host alpha ram=1G page=64k
            process app alpha
            mmap buf app 256K
            touch buf 256K write
            show walk buf+0x10010
            """).out();
        // 64 KiB: three levels, PGD 47:42, PMD 41:29, PTE 28:16 (13 bits), offset 15:0; no PUD.
        final java.util.regex.Matcher m64 = java.util.regex.Pattern.compile("va 0x([0-9a-f]+): PGD\\[(\\d+)\\] -> "
            + "PMD\\[(\\d+)\\] -> PTE\\[(\\d+)\\], offset 0x10\\b").matcher(out64);
        assertThat(m64.find()).as(out64).isTrue();
        final long va64 = Long.parseUnsignedLong(m64.group(1), 16);
        assertThat(Long.parseLong(m64.group(4))).isEqualTo((va64 >>> 16) & 8191);
        assertThat(Long.parseLong(m64.group(3))).isEqualTo((va64 >>> 29) & 8191);
        assertThat(Long.parseLong(m64.group(2))).isEqualTo((va64 >>> 42) & 63);
        assertThat(out64).doesNotContain("PUD[");
    }

    @Test
    void shouldPrintTheLengthTheKernelMappedOnA64KHost()
    {
        final String out = ScriptRun.ok("mmap.rnicsim", """
            host alpha ram=256M page=64k
            process app alpha
            mmap x app 4K
            show smaps app
            """).out();
        assertThat(out).contains("64 KiB, 4 KiB rounded up to whole 64 KiB pages (64k base pages)");
    }

    @Test
    void shouldRefuseAnMmapLargerThanRamPlusSwapUnlessOvercommitIsAlways()
    {
        ScriptRun.ok("oc.rnicsim", """
            host alpha ram=256M
            process app alpha
            mmap big app 1T
            expect ENOMEM
            mmap ro app 1T prot=r
            """);
        ScriptRun.ok("oc.rnicsim", """
            host alpha ram=256M overcommit=1
            process app alpha
            mmap big app 1T
            """);
    }

    @Test
    void shouldCountPinnedPagesInTheHostsPageSize()
    {
        final String out = ScriptRun.ok("mr64.rnicsim", """
            host h ram=4G page=64k memlock=unlimited
            device n h
            open c n
            pd p c
            mmap b c 256K
            reg m p b 256K
            show mr m
            """).out();
        assertThat(out).contains("4 pages of 64 KiB pinned").doesNotContain("of 4 KiB pinned");
    }

    @Test
    void shouldGrantAMapNoreserveMappingLargerThanRamPlusSwap()
    {
        // mm/mmap.c: MAP_NORESERVE sets VM_NORESERVE with vm.overcommit_memory=0: accountable_mapping is false
        final String out = ScriptRun.ok("nr.rnicsim", """
            host alpha ram=256M
            process app alpha
            mmap big app 17000M noreserve
            touch big 4M write
            """).out();
        assertThat(out).contains("MAP_NORESERVE");
    }

    @Test
    void shouldRefuseASecondProcessOfOneNameAndALateEnvironment()
    {
        assertThatThrownBy(() -> ScriptRun.run("p.rnicsim", """
            host alpha ram=256M
            process app alpha
            process app alpha
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("process 'app' exists already")
            .hasMessageContaining("give the new process another name");
        ScriptRun.ok("p.rnicsim", """
            host alpha ram=256M
            process app alpha
            exit app
            process app alpha
            """);
        assertThatThrownBy(() -> ScriptRun.run("e.rnicsim", """
            host alpha ram=256M
            device nic alpha
            process app alpha
            open c1 nic process=app
            open c2 nic process=app env=RDMAV_FORK_SAFE=1
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("reads its environment once")
            .hasMessageContaining("ibverbs_init");
    }
}
