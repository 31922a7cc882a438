package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The verbs of memory windows, rereg and fast registration: mw, bind, unbind, post local_inv|send_inv|reg_mr, rereg,
 * fastmr, map, close and show of windows; each one's success and its error outcomes, and malformed uses.
 */
class ScriptWindowsTest
{
    /**
     * Lines 1 to 18: two connectx5 hosts, a PD, CQ and QP each, the QPs connected, a source MR on alpha and a
     * 64 KiB target MR with MW_BIND on beta.
     */
    private static final String TWO_HOSTS = ScriptRun.TWO_CONNECTED_HOSTS + """
        mmap src app_a 64K
        mmap dst app_b 64K
        reg mr_src pd_a src 64K
        reg mr_dst pd_b dst 64K access=local_write,mw_bind
        write dst "untouched"
        """;

    /** The script on rxe devices instead of ConnectX-5. */
    private static final java.util.function.UnaryOperator<String> ON_RXE =
        script -> script.replace("profile=connectx5", "profile=rxe");

    /** The line number of the first line after {@link #TWO_HOSTS}. */
    private static final int NEXT = 19;

    /** A fresh QP pair (after an error took the first one to ERR). */
    private static final String SECOND_PAIR = """
        qp qp_c pd_a cq_a
        qp qp_d pd_b cq_b
        connect qp_c qp_d
        """;

    private static ScriptRun run(final String text)
    {
        return ScriptRun.run("w.rsim", text);
    }

    private static ScriptRun ok(final String text)
    {
        final ScriptRun r = ScriptRun.ok("w.rsim", text);
        return r;
    }

    // ------------------------------------------------------------------ mw

