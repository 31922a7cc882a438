package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.cli.Catalogue;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What scripts mean when they run: names, values, keys after dereg, failures, expects, repeat, the views, the clock,
 * determinism.
 */
class ScriptRunnerTest
{
    /** Lines 1 to 13: two hosts, a NIC each, a PD, CQ and QP each, the QPs connected. */
    private static final String TWO_HOSTS = ScriptRun.TWO_CONNECTED_HOSTS;

    private static ScriptRun run(final String text)
    {
        return ScriptRun.run("t.rsim", text);
    }

    private static ScriptRun ok(final String text)
    {
        final ScriptRun r = ScriptRun.ok("t.rsim", text);
        return r;
    }

    @Test
    void namesShouldBindToWhatEarlierLinesCreated()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mmap buf app_a 64K
            let pinned0 app_a.pinned_vm
            reg mr pd_a buf 64K access=local_write,remote_read
            expect buf.length == 64K
            expect mr.addr == buf
            expect mr.length == buf.length
            expect mr.iova == mr.addr
            expect mr == buf
            expect mr.lkey == mr.rkey
            expect app_a.pinned_vm == pinned0+16
            expect app_b.pinned_vm < app_a.pinned_vm
            expect nic_a.sim_mr_live == 1
            expect nic_b.sim_mr_live == 0
            expect qp_a.state == RTS
            expect qp_b.state == RTS
            expect qp_a.num > 0
            expect qp_a.num == qp_a
            """);

        assertThat(r.result().steps()).isEqualTo(16);
        assertThat(r.result().expectsHeld()).isEqualTo(14);
        assertThat(r.out()).contains("    expect mr.addr == buf: held");
    }

    @Test
    void addressArithmeticShouldAddSubtractMultiplyAndDivide()
    {
        ok(TWO_HOSTS + """
            mmap buf app_a 64K
            expect buf+4096 == buf+4K
            expect buf+4096-buf == 4096
            expect buf+8K-4K == buf+0x1000
            expect 3*4K == 12288
            expect 12K/3 == 4096
            expect 2+3*4 == 14
            expect 10-2*3 == 4
            expect 7/2 == 3
            expect 2*3*4/8 == 3
            expect 1M/4K == 256
            expect 1us == 1000
            expect 2ms == 2000000
            expect -4096+4K == 0
            write buf+4096 "at four K"
            expect bytes buf+4K "at four K"
            expect bytes buf+2*2048 "at four K"
            expect bytes buf+8192/2+3 "four K"
            """);
    }

    @Test
    void letShouldKeepANumberForLaterLines()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            let size 3*4K
            mmap buf app_a size
            expect buf.length == 12288
            expect size == 12K
            let off size/3+1
            write buf+off "x"
            expect bytes buf+4097 "x"
            let pinned0 app_a.pinned_vm
            reg mr pd_a buf size
            expect app_a.pinned_vm == pinned0+3
            """);

        assertThat(r.out()).contains("size = 12288 (0x3000)").contains("off = 4097 (0x1001)");
    }

    @Test
    void keyShouldStayUsableAfterDeregSoAStaleWriteFailsWithRemAccessErr()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mmap src app_a 4K
            mmap dst app_b 4K
            write src "new"
            write dst "old"
            reg mr_src pd_a src 4K
            reg mr_dst pd_b dst 4K access=local_write,remote_write
            let old_rkey mr_dst.rkey
            dereg mr_dst
            expect mr_dst.closed == 1
            expect mr_dst.rkey == old_rkey
            post write qp_a sgl=mr_src:3 remote=dst rkey=mr_dst.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            expect last.status == REM_ACCESS_ERR
            expect last.completions == 1
            expect bytes dst "old"
            expect nic_b.resp_remote_access_errors == 1
            dereg mr_dst
            expect EINVAL
            """);

        assertThat(r.out()).contains("IBV_WC_REM_ACCESS_ERR").contains("keeps the old key")
            .contains("-> EINVAL: MR mr_dst is deregistered already");
    }

    @Test
    void failingStepWithoutAnExpectShouldStopTheRunWithExitOneNamingTheErrno()
    {
        final ScriptRun r = run(TWO_HOSTS + """
            mmap big app_b 16M
            reg mr_big pd_b big 16M
            say never printed
            mmap later app_b 4K
            expect ok
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).startsWith("t.rsim:15: unexpected ENOMEM");
        assertThat(r.result().steps()).isEqualTo(15);
        assertThat(r.out()).contains("    -> ENOMEM: ")
            .contains("FAILED: unexpected ENOMEM (add 'expect ENOMEM' if this is the point)")
            .doesNotContain("never printed").doesNotContain("mmap later");
    }

    @Test
    void failingStepFollowedByItsExpectShouldContinue()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mmap big app_b 16M
            let pinned0 app_b.pinned_vm
            reg mr_big pd_b big 16M
            say the memlock limit refused it
            expect ENOMEM
            expect app_b.pinned_vm == pinned0
            """);

        assertThat(r.out()).contains("    -> ENOMEM: ").contains("expect ENOMEM: held");
    }

    @Test
    void wrongErrnoExpectedShouldFailWithExpectedAndActual()
    {
        final ScriptRun r = run(TWO_HOSTS + """
            mmap big app_b 16M
            reg mr_big pd_b big 16M
            expect EFAULT
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).startsWith("t.rsim:16: expect EFAULT: expected EFAULT, got ENOMEM");
    }

    @Test
    void failingExpectShouldExitOneShowingExpectedAndActualAndStop()
    {
        final ScriptRun r = run(TWO_HOSTS + """
            mmap buf app_a 4K
            expect buf.length == 8K
            mmap later app_a 4K
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().expectsHeld()).isZero();
        assertThat(r.result().failure()).isEqualTo("t.rsim:15: expect buf.length == 8K: buf.length is 4096 (0x1000), "
            + "expected == 8192 (0x2000)");
        assertThat(r.out()).contains("  t.rsim:15  expect buf.length == 8K\n    FAILED: buf.length is 4096 (0x1000), "
            + "expected == 8192 (0x2000)").doesNotContain("mmap later");
    }

    @Test
    void failingStateExpectShouldShowTheActualState()
    {
        final ScriptRun r = run(TWO_HOSTS + "expect qp_a.state == ERR\n");

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).endsWith("qp_a.state is RTS, expected == ERR");
    }

    @Test
    void expectBytesShouldCompareMemoryAndShowBothSidesWhenTheyDiffer()
    {
        ok(TWO_HOSTS + """
            mmap buf app_a 4K
            write buf hex:00ff10
            expect bytes buf hex:00ff10
            expect bytes buf+1 hex:ff
            write buf+16 "text"
            expect bytes buf+16 hex:74657874
            expect bytes buf+16 "text"
            """);
        final ScriptRun text = run(TWO_HOSTS + "mmap buf app_a 4K\nwrite buf \"abc\"\nexpect bytes buf \"abd\"\n");
        final ScriptRun hex = run(TWO_HOSTS + "mmap buf app_a 4K\nwrite buf hex:0102\nexpect bytes buf hex:0103\n");

        assertThat(text.result().exitCode()).isEqualTo(1);
        assertThat(text.result().failure()).endsWith("expected bytes \"abd\", got \"abc\"");
        assertThat(hex.result().exitCode()).isEqualTo(1);
        assertThat(hex.result().failure()).endsWith("expected bytes hex:0103, got hex:0102");
    }

    @Test
    void repeatShouldSetLastCountAndStopAtTheFirstFailure()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            repeat 5 mmap m app_a 4K
            expect last.count == 5
            open small nic_a memlock=64K
            pd pd_s small
            mmap buf small 16K
            repeat 100 reg mr pd_s buf 16K
            expect ENOMEM
            expect last.count == 4
            expect small.pinned_vm == 16
            expect nic_a.sim_mr_live == 4
            expect nic_a.sim_mr_registrations == 4
            expect nic_a.sim_mr_registration_failures == 1
            """);

        assertThat(r.out()).contains("repeat 5: 5 done").contains("-> ENOMEM: repeat 100: 4 done, then ENOMEM at "
            + "repetition 5");
    }

    @Test
    void repeatFailingWithoutAnExpectShouldStopTheRun()
    {
        final ScriptRun r = run(TWO_HOSTS + """
            open small nic_a memlock=64K
            pd pd_s small
            mmap buf small 16K
            repeat 10 reg mr pd_s buf 16K
            expect last.count == 4
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).startsWith("t.rsim:17: unexpected ENOMEM: repeat 10: 4 done");
    }

    @Test
    void repeatBlockShouldRunItsStatementsAndExpectsEachTimeAndSetLastCount()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            let pinned0 app_a.pinned_vm
            repeat 3
                mmap m app_a 4K
                write m "block"
                expect bytes m "block"
                reg mr pd_a m 4K
                expect mr.pinned_pages == 1
            end
            expect last.count == 3
            expect app_a.pinned_vm == pinned0+3
            expect nic_a.sim_mr_live == 3
            """);

        assertThat(r.out()).contains("repeat 3: 3 done");
    }

    @Test
    void repeatBlockShouldStopAtTheFirstFailingStep()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            open small nic_a memlock=64K
            pd pd_s small
            mmap buf small 16K
            repeat 100
                reg mr pd_s buf 16K
                expect mr.pinned_pages == 4
            end
            expect ENOMEM
            expect last.count == 4
            expect nic_a.sim_mr_live == 4
            """);

        assertThat(r.out()).contains("-> ENOMEM: repeat 100: 4 done, then ENOMEM in repetition 5");
    }

    @Test
    void failingExpectInARepeatBlockShouldEndTheRunNamingTheRepetition()
    {
        final ScriptRun r = run(TWO_HOSTS + """
            repeat 5
                mmap m app_a 4K
                expect nic_a.sim_mr_live == 0
                reg mr pd_a m 4K
            end
            mmap later app_a 4K
            """);

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).isEqualTo("t.rsim:16: expect nic_a.sim_mr_live == 0 (repetition 2): "
            + "nic_a.sim_mr_live is 1, expected == 0");
        assertThat(r.out()).doesNotContain("mmap later");
    }

    @Test
    void lastDurationInARepeatBlockShouldBeThatOfTheStepBeforeTheExpect()
    {
        ok(TWO_HOSTS + """
            mmap buf app_a 64K
            repeat 3
                let t0 now
                reg mr pd_a buf 64K
                expect last.duration_ns > 0
                expect last.duration_ns == now-t0
            end
            expect last.count == 3
            """);
    }

    @Test
    void showViewsShouldPrintTheirText()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mmap buf app_a 64K
            show walk buf
            touch buf 64K write
            reg mr pd_a buf 64K
            show walk buf+4096
            show mr mr
            show mtt nic_a
            show counters nic_a
            let pin_kb app_a.pinned_vm*4
            show status app_a
            show meminfo alpha
            show devinfo nic_a
            show trace nic_a
            show trace nic_b
            show clock
            show qp qp_a
            """);
        final String out = r.out();

        assertThat(out).contains("PGD[").contains("not present: a touch faults a page in");
        assertThat(out).containsPattern("PTE \\(4 KiB page\\) -> phys 0x[0-9a-f]+ \\(pfn 0x[0-9a-f]+\\), zone \\w+, "
            + "pin count 1, map count 1");
        assertThat(out).containsPattern("lkey=0x[0-9a-f]{8} rkey=0x[0-9a-f]{8}: MPT index \\d+, variant \\d+");
        assertThat(out).containsPattern("MTT \\(\\w+\\): \\d+ entries, \\d+ in use \\(\\d+ asked for by the MRs\\)");
        assertThat(out).containsPattern("sim_mr_registrations\\s+1").containsPattern("sim_mr_live\\s+1");
        final Matcher pin = Pattern.compile("(?m)^    pin_kb = (\\d+)").matcher(out);
        assertThat(pin.find()).isTrue();
        assertThat(Long.parseLong(pin.group(1))).isGreaterThanOrEqualTo(64);
        assertThat(out).containsPattern("VmPin:\\s+" + pin.group(1) + " kB").containsPattern("VmRSS:\\s+\\d+ kB");
        assertThat(out).contains("MemTotal:").containsPattern("MemTotal:\\s+262144 kB");
        assertThat(out).contains("hca_id:").containsPattern("page_size_cap:\\s+0x");
        assertThat(out).containsPattern("ns REG\\s+lkey=0x[0-9a-f]{8} addr=0x[0-9a-f]+ len=64 KiB pages=16");
        assertThat(out).contains("no registrations yet");
        assertThat(out).containsPattern("simulated clock: [0-9.]+ \\w+ \\(\\d+ ns\\)");
        assertThat(out).contains("receives posted").contains("sends waiting");
    }

    @Test
    void lastDurationShouldEqualTheSimulatedClockAdvanceOfThePreviousStep()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mmap src app_a 1M
            mmap dst app_b 1M
            let t0 now
            reg mr_src pd_a src 1M
            expect last.duration_ns == now-t0
            expect last.duration_ns > 0
            let t1 now
            reg mr_dst pd_b dst 1M access=local_write,remote_write
            expect last.duration_ns == now-t1
            let t2 now
            post write qp_a sgl=mr_src:64K remote=mr_dst
            expect last.duration_ns == now-t2
            expect last.duration_ns > 0
            let t3 now
            poll cq_a
            expect last.duration_ns == now-t3
            let t4 now
            expect last.duration_ns == 0
            """);

        assertThat(r.result().simulatedNs()).isPositive();
        assertThat(r.result().expectsHeld()).isEqualTo(7);
    }

    @Test
    void showClockShouldAdvanceByLastDuration()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mmap src app_a 1M
            show clock
            reg mr_src pd_a src 1M
            let d last.duration_ns
            show clock
            """);
        final Matcher m = Pattern.compile("simulated clock: .* \\((\\d+) ns\\)").matcher(r.out());
        assertThat(m.find()).isTrue();
        final long before = Long.parseLong(m.group(1));
        assertThat(m.find()).isTrue();
        final long after = Long.parseLong(m.group(1));
        final Matcher d = Pattern.compile("(?m)^    d = (\\d+)").matcher(r.out());
        assertThat(d.find()).isTrue();

        assertThat(after - before).isEqualTo(Long.parseLong(d.group(1))).isPositive();
    }

    @Test
    void sameScriptRunTwiceShouldPrintTheSameOutput()
    {
        final String script = Catalogue.entry("first-registration").orElseThrow().script();
        final ScriptRun first = ok(script);
        final ScriptRun second = ok(script);
        final ScriptRun mine = ok(TWO_HOSTS + "mmap b app_a 1M\nreg m pd_a b 1M\nshow mr m\nshow trace nic_a\nshow clock\n");
        final ScriptRun mineAgain = ok(TWO_HOSTS + "mmap b app_a 1M\nreg m pd_a b 1M\nshow mr m\nshow trace nic_a\nshow clock\n");

        assertThat(second.out()).isEqualTo(first.out()).isNotEmpty();
        assertThat(second.result()).isEqualTo(first.result());
        assertThat(mineAgain.out()).isEqualTo(mine.out());
        assertThat(mineAgain.result()).isEqualTo(mine.result());
    }

    @Test
    void narrationDetailShouldPrintOnlySayParagraphs()
    {
        final StringWriter out = new StringWriter();
        final RunResult r = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.NARRATION)
            .run("n.rsim", "say one\nsay two\nhost h ram=256M\nsay\nsay == Head ==\nsay three\nshow clock\n",
                Path.of("."));

        assertThat(r.exitCode()).isZero();
        assertThat(out.toString()).isEqualTo("one two\n\n== Head ==\nthree\n");
    }
}
