package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.scenarios.cli.Catalogue;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * On-demand paging in scripts: {@code reg ... access=odp} and {@code reg NAME PD implicit}, {@code advise},
 * {@code show odp}, the ODP fields of an MR, {@code connect}'s rnr_retry and min_rnr_timer against responder page
 * faults, dereg, close and rereg of an ODP MR, malformed uses, and the catalogue scenarios built on them.
 */
class ScriptOdpTest
{
    /**
     * Lines 1 to 17: two connectx5 hosts, connected QPs, a 64 KiB source MR on alpha holding "hello", and a
     * 64 KiB untouched buffer on beta.
     */
    private static final String TWO_HOSTS = ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap src app_a 64K
        write src "hello"
        reg mr_src pd_a src 64K
        mmap buf app_b 64K
        """;

    /** The line number of the first line after {@link #TWO_HOSTS}. */
    private static final int NEXT = 18;

    private static ScriptRun ok(final String text)
    {
        final ScriptRun r = ScriptRun.ok("odp.rsim", text);
        assertThat(r.out()).doesNotContain("FAILED");
        return r;
    }


    // ------------------------------------------------------------------ reg ... access=odp

    @Test
    void odpRegistrationShouldPinNothingAndTheFirstRemoteWriteShouldFaultOnce()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            let pinned0 app_b.pinned_vm
            reg o pd_b buf 64K access=lw,rw,odp
            expect app_b.pinned_vm == pinned0
            expect o.odp == 1
            expect o.implicit == 0
            expect o.pinned_pages == 0
            expect o.mtt_entries == 16
            expect o.page_size == 4K
            expect o.mapped_pages == 0
            expect o.page_faults == 0
            expect nic_b.sim_odp_mr_live == 1
            post write qp_a sgl=mr_src:5 remote=o+8K
            poll cq_a
            expect SUCCESS
            expect bytes buf+8K "hello"
            expect o.page_faults == 1
            expect o.mapped_pages == 1
            expect o.entries_mapped == 1
            expect nic_b.page_faults == 1
            expect nic_b.sim_odp_rnr_naks >= 1
            let naks nic_b.sim_odp_rnr_naks
            post write qp_a sgl=mr_src:5 remote=o+8K
            poll cq_a
            expect SUCCESS
            expect o.page_faults == 1
            expect nic_b.sim_odp_rnr_naks == naks
            """);

        assertThat(r.out()).containsPattern("reg o: lkey=0x[0-9a-f]{8} rkey=0x[0-9a-f]{8} \\(index \\d+, variant \\d+\\);"
            + " ODP: page size 4 KiB, 16 MTT entries, 0 mapped now \\(pages the CPU has present\\), the others on "
            + "first access; 0 pages pinned, nothing charged to RLIMIT_MEMLOCK; [0-9.]+ us");
    }

    @Test
    void odpRegistrationShouldMapThePagesPresentAndAPinnedMrShouldHaveNoOdpFigures()
    {
        ok(TWO_HOSTS + """
            touch buf 16K write
            reg o pd_b buf 64K access=lw,rw,odp
            expect o.mapped_pages == 4
            expect o.entries_mapped == 4
            reg p pd_b buf 64K access=lw,rw
            expect p.odp == 0
            expect p.page_faults == 0
            expect p.mapped_pages == 0
            expect p.children == 0
            """);
    }

    @Test
    void odpMrLargerThanTheMemlockLimitShouldRegisterWhereAPinnedOneFailsWithEnomem()
    {
        ok(TWO_HOSTS + """
            mmap big app_b 32M
            reg pinned pd_b big 32M access=lw
            expect ENOMEM
            reg odp pd_b big 32M access=lw,odp
            expect ok
            expect app_b.memlock == 8M
            expect odp.mtt_entries == 8192
            """);
    }

    @Test
    void implicitRegistrationShouldCoverTheAddressSpaceWithNoMttEntries()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            let pinned0 app_b.pinned_vm
            let mtt0 nic_b.sim_mtt_entries_in_use
            reg all pd_b implicit access=lw,rw,odp
            expect all.odp == 1
            expect all.implicit == 1
            expect all.children == 0
            expect all.mtt_entries == 0
            expect all.addr == 0
            expect all == 0
            expect nic_b.sim_mtt_entries_in_use == mtt0
            expect app_b.pinned_vm == pinned0
            show odp all
            """);

        assertThat(r.out()).contains("implicit ODP MR over the whole address space (0x0-0x7ffffffff000): no MTT "
            + "entries until a fault, then a child of 262144 entries for each 1 GiB touched; 0 pages pinned")
            .contains("0 child(ren) of 1 GiB, 0 MTT entries, 0 pages pinned")
            .contains("the device maps 0 page(s) of 4 KiB in the process's mappings");
    }

    @Test
    void adviceOfAWholeImplicitMrShouldFailWithEinvalThatAnExpectCatches()
    {
        final ScriptRun r = ok(TWO_HOSTS + "reg all pd_b implicit access=lw,odp\n"
            + "advise all prefetch_write\n"
            + "expect EINVAL\n");

        assertThat(r.out()).contains("an implicit MR covers the whole address space: give the range to advise");
    }

    @Test
    void odpOnADeviceWithoutOdpShouldFailWithEopnotsupp()
    {
        final ScriptRun r = ok("""
            host h ram=64M
            device d h profile=connectx3
            open c d
            pd p c
            mmap b c 64K
            reg o p b 64K access=lw,odp
            expect EOPNOTSUPP
            reg i p implicit access=lw,odp
            expect EOPNOTSUPP
            """);

        assertThat(r.out()).contains("connectx3 has no on-demand paging");
    }

    // ------------------------------------------------------------------ advise

    @Test
    void prefetchWriteWithFlushShouldMapTheRangeSoThatTheWriteTakesNoFault()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg o pd_b buf 64K access=lw,rw,odp
            advise o prefetch_write buf+16K 16K flush
            expect last.duration_ns > 0
            expect o.mapped_pages == 4
            expect nic_b.page_prefetch == 4
            post write qp_a sgl=mr_src:5 remote=o+16K
            poll cq_a
            expect SUCCESS
            expect o.page_faults == 0
            expect nic_b.sim_odp_rnr_naks == 0
            advise o prefetch_write
            expect o.mapped_pages == 16
            """);

        assertThat(r.out()).containsPattern("ibv_advise_mr PREFETCH_WRITE FLAG_FLUSH 0x[0-9a-f]+\\+16 KiB: 4 MTT "
            + "entries mapped; [0-9.]+ us: the call returned once they were in the device")
            .containsPattern("ibv_advise_mr PREFETCH_WRITE 0x[0-9a-f]+\\+64 KiB: 12 MTT entries mapped; the work "
                + "runs beside the caller");
    }

    @Test
    void plainPrefetchShouldMapReadOnlySoThatAWriteStillFaults()
    {
        ok(TWO_HOSTS + """
            reg o pd_b buf 64K access=lw,rw,odp
            advise o prefetch buf 4K flush
            expect o.mapped_pages == 1
            post write qp_a sgl=mr_src:5 remote=o
            poll cq_a
            expect SUCCESS
            expect o.page_faults == 1
            expect bytes buf "hello"
            """);
    }

    @Test
    void prefetchNoFaultShouldMapOnlyThePagesPresent()
    {
        ok(TWO_HOSTS + """
            reg o pd_b buf 64K access=lw,rw,odp
            touch buf 8K write
            expect o.mapped_pages == 0
            advise o prefetch_no_fault flush
            expect o.mapped_pages == 2
            """);
    }

    @Test
    void adviseShouldFailAsTheDriverDoes()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg pinned pd_b buf 64K access=lw,rw
            advise pinned prefetch
            expect ENOENT
            reg ro pd_b buf 64K access=rr,odp
            advise ro prefetch_write
            expect EPERM
            pd other app_b
            advise ro prefetch pd=other
            expect EPERM
            advise ro prefetch buf+60K 8K
            expect EFAULT
            advise ro prefetch buf 0
            expect EFAULT
            dereg ro
            advise ro prefetch
            expect ENOENT
            """);

        assertThat(r.out()).contains("names an MR that is not ODP").contains("an MR without LOCAL_WRITE")
            .contains("is an MR of another PD").contains("is empty or outside its MR");
    }

    // ------------------------------------------------------------------ show odp

    @Test
    void showOdpShouldListTheFaultsAndTheRunsOfPagesTheDeviceMaps()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg o pd_b buf 64K access=lw,rw,odp
            advise o prefetch_write buf 8K flush
            advise o prefetch_write buf+20K 4K flush
            post write qp_a sgl=mr_src:5 remote=o+40K
            poll cq_a
            expect SUCCESS
            show odp o
            show mr o
            """);

        final String view = "page size 4 KiB, 16 MTT entries, 0 pages pinned\n"
            + "    1 page fault(s); 4 entries mapped, 0 zapped by invalidations since registration\n"
            + "    the device maps 4 of 16 page(s) of 4 KiB\n";
        assertThat(r.out()).containsPattern("ODP MR addr=0x[0-9a-f]+ length=64 KiB iova=0x[0-9a-f]+ access=\\[LOCAL_WRITE,"
            + " REMOTE_WRITE, ON_DEMAND\\]\n    lkey=0x[0-9a-f]{8} rkey=0x[0-9a-f]{8}: MPT index \\d+, variant \\d+\n")
            .contains(view)
            .containsPattern("0x[0-9a-f]+-0x[0-9a-f]+ pages 0-1 in buf, first page -> phys 0x[0-9a-f]+\n"
                + "      0x[0-9a-f]+-0x[0-9a-f]+ page 5 in buf\\+20 KiB, first page -> phys 0x[0-9a-f]+\n"
                + "      0x[0-9a-f]+-0x[0-9a-f]+ page 10 in buf\\+40 KiB, first page -> phys 0x[0-9a-f]+");
        assertThat(r.out().indexOf(view)).isLessThan(r.out().lastIndexOf(view));
    }

    @Test
    void showOdpShouldFollowInvalidationsAndDeregistration()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg o pd_b buf 64K access=lw,rw,odp
            advise o prefetch_write flush
            expect o.mapped_pages == 16
            let zapped0 nic_b.page_invalidations
            madvise buf 16K dontneed
            expect o.mapped_pages == 12
            expect o.entries_zapped == 4
            expect nic_b.page_invalidations == zapped0+4
            munmap buf 64K
            expect o.mapped_pages == 0
            expect o.entries_zapped == 16
            dereg o
            expect o.closed == 1
            expect o.mtt_entries == 0
            expect nic_b.sim_odp_mr_live == 0
            show odp o
            dereg o
            expect EINVAL
            """);

        assertThat(r.out()).containsPattern("ODP MR deregistered: nothing to unpin; its interval notifier removed, "
            + "\\d+ cached translations invalidated \\(0 page faults in its life\\); [0-9.]+ us; the name o keeps "
            + "the old key 0x[0-9a-f]+ to try it later")
            .contains("(deregistered: the keys no longer translate)")
            .contains("-> EINVAL: MR o is deregistered already");
    }

    @Test
    void odpMrShouldCloseAndRefuseReregistration()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg o pd_b buf 64K access=lw,rw,odp
            rereg o access=lw
            expect EOPNOTSUPP
            expect last.rereg_error == ERR_CMD
            close o
            expect o.closed == 1
            expect nic_b.sim_odp_mr_live == 0
            """);

        assertThat(r.out()).contains("ibv_rereg_mr of an ODP MR is not simulated");
    }

    // ------------------------------------------------------------------ connect: rnr_retry, min_rnr_timer

    @Test
    void responderFaultShouldExhaustRnrRetryZeroAndCompleteWithRetrySeven()
    {
        final ScriptRun r = ok(ScriptRun.TWO_CONNECTED_HOSTS + """
            mmap src app_a 4K
            reg mr_src pd_a src 4K
            mmap buf app_b 64K
            reg o pd_b buf 64K access=lw,rw,odp
            qp qa pd_a cq_a
            qp qb pd_b cq_b
            connect qa qb rnr_retry=0
            post write qa sgl=mr_src:5 remote=o
            poll cq_a
            expect RNR_RETRY_EXC_ERR
            expect qa.state == ERR
            expect nic_a.req_rnr_retries_exceeded == 1
            expect nic_a.rnr_nak_retry_err == 0
            expect o.page_faults == 1
            qp qc pd_a cq_a
            qp qd pd_b cq_b
            connect qc qd rnr_retry=1 min_rnr_timer=1
            post write qc sgl=mr_src:5 remote=o+4K
            poll cq_a
            expect RNR_RETRY_EXC_ERR
            qp qe pd_a cq_a
            qp qf pd_b cq_b
            connect qe qf rnr_retry=7 min_rnr_timer=1
            let naks0 nic_b.sim_odp_rnr_naks
            let t0 now
            post write qe sgl=mr_src:5 remote=o+8K
            poll cq_a
            expect SUCCESS
            let short_ns now-t0
            let naks nic_b.sim_odp_rnr_naks-naks0
            expect naks > 1
            qp qg pd_a cq_a
            qp qh pd_b cq_b
            connect qg qh
            let naks0 nic_b.sim_odp_rnr_naks
            let t0 now
            post write qg sgl=mr_src:5 remote=o+12K
            poll cq_a
            expect SUCCESS
            let long_ns now-t0
            expect nic_b.sim_odp_rnr_naks == naks0+1
            expect long_ns > short_ns*10
            """);

        assertThat(r.out()).contains("rnr_retry 0, min_rnr_timer 12 (640.0 us a wait)")
            .contains("rnr_retry 7 (no limit), min_rnr_timer 1 (10.0 us a wait)")
            .contains("wc wr_id=1 IBV_WC_RNR_RETRY_EXC_ERR");
        assertThat(ScriptRun.figure(r.out(), "naks")).isGreaterThan(1);
    }

    @Test
    void connectShouldKeepRnrValuesAsTheDriverKeepsThem()
    {
        // mlx5 masks rnr_retry and min_rnr_timer to their 3 and 5 bits (MLX5_SET); rxe keeps them whole
        // (rxe_qp_from_attr), and its RNR NAK carries the timer's low 5 bits.
        final String script = """
            qp qa pd_a cq_a
            qp qb pd_b cq_b
            connect qa qb rnr_retry=8 min_rnr_timer=33
            expect ok
            """;
        final ScriptRun mlx5 = ok(ScriptRun.TWO_CONNECTED_HOSTS + script);
        final ScriptRun rxe = ok((ScriptRun.TWO_CONNECTED_HOSTS + script).replace("profile=connectx5",
            "profile=rxe"));

        assertThat(mlx5.out()).contains("rnr_retry 0, min_rnr_timer 1 (10.0 us a wait)");
        assertThat(rxe.out()).contains("rnr_retry 8, min_rnr_timer 33 (10.0 us a wait)");
    }

    // ------------------------------------------------------------------ malformed scripts

    static Stream<Arguments> malformed()
    {
        return Stream.of(
            Arguments.of("implicit without odp", "reg all pd_b implicit access=lw,rw",
                "an implicit MR is an on-demand-paging MR over the whole address space"),
            Arguments.of("implicit without access", "reg all pd_b implicit", "give access=odp,..."),
            Arguments.of("reg with ADDR but no SIZE", "reg r pd_b buf access=lw,odp",
                "reg needs ADDR and SIZE, or the word implicit for an implicit ODP MR; expected: "
                    + Spec.VERBS.get("reg").usage()),
            Arguments.of("advise with ADDR but no SIZE", "reg o pd_b buf 64K access=lw,odp\nadvise o prefetch buf",
                "advise takes ADDR and SIZE together"),
            Arguments.of("advise with an unknown advice", "reg o pd_b buf 64K access=lw,odp\nadvise o prefetch_read",
                "'prefetch_read' is not one of [prefetch, prefetch_no_fault, prefetch_write]"),
            Arguments.of("advise of a buffer", "advise buf prefetch", "'buf' is a buffer; expected the name of a "
                + "fast-registration MR or an MR"),
            Arguments.of("advise without an advice", "reg o pd_b buf 64K access=lw,odp\nadvise o",
                "expected: " + Spec.VERBS.get("advise").usage()),
            Arguments.of("advise with pd= naming a QP", "reg o pd_b buf 64K access=lw,odp\nadvise o prefetch pd=qp_b",
                "'qp_b' is a QP; expected the name of a PD"),
            Arguments.of("advise with an unknown option", "reg o pd_b buf 64K access=lw,odp\nadvise o prefetch now=1",
                "'advise' has no option 'now'"),
            Arguments.of("show odp without a name", "show odp", "show odp needs a name"),
            Arguments.of("an MR field that is none", "reg o pd_b buf 64K access=lw,odp\nexpect o.faults == 0",
                "'o.faults': an MR has the fields ["));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedUseShouldFailBeforeRunningWithFileAndLine(final String what, final String lines,
        final String expected)
    {
        final StringWriter out = new StringWriter();
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL);
        final int line = NEXT + (int)lines.chars().filter(c -> c == '\n').count();

        assertThatThrownBy(() -> runner.run("bad.rsim", TWO_HOSTS + lines + "\n", Path.of(".")))
            .isInstanceOfSatisfying(ScriptException.class, e ->
            {
                assertThat(e.getMessage()).startsWith("bad.rsim:" + line + ": ").contains(expected);
                assertThat(e.line()).isEqualTo(line);
            });
        assertThat(out.toString()).as("nothing runs before the whole script is checked").isEmpty();
    }

    @Test
    void showOdpOfAPinnedMrShouldFailAtItsLineNamingShowMr()
    {
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(new StringWriter(), true),
            ScriptRunner.Detail.FULL);

        assertThatThrownBy(() -> runner.run("v.rsim", TWO_HOSTS + "reg p pd_b buf 64K\nshow odp p\n", Path.of(".")))
            .isInstanceOf(ScriptException.class).hasMessage("v.rsim:" + (NEXT + 1) + ": 'p' is a pinned MR, not an "
            + "on-demand-paging one (register it with access=odp,...); show mr p shows it");
        assertThatThrownBy(() -> runner.run("v.rsim", TWO_HOSTS + "show odp buf\n", Path.of(".")))
            .isInstanceOf(ScriptException.class).hasMessageContaining("'buf' is no MR; show odp needs the name of an "
            + "ODP MR");
    }

    // ------------------------------------------------------------------ catalogue scenarios

    private static String scenario(final String name)
    {
        return ok(Catalogue.entry(name).orElseThrow().script()).out();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"odp-explicit", "odp-invalidation", "odp-rnr-retry"})
    void scenarioShouldRunWithEveryExpectHeldAndTheSameOutputTwice(final String name)
    {
        assertThat(scenario(name)).isEqualTo(scenario(name));
    }

    @Test
    void odpExplicitShouldMoveTheTimeFromRegistrationToTheFirstAccess()
    {
        final String out = scenario("odp-explicit");

        assertThat(ScriptRun.figure(out, "reg_odp_ns")).isLessThan(ScriptRun.figure(out, "reg_pinned_ns"));
        assertThat(ScriptRun.figure(out, "first_write_odp_ns")).isGreaterThan(10 * ScriptRun.figure(out, "second_write_odp_ns"));
        assertThat(ScriptRun.figure(out, "second_write_odp_ns")).isEqualTo(ScriptRun.figure(out, "write_pinned_ns"));
        assertThat(out).contains("-> ENOMEM: ibv_reg_mr: pinned_vm=")
            .contains("the shared zero page").containsPattern("VmPin:\\s+1044 kB");
    }

    @Test
    void odpInvalidationShouldReadOldBytesThroughThePinnedMrAndNewOnesThroughTheOdpMr()
    {
        final String out = scenario("odp-invalidation");

        final int pinned = out.indexOf("remote=pinned");
        final int odp = out.indexOf("remote=odp\n", pinned);
        assertThat(out.indexOf("expect bytes landing \"old contents\": held", pinned)).isBetween(pinned, odp);
        assertThat(out.indexOf("expect bytes landing \"NEW contents\": held", odp)).isPositive();
        assertThat(out).contains("expect bytes buf_old \"from a peer\": held")
            .contains("expect cold.phys != cold_frame: held").contains("expect alpha.pgmajfault > major0: held");
    }

    @Test
    void odpRnrRetryShouldFailWithRetryExceededThenCompleteWithMoreRetries()
    {
        final String out = scenario("odp-rnr-retry");

        assertThat(Pattern.compile("wc wr_id=\\d+ IBV_WC_RNR_RETRY_EXC_ERR").matcher(out).results().count())
            .isEqualTo(2);
        assertThat(ScriptRun.figure(out, "short_timer_naks")).isGreaterThan(1);
        assertThat(ScriptRun.figure(out, "long_timer_naks")).isEqualTo(1);
        assertThat(ScriptRun.figure(out, "long_timer_ns")).isGreaterThan(10 * ScriptRun.figure(out, "short_timer_ns"));
    }

    // ------------------------------------------------------------------ odp-implicit

    @Test
    void implicitScenarioShouldRunWithEveryExpectHeldAndTheSameOutputTwice()
    {
        assertThat(scenario("odp-implicit")).isEqualTo(scenario("odp-implicit"));
    }
}