    @Test
    void mwShouldAllocateAnUnboundWindowOfEachTypeWithItsFields()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w1 pd_b
            mw w2 pd_b type=2
            expect w1.type == 1
            expect w2.type == 2
            expect w1.bound == 0
            expect w1.length == 0
            expect w1.qp == 0
            expect w1.closed == 0
            expect w1.index != w2.index
            expect w1.rkey == w1.index*256+w1.variant
            expect w1.index != mr_dst.index
            show mw w1
            """);

        assertThat(r.out()).containsPattern("mw w1: type 1, rkey=0x[0-9a-f]{8} \\(index \\d+, variant \\d+\\), "
            + "unbound: it grants nothing until a bind").contains("mw w2: type 2, rkey=0x");
        assertThat(r.out()).containsPattern("MW w1 type 1 rkey=0x[0-9a-f]{8}: MPT index \\d+, variant \\d+; unbound: "
            + "it grants nothing");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"e810", "erdma", "rxe-legacy"})
    void mwShouldFailWithEopnotsuppOnADeviceWithoutWindows(final String profile)
    {
        final ScriptRun r = ok("host h ram=256M\ndevice d h profile=" + profile + "\nopen c d\npd p c\n"
            + "mw w p\nexpect EOPNOTSUPP\nmw w2 p type=2\nexpect EOPNOTSUPP\n");

        assertThat(r.out()).contains("-> EOPNOTSUPP: ibv_alloc_mw: " + profile
            + " has no memory windows");
    }

    @Test
    void mwFailingWithoutAnExpectShouldStopTheRun()
    {
        final ScriptRun r = run("host h ram=256M\ndevice d h profile=e810\nopen c d\npd p c\nmw w p\nsay never\n");

        assertThat(r.result().exitCode()).isEqualTo(1);
        assertThat(r.result().failure()).startsWith("w.rsim:5: unexpected EOPNOTSUPP");
    }

    // ------------------------------------------------------------------ bind type 1

    @Test
    void bindOfAType1WindowShouldSetTheNextRkeyAtPostAndOpenOnlyItsRangeWithItsRights()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b
            let before w.rkey
            bind w qp_b mr_dst addr=dst+4K length=4K access=remote_write
            expect ok
            expect w.rkey == before+1
            expect w.index == before/256
            poll cq_b
            expect SUCCESS
            expect w.bound == 1
            expect w.addr == dst+4K
            expect w.length == 4K
            expect w.qp == 0
            expect w == dst+4K
            expect nic_b.sim_mw_binds == 1
            show mw w
            show mr mr_dst
            write src "hello"
            post write qp_a sgl=mr_src:5 remote=w
            poll cq_a
            expect SUCCESS
            expect bytes dst+4K "hello"
            post write qp_a sgl=mr_src:5 remote=dst rkey=w.rkey
            poll cq_a
            expect REM_ACCESS_ERR
            expect bytes dst "untouched"
            """ + SECOND_PAIR + """
            post read qp_c sgl=mr_src:5 remote=w
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).containsPattern("ibv_bind_mw wr_id=1 \\(type 1\\): rkey 0x[0-9a-f]{8} -> 0x[0-9a-f]{8} "
            + "\\(set at post\\), 0x[0-9a-f]+\\+4 KiB of MR lkey 0x[0-9a-f]{8}, rights \\[REMOTE_WRITE\\]");
        assertThat(r.out()).contains("wc wr_id=1 IBV_WC_SUCCESS opcode=BIND_MW");
        assertThat(r.out()).containsPattern("MW w type 1 rkey=0x[0-9a-f]{8}: MPT index \\d+, variant \\d+; bound to MR "
            + "mr_dst \\(lkey 0x[0-9a-f]{8}\\): 0x[0-9a-f]+-0x[0-9a-f]+ \\(4 KiB\\), rights \\[REMOTE_WRITE\\], any QP "
            + "of its PD");
        assertThat(r.out()).contains("1 memory window(s) bound: deregistration would go on and leave them "
            + "translating nothing (mlx5_ib_dereg_mr counts no windows)");
    }

    @Test
    void bindShouldDefaultToTheWholeMrWithRemoteReadAndWrite()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b
            bind w qp_b mr_dst
            poll cq_b
            expect SUCCESS
            expect w.addr == mr_dst.addr
            expect w.length == mr_dst.length
            post read qp_a sgl=mr_src:9 remote=w
            poll cq_a
            expect SUCCESS
            expect bytes src "untouched"
            write src "over"
            post write qp_a sgl=mr_src:4 remote=w+60K
            poll cq_a
            expect SUCCESS
            expect bytes dst+60K "over"
            """);

        assertThat(r.out()).contains("rights [REMOTE_WRITE, REMOTE_READ]");
    }

    @Test
    void bindOfAType1WindowToAnMrOfAnotherPdShouldFailWithEperm()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pd pd_other app_b
            mw w pd_other
            let before w.rkey
            bind w qp_b mr_dst
            expect EPERM
            expect w.rkey == before
            """);

        assertThat(r.out()).contains("-> EPERM: ibv_bind_mw: the MR and the window are in different PDs");
    }

    @Test
    void bindThatTheDeviceRefusesShouldCompleteWithMwBindErrAndNameTheReason()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg mr_plain pd_b dst 4K access=local_write
            mw w pd_b
            bind w qp_b mr_plain
            expect ok
            poll cq_b
            expect MW_BIND_ERR
            expect last.status == MW_BIND_ERR
            expect qp_b.state == ERR
            expect w.bound == 0
            """);

        assertThat(r.out()).contains("the device refused it: the MR lacks MW_BIND access")
            .contains("wc wr_id=1 IBV_WC_MW_BIND_ERR");
    }

    @Test
    void failedRebindOfAType1WindowShouldLeaveTheOldBindingUnderTheOldKey()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b
            bind w qp_b mr_dst access=remote_write
            poll cq_b
            let good w.rkey
            bind w qp_b mr_dst addr=dst+60K length=8K access=remote_write
            poll cq_b
            expect MW_BIND_ERR
            expect w.rkey == good+1
            expect w.bound == 1
            """ + SECOND_PAIR + """
            write src "kept"
            post write qp_c sgl=mr_src:4 remote=dst rkey=good
            poll cq_a
            expect SUCCESS
            expect bytes dst "kept"
            """);

        assertThat(r.out()).containsPattern("the window keeps its previous state under rkey (0x[0-9a-f]{8}), while "
            + "its rkey field shows the new one");
    }

    @Test
    void bindOutsideTheMrShouldCompleteWithMwBindErr()
    {
        ok(TWO_HOSTS + """
            mw w pd_b
            bind w qp_b mr_dst addr=dst+60K length=8K
            poll cq_b
            expect MW_BIND_ERR
            """);
    }

    @Test
    void bindOnAQpInErrShouldBeFlushed()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b
            modify qp_b err
            bind w qp_b mr_dst
            poll cq_b
            expect WR_FLUSH_ERR
            expect w.bound == 0
            """);

        assertThat(r.out()).contains("the QP is in ERR: flushed (poll shows IBV_WC_WR_FLUSH_ERR)");
    }

    @Test
    void unsignaledBindShouldLeaveNoCompletion()
    {
        ok(TWO_HOSTS + """
            mw w pd_b
            bind w qp_b mr_dst unsignaled id=77
            poll cq_b
            expect last.completions == 0
            expect w.bound == 1
            unbind w qp_b id=78
            poll cq_b
            expect SUCCESS
            expect last.wr_id == 78
            """);
    }

    // ------------------------------------------------------------------ unbind

    @Test
    void unbindShouldRetireTheKeyOfAType1WindowAndLetTheMrGo()
    {
        // rxe_dereg_mr refuses while a window is bound (mlx5 lets the MR go)
        final ScriptRun r = ok(ON_RXE.apply(TWO_HOSTS + """
            mw w pd_b
            bind w qp_b mr_dst access=remote_write
            poll cq_b
            let bound_key w.rkey
            dereg mr_dst
            expect EINVAL
            unbind w qp_b
            poll cq_b
            expect SUCCESS
            expect w.bound == 0
            expect w.rkey == bound_key+1
            post write qp_a sgl=mr_src:4 remote=dst rkey=bound_key
            poll cq_a
            expect REM_ACCESS_ERR
            expect bytes dst "untouched"
            dereg mr_dst
            expect ok
            """));

        assertThat(r.out()).containsPattern("ibv_bind_mw wr_id=\\d+ \\(unbind\\): rkey 0x[0-9a-f]{8} -> 0x[0-9a-f]{8} "
            + "\\(set at post\\); the window grants nothing");
    }

    @Test
    void unbindOfAType2WindowShouldFailWithEinval()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b type=2
            bind w qp_b mr_dst
            poll cq_b
            unbind w qp_b
            expect EINVAL
            expect w.bound == 1
            """);

        assertThat(r.out()).contains("-> EINVAL: ibv_bind_mw: ibv_bind_mw binds type 1 windows");
    }

    // ------------------------------------------------------------------ bind type 2

    @Test
    void bindOfAType2WindowShouldPostBindMwWithTheNextKeyByteAndServeOnlyItsQp()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b type=2
            let before w.rkey
            bind w qp_b mr_dst access=remote_read
            poll cq_b
            expect SUCCESS
            expect w.rkey == before+1
            expect w.qp == qp_b
            show mw w
            post read qp_a sgl=mr_src:9 remote=w
            poll cq_a
            expect SUCCESS
            expect bytes src "untouched"
            """ + SECOND_PAIR + """
            post read qp_c sgl=mr_src:9 remote=w
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).containsPattern("posted BIND_MW wr_id=1 \\(type 2, key byte 0x[0-9a-f]{2}\\), "
            + "0x[0-9a-f]+\\+64 KiB of MR lkey 0x[0-9a-f]{8}, rights \\[REMOTE_READ\\], through QP 0x[0-9a-f]+ only: "
            + "rkey 0x[0-9a-f]{8} -> 0x[0-9a-f]{8}");
        assertThat(r.out()).containsPattern("only through QP qp_b \\(0x[0-9a-f]+\\)");
    }

    @Test
    void bindOfAType2WindowShouldTakeTheKeyByteOfRkeyAndKeepItsIndex()
    {
        ok(TWO_HOSTS + """
            mw w pd_b type=2
            let index0 w.index
            bind w qp_b mr_dst rkey=0xab
            poll cq_b
            expect SUCCESS
            expect w.variant == 0xab
            expect w.index == index0
            """);
    }

    @Test
    void bindOfABoundType2WindowShouldCompleteWithMwBindErrAndKeepTheKey()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b type=2
            bind w qp_b mr_dst
            poll cq_b
            let key w.rkey
            bind w qp_b mr_dst rkey=0x42
            poll cq_b
            expect MW_BIND_ERR
            expect w.rkey == key
            expect w.bound == 1
            """);

        assertThat(r.out()).contains("type 2 window is bound: invalidate it before binding again")
            .containsPattern("; the rkey stays 0x[0-9a-f]{8}");
    }

    @Test
    void bindOfAType2WindowOnAQpOfAnotherPdShouldCompleteWithMwBindErr()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pd pd_b2 app_b
            qp qp_x pd_a cq_a
            qp qp_y pd_b2 cq_b
            connect qp_x qp_y
            mw w pd_b type=2
            bind w qp_y mr_dst
            poll cq_b
            expect MW_BIND_ERR
            """);

        assertThat(r.out()).contains("the QP's PD differs from the window's PD");
    }

    @Test
    void rkeyOptionOnAType1WindowShouldBeRefusedBeforeAnythingRuns()
    {
        final StringWriter out = new StringWriter();
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL);

        assertThatThrownBy(() -> runner.run("bad.rsim", TWO_HOSTS + "mw w pd_b\nbind w qp_b mr_dst rkey=5\n",
            Path.of("."))).isInstanceOfSatisfying(ScriptException.class, e ->
            {
                assertThat(e.line()).isEqualTo(NEXT + 1);
                assertThat(e.getMessage()).startsWith("bad.rsim:" + (NEXT + 1) + ": 'w' is a type 1 window: "
                    + "ibv_bind_mw picks its new rkey");
            });
        assertThat(out.toString()).isEmpty();
    }

    // ------------------------------------------------------------------ invalidation

    @Test
    void localInvShouldUnbindAType2WindowAndItsKeyShouldFailAfterwards()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b type=2
            bind w qp_b mr_dst
            poll cq_b
            let key w.rkey
            let inv0 nic_b.sim_key_invalidations
            post local_inv qp_b rkey=w.rkey
            poll cq_b
            expect SUCCESS
            expect last.status == SUCCESS
            expect w.bound == 0
            expect w.rkey == key
            expect nic_b.sim_key_invalidations == inv0+1
            post write qp_a sgl=mr_src:4 remote=dst rkey=key
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).containsPattern("posted wr_id=\\d+ \\(LOCAL_INV of rkey 0x[0-9a-f]{8}\\)\n")
            .contains("opcode=LOCAL_INV");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mr_dst.rkey", "w1.rkey", "0x7fffff01"})
    void localInvOfAKeyThatIsNoType2WindowOrFastMrShouldCompleteWithLocQpOpErr(final String key)
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w1 pd_b
            post local_inv qp_b rkey=%s
            poll cq_b
            expect LOC_QP_OP_ERR
            expect qp_b.state == ERR
            """.formatted(key));

        assertThat(r.out()).contains("the device refused it:");
    }

    @Test
    void sendInvShouldInvalidateThePeersWindowAndShowTheKeyInTheReceiveCompletion()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b type=2
            bind w qp_b mr_dst
            poll cq_b
            let key w.rkey
            recv qp_b sgl=mr_dst+32K:64
            write src "reply"
            post send_inv qp_a sgl=mr_src:5 rkey=key
            poll cq_a
            expect SUCCESS
            poll cq_b
            expect SUCCESS
            expect last.invalidated_rkey == key
            expect last.byte_len == 5
            expect bytes dst+32K "reply"
            expect w.bound == 0
            post read qp_a sgl=mr_src:4 remote=dst rkey=key
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).containsPattern("posted wr_id=\\d+ \\(SEND_WITH_INV, 5 bytes, invalidates rkey "
            + "0x[0-9a-f]{8} at the peer\\)").containsPattern("opcode=RECV byte_len=5 invalidated_rkey=0x[0-9a-f]{8}");
    }

    @Test
    void invalidatedRkeyShouldBeZeroForAnOrdinaryReceive()
    {
        ok(TWO_HOSTS + """
            recv qp_b sgl=mr_dst:64
            post send qp_a sgl=mr_src:5
            poll cq_b
            expect SUCCESS
            expect last.invalidated_rkey == 0
            """);
    }

    @Test
    void sendInvOfAnMrKeyShouldCompleteWithRemInvReqErrOnBothSides()
    {
        ok(TWO_HOSTS + """
            recv qp_b sgl=mr_dst:64
            post send_inv qp_a sgl=mr_src:5 rkey=mr_dst.rkey
            poll cq_b
            expect REM_INV_REQ_ERR
            poll cq_a
            expect REM_INV_REQ_ERR
            expect nic_a.req_remote_invalid_request == 1
            """);
    }

    // ------------------------------------------------------------------ dereg, close, show

    @Test
    void deregShouldFailWithEinvalWhileAWindowIsBoundAndSucceedAfterItIsClosed()
    {
        // rxe_dereg_mr refuses while a window is bound (mlx5 lets the MR go)
        final ScriptRun r = ok(ON_RXE.apply(TWO_HOSTS + """
            mw w pd_b
            bind w qp_b mr_dst
            poll cq_b
            let pinned app_b.pinned_vm
            dereg mr_dst
            expect EINVAL
            expect mr_dst.closed == 0
            expect app_b.pinned_vm == pinned
            close w
            expect w.closed == 1
            expect w.bound == 0
            show mw w
            dereg mr_dst
            expect ok
            expect mr_dst.closed == 1
            """));

        assertThat(r.out()).contains("-> EINVAL: ibv_dereg_mr: 1 memory window(s) are bound to MR")
            .contains("; deallocated: the rkey no longer translates");
    }

    @Test
    void windowNameShouldNotServeAsAnSgeAddress()
    {
        final ScriptRunner runner = new ScriptRunner(new PrintWriter(new StringWriter(), true),
            ScriptRunner.Detail.FULL);

        assertThatThrownBy(() -> runner.run("w.rsim", TWO_HOSTS + "mw w pd_b\nbind w qp_b mr_dst\n"
            + "post write qp_b sgl=w:4 remote=mr_src\n", Path.of(".")))
            .isInstanceOfSatisfying(ScriptException.class, e -> assertThat(e.getMessage()).startsWith("w.rsim:"
                + (NEXT + 2) + ": SGE 'w:4': a memory window has no lkey"));
    }

    // ------------------------------------------------------------------ rereg

    @Test
    void reregOfTheAccessShouldKeepTheKeysAndApplyTheNewRights()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            reg mr pd_b dst 64K access=local_write,remote_write
            let key mr.rkey
            rereg mr access=local_write,remote_read
            expect ok
            expect last.rereg_error == NONE
            expect mr.rkey == key
            expect mr.lkey == key
            expect nic_b.sim_mr_reregistrations == 1
            post read qp_a sgl=mr_src:9 remote=mr
            poll cq_a
            expect SUCCESS
            post write qp_a sgl=mr_src:9 remote=mr
            poll cq_a
            expect REM_ACCESS_ERR
            """);

        assertThat(r.out()).containsPattern("CHANGE_ACCESS: lkey (0x[0-9a-f]{8}) -> \\1, rkey (0x[0-9a-f]{8}) -> \\2 "
            + "\\(keys kept\\); addr 0x[0-9a-f]+, 64 KiB, access \\[LOCAL_WRITE, REMOTE_READ\\]; [0-9.]+ us");
    }

    @Test
    void reregOfTheTranslationShouldGiveNewKeysOnAConnectX5AndKeepThemOnAConnectX3()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mmap other app_b 256K
            reg mr pd_b dst 32K access=local_write,remote_read
            let key mr.rkey
            rereg mr addr=other size=256K
            expect ok
            expect mr.rkey != key
            expect mr.addr == other
            expect mr.length == 256K
            rereg mr size=16K
            expect ok
            expect mr.addr == other
            expect mr.length == 16K
            host gamma ram=256M
            device cx3 gamma profile=connectx3
            open app_g cx3
            pd pd_g app_g
            mmap b1 app_g 64K
            mmap b2 app_g 64K
            reg mr3 pd_g b1 64K
            let key3 mr3.rkey
            rereg mr3 addr=b2
            expect ok
            expect mr3.rkey == key3
            expect mr3.addr == b2
            expect mr3.length == 64K
            """);

        assertThat(r.out()).contains("CHANGE_TRANSLATION: ").contains("(new keys: the old ones no longer translate)")
            .contains("(keys kept)");
    }

    @Test
    void reregShouldMoveTheMrToAnotherPd()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            pd pd_b2 app_b
            reg mr pd_b dst 4K
            rereg mr pd=pd_b2 access=local_write,remote_read
            expect ok
            """);

        assertThat(r.out()).contains("CHANGE_PD|CHANGE_ACCESS: ");
    }

    static Stream<Arguments> reregFailures()
    {
        return Stream.of(
            Arguments.of("no flags", "rereg mr", "EINVAL", "ERR_CMD", "flags=0: nothing to change"),
            Arguments.of("zero length", "rereg mr size=0", "EINVAL", "ERR_INPUT", "both must be non-zero"),
            Arguments.of("zero-based added", "rereg mr access=local_write,zero_based", "EINVAL", "ERR_CMD",
                "cannot add or remove ON_DEMAND or ZERO_BASED"),
            Arguments.of("deregistered", "dereg mr\nrereg mr access=local_write", "EINVAL", "ERR_INPUT",
                "the MR is deregistered"),
            Arguments.of("unmapped pages", "munmap other 32K\nrereg mr addr=other size=32K", "EFAULT", "ERR_CMD", ""),
            Arguments.of("a window bound", "mw w pd_b\nbind w qp_b mr\nrereg mr access=local_write,mw_bind", "EINVAL",
                "ERR_CMD", "memory window(s) are bound to the MR"),
            Arguments.of("a fast-registration MR", "fastmr f pd_b 4\nrereg f access=local_write", "EINVAL",
                "ERR_INPUT", "a fast-registration MR is not a plain user MR"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reregFailures")
    void reregFailureShouldBeItsErrnoWithTheReregCode(final String what, final String lines, final String errno,
        final String code, final String message)
    {
        final ScriptRun r = ok(TWO_HOSTS + "mmap other app_b 32K\nreg mr pd_b dst 64K access=local_write,mw_bind\n" + lines
            + "\nexpect " + errno + "\nexpect last.rereg_error == " + code + "\n");

        assertThat(r.out()).contains("-> " + errno + ": ibv_rereg_mr: ").contains(message)
            .contains("(IBV_REREG_MR_" + code + ": ");
    }

    @Test
    void reregOnRxeShouldFailWithEopnotsuppAsItsProviderHasNoReregMr()
    {
        final ScriptRun r = ok("""
            host h ram=256M
            device d h profile=rxe
            open c d
            pd p c
            mmap a c 8K
            mmap b c 8K
            reg mr p a 8K
            rereg mr addr=b
            expect EOPNOTSUPP
            expect last.rereg_error == ERR_INPUT
            rereg mr access=local_write,remote_read
            expect EOPNOTSUPP
            expect last.rereg_error == ERR_INPUT
            """);

        assertThat(r.out()).contains("-> EOPNOTSUPP: ibv_rereg_mr: rxe's provider has no rereg_mr");
    }

    // ------------------------------------------------------------------ fast registration

    @Test
    void fastRegistrationShouldMapRegisterUseAndInvalidateAnMr()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            fastmr f pd_b 4
            expect f.valid == 0
            expect f.max_num_sg == 4
            let key0 f.lkey
            show mr f
            map f dst+8K 16K
            expect ok
            expect f.addr == dst+8K
            expect f.length == 16K
            post reg_mr qp_b mr=f access=local_write,remote_write
            poll cq_b
            expect SUCCESS
            expect f.valid == 1
            expect f.lkey == key0+1
            expect f.rkey == f.lkey
            expect f.index == key0/256
            expect nic_b.sim_fast_registrations == 1
            show mr f
            write src "fast"
            post write qp_a sgl=mr_src:4 remote=f+4K
            poll cq_a
            expect SUCCESS
            expect bytes dst+12K "fast"
            post local_inv qp_b rkey=f.rkey
            poll cq_b
            expect SUCCESS
            expect f.valid == 0
            post reg_mr qp_b mr=f key=f.index*256+0x77 access=local_write
            poll cq_b
            expect SUCCESS
            expect f.variant == 0x77
            dereg f
            expect ok
            expect f.closed == 1
            dereg f
            expect EINVAL
            """);

        assertThat(r.out()).containsPattern("fastmr f: key=0x[0-9a-f]{8} \\(index \\d+, variant \\d+\\), MTT room for "
            + "4 pages; INVALID until a REG_MR completes");
        assertThat(r.out()).contains("4 pages of 4 KiB mapped and pinned at 0x");
        assertThat(r.out()).containsPattern("posted wr_id=\\d+ \\(REG_MR of 16 KiB at 0x[0-9a-f]+, key 0x[0-9a-f]{8} "
            + "-> 0x[0-9a-f]{8}, access \\[LOCAL_WRITE, REMOTE_WRITE\\]\\)");
        assertThat(r.out()).contains("INVALID, no pages mapped").contains("VALID, mapped 0x")
            .contains("opcode=REG_MR");
    }

    static Stream<Arguments> fastRegFailures()
    {
        return Stream.of(
            Arguments.of("no pages", "fastmr f pd_b 0", "EINVAL"),
            Arguments.of("more pages than room", "fastmr f pd_b 2\nmap f dst 12K", "EINVAL"),
            Arguments.of("zero length", "fastmr f pd_b 2\nmap f dst 0", "EINVAL"),
            Arguments.of("unmapped memory", "fastmr f pd_b 2\nmunmap dst+60K 4K\nmap f dst+60K 4K", "EFAULT"),
            Arguments.of("mapped while valid", "fastmr f pd_b 2\nmap f dst 4K\npost reg_mr qp_b mr=f\npoll cq_b\n"
                + "expect SUCCESS\nmap f dst+4K 4K", "EINVAL"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fastRegFailures")
    void fastRegistrationVerbsShouldFailWithTheirErrno(final String what, final String lines, final String errno)
    {
        ok(TWO_HOSTS + lines + "\nexpect " + errno + "\n");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"no pages mapped", "key of another index", "valid already", "QP of another PD"})
    void regMrThatTheDeviceRefusesShouldCompleteWithLocQpOpErr(final String what)
    {
        final String lines = switch (what)
        {
            case "no pages mapped" -> "fastmr f pd_b 2\npost reg_mr qp_b mr=f";
            case "key of another index" -> "fastmr f pd_b 2\nmap f dst 4K\npost reg_mr qp_b mr=f key=f.lkey+256";
            case "valid already" -> "fastmr f pd_b 2\nmap f dst 4K\npost reg_mr qp_b mr=f unsignaled\n"
                + "post reg_mr qp_b mr=f";
            default -> "pd pd_b2 app_b\nfastmr f pd_b2 2\nmap f dst 4K\npost reg_mr qp_b mr=f";
        };
        final ScriptRun r = ok(TWO_HOSTS + lines + "\npoll cq_b\nexpect LOC_QP_OP_ERR\nexpect f.valid == " + (what.equals(
            "valid already") ? 1 : 0) + "\n");

        assertThat(r.out()).contains("the device refused it: ");
    }

    // ------------------------------------------------------------------ malformed scripts

    static Stream<Arguments> malformed()
    {
        return Stream.of(
            Arguments.of("local_inv without rkey", "post local_inv qp_b", "post local_inv needs rkey=KEY"),
            Arguments.of("send_inv without rkey", "post send_inv qp_a sgl=mr_src:4", "post send_inv needs rkey=KEY"),
            Arguments.of("reg_mr without mr", "post reg_mr qp_b", "post reg_mr needs mr=FASTMR"),
            Arguments.of("reg_mr of a user MR", "post reg_mr qp_b mr=mr_dst",
                "'mr_dst' is an MR; expected the name of a fast-registration MR"),
            Arguments.of("mr= on a write", "fastmr f pd_b 2\npost write qp_a sgl=mr_src:4 remote=f mr=f",
                "option 'mr' is for post reg_mr, not post write"),
            Arguments.of("write without remote", "post write qp_a sgl=mr_src:4", "post write needs remote=ADDR"),
            Arguments.of("reg_mr with an SGL", "fastmr f pd_b 2\npost reg_mr qp_b mr=f sgl=mr_dst:4K",
                "post reg_mr runs on the local device and moves no data: it takes no sgl= (its pages come from 'map')"),
            Arguments.of("local_inv with a remote address", "post local_inv qp_b rkey=1 remote=mr_dst",
                "post local_inv runs on the local device and moves no data: it takes no remote="),
            Arguments.of("bind of an MR", "bind mr_dst qp_b mr_dst", "'mr_dst' is an MR; expected the name of an MW"),
            Arguments.of("bind without an MR", "mw w pd_b\nbind w qp_b", "expected: " + Spec.VERBS.get("bind")
                .usage()),
            Arguments.of("bad window type", "mw w pd_b type=two", "type=two: the window type is a number"),
            Arguments.of("bad window field", "mw w pd_b\nexpect w.lkey == 0", "'w.lkey': an MW has the fields ["),
            Arguments.of("bad fastmr field", "fastmr f pd_b 2\nexpect f.page_size == 0",
                "'f.page_size': a fast-registration MR has the fields ["),
            Arguments.of("map of a user MR", "map mr_dst dst 4K",
                "'mr_dst' is an MR; expected the name of a fast-registration MR"),
            Arguments.of("rereg with an unknown option", "rereg mr_dst length=4K", "'rereg' has no option 'length'"),
            Arguments.of("show of an unknown view", "show mwx mr_dst", "'mwx' is not one of"),
            Arguments.of("unknown last field", "expect last.rereg == NONE", "'last.rereg': last has the fields"),
            Arguments.of("close of a buffer", "close dst", "'dst' is a buffer; expected the name of "),
            Arguments.of("type 1 bind with rkey after type 2 rebinding", "mw w pd_b type=2\nmw w pd_b\n"
                + "bind w qp_b mr_dst rkey=1", "'w' is a type 1 window"));
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
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void type2BindWithRkeyAfterAType1NameWasReboundShouldBeAllowed()
    {
        ok(TWO_HOSTS + """
            mw w pd_b
            mw w pd_b type=2
            bind w qp_b mr_dst rkey=0x10
            poll cq_b
            expect SUCCESS
            expect w.variant == 0x10
            """);
    }

    // ------------------------------------------------------------------ determinism and figures

    @Test
    void sameWindowScriptRunTwiceShouldPrintTheSameOutput()
    {
        final String script = TWO_HOSTS + """
            mw w pd_b type=2
            bind w qp_b mr_dst
            show mw w
            show mr mr_dst
            post local_inv qp_b rkey=w.rkey
            rereg mr_dst access=local_write
            show clock
            """;

        assertThat(ok(script).out()).isEqualTo(ok(script).out());
    }

    @Test
    void everyBindAndInvalidationShouldAdvanceTheClockByAnInvalidationStall()
    {
        final ScriptRun r = ok(TWO_HOSTS + """
            mw w pd_b type=2
            let t0 now
            bind w qp_b mr_dst unsignaled
            let bind_ns now-t0
            let t1 now
            post local_inv qp_b rkey=w.rkey unsignaled
            let inv_ns now-t1
            expect bind_ns > 0
            expect inv_ns > 0
            expect nic_b.sim_key_invalidations == 2
            """);
        final Matcher m = Pattern.compile("(?m)^    bind_ns = (\\d+)").matcher(r.out());

        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).isGreaterThanOrEqualTo(dev.rnicsim.simnic.CostModel.defaults()
            .invalidationStallNs());
    }
}
