package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rnicsim tour}: it runs, and its output names the facts of memory registration it promises. The tour runs
 * once; each test reads one part of its output.
 */
class TourTest
{
    private static int code;
    private static String out;
    private static String err;
    /** The output with every run of blanks and line breaks as one blank, so that wrapped narration matches. */
    private static String flat;

    @BeforeAll
    static void takeTheTour()
    {
        final StringWriter o = new StringWriter();
        final StringWriter e = new StringWriter();
        code = Rnicsim.execute(new String[] {"tour"}, new PrintWriter(o, true), new PrintWriter(e, true));
        out = o.toString();
        err = e.toString();
        flat = out.replaceAll("\\s+", " ");
    }

    @Test
    void tourShouldExitZeroWithASummaryAndNothingOnStderr()
    {
        assertThat(code).as(out + err).isZero();
        assertThat(err).isEmpty();
        assertThat(out).contains("== tour.rsim:").contains("expects held").doesNotContain("FAILED");
    }

    @Test
    void tourShouldShowThePageWalkBeforeAndAfterTheFirstTouch()
    {
        assertThat(out).contains("PGD[").contains("-> PTE[");
        assertThat(out).contains("not present");
        assertThat(out).contains("PTE (4 KiB page) -> phys 0x");
        assertThat(out.indexOf("not present")).isLessThan(out.indexOf("PTE (4 KiB page)"));
    }

    @Test
    void tourShouldExplainPinningAndTheMemlockLimitWithItsFix()
    {
        assertThat(flat).contains("pin count 1");
        assertThat(flat).contains("RLIMIT_MEMLOCK");
        assertThat(flat).contains("ENOMEM");
        assertThat(flat).contains("memlock unlimited").contains("LimitMEMLOCK=infinity").contains("CAP_IPC_LOCK");
        assertThat(out).contains("RLIMIT_MEMLOCK unlimited");
    }

    @Test
    void tourShouldPrintMttEntriesAndKeysWithIndexAndVariant()
    {
        assertThat(out).containsPattern("\\d+ MTT entries \\(\\d+ reserved\\), \\d+ pages pinned");
        final Matcher m = Pattern.compile("lkey=0x([0-9a-f]{8}) rkey=0x([0-9a-f]{8}) \\(index (\\d+), variant (\\d+)\\)")
            .matcher(out);
        assertThat(m.find()).as("a registration's keys in:%n%s", out).isTrue();
        final long key = Long.parseLong(m.group(1), 16);
        assertThat(Long.parseLong(m.group(2), 16)).isEqualTo(key);
        assertThat(Long.parseLong(m.group(3))).isEqualTo(key >>> 8);
        assertThat(Long.parseLong(m.group(4))).isEqualTo(key & 0xff);
        assertThat(out).contains("MPT index");
    }

    @Test
    void tourShouldShowARemoteWriteSucceedingAndTheTranslationCacheMissingThenHitting()
    {
        assertThat(out).contains("IBV_WC_SUCCESS opcode=RDMA_WRITE");
        assertThat(flat).contains("translation cache").contains("fetched the MPT and MTT entries")
            .contains("hits the cache: no new misses");
        assertThat(flat.indexOf("found nothing in beta's NIC translation cache"))
            .isPositive().isLessThan(flat.indexOf("hits the cache"));
    }

    @Test
    void tourShouldDeregisterAndRefuseTheStaleRkeyKeepingTheOldBytes()
    {
        assertThat(out).containsPattern("256 pages unpinned, \\d+ MTT entries zapped, \\d+ cached translations "
            + "invalidated");
        assertThat(out).contains("IBV_WC_REM_ACCESS_ERR");
        assertThat(out.indexOf("MTT entries zapped")).isLessThan(out.indexOf("IBV_WC_REM_ACCESS_ERR"));
        assertThat(flat).contains("The target bytes stay as they were");
    }

    @Test
    void tourShouldShowHugePagesNeedingFiveHundredTwelveTimesFewerMttEntries()
    {
        assertThat(flat).contains("512 times fewer");
        assertThat(out).contains("page size 2 MiB, 2 MTT entries");
        assertThat(out).contains("page size 4 KiB, 1024 MTT entries");
    }

    @Test
    void tourShouldExhaustTheMttOfAConnectX3WhileRamIsFree()
    {
        assertThat(out).contains("connectx3");
        assertThat(out).containsPattern("-> ENOMEM: repeat 1000: \\d+ done, then ENOMEM at repetition \\d+: "
            + "ibv_reg_mr: MTT cannot give \\d+ entr(y|ies)");
        assertThat(out).contains("MTT (buddy): 512 entries");
    }

    @Test
    void tourShouldShowALeakGrowingVmPinUntilTheLimit()
    {
        assertThat(flat).contains("VmPin");
        assertThat(out).containsPattern("VmPin:\\s+4096 kB");
        assertThat(out).containsPattern("-> ENOMEM: repeat 100: 16 done, then ENOMEM at repetition 17");
    }

    @Test
    void tourShouldShowAnOdpMrPinningNothingAndFaultingOnceAtItsFirstWrite()
    {
        assertThat(flat).contains("== On-demand paging ==").contains("RNR NAK");
        assertThat(out).containsPattern("reg mr_odp: .*ODP: page size 4 KiB, 16 MTT entries, 0 mapped now .*0 pages "
            + "pinned, nothing charged to RLIMIT_MEMLOCK");
        assertThat(out).contains("1 page fault(s); 1 entries mapped, 0 zapped by invalidations since registration");
        assertThat(out.indexOf("== On-demand paging ==")).isLessThan(out.indexOf("1 page fault(s)"));
    }

    @Test
    void tourShouldRegisterGpuMemoryThroughDmabufWithoutAPeerMemoryClient()
    {
        final int section = out.indexOf("== GPU memory ==");
        assertThat(section).isPositive();
        assertThat(out.indexOf("-> EFAULT: ibv_reg_mr: 0x", section)).isGreaterThan(section);
        assertThat(out).containsPattern("reg mr_gpu: .*DMABUF_DYNAMIC over gpu_b memory \\(topology PIX\\): 16 MTT "
            + "entries, 64 KiB of BAR1 mapped .*no host page pinned");
        assertThat(out).containsPattern("cudaMemcpy D2H 12 B from GPU VA 0x[0-9a-f]+ of gpu_b to 0x[0-9a-f]+: ");
    }

    @Test
    void tourShouldShowARelaxedOrderingWriteCheaperThanAStrictOne()
    {
        assertThat(flat).contains("== Relaxed ordering ==").contains("forcing relaxed ordering on");
        final Matcher strict = Pattern.compile("strict_write_ns = (\\d+)").matcher(out);
        final Matcher relaxed = Pattern.compile("relaxed_write_ns = (\\d+)").matcher(out);
        assertThat(strict.find()).isTrue();
        assertThat(relaxed.find()).isTrue();
        assertThat(Long.parseLong(relaxed.group(1))).isLessThan(Long.parseLong(strict.group(1)));
    }

    @Test
    void tourShouldPrintFiguresButNotTheStatementsWithoutVerbose()
    {
        // Statements are echoed as "  tour.rsim:N  verb ..."; diagnoses may still name a line as where a key came from.
        assertThat(out).isNotEmpty().doesNotContainPattern("(?m)^  tour\\.rsim:\\d+  ").doesNotContain(": held");
    }
}
