package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The fork-support and base-page forms of the script language: {@code env=} on process and open (read by
 * libibverbs' ibverbs_init: RDMAV_FORK_SAFE, IBV_FORK_SAFE, RDMAV_HUGEPAGES_SAFE), {@code forkinit} (ibv_fork_init
 * and its errno), {@code show forkinit} (ibv_is_fork_initialized), {@code host page=} and {@code touch process=},
 * each staging a field case with the errno the reports show.
 */
class ScriptForkTest
{
    @Test
    void envForkSafeMadvisesRegistrationsAndShowForkinitSaysSo()
    {
        final ScriptRun r = ScriptRun.ok("fork.rsim", """
            host h ram=256M fork=legacy
            device nic h
            process app h env=RDMAV_FORK_SAFE=1,RDMAV_HUGEPAGES_SAFE=1
            open ctx nic process=app
            pd pd ctx
            mmap buf app 64K
            reg m pd buf+8K 4K
            expect app.vmas == 3
            show forkinit app
            dereg m
            expect app.vmas == 1
            """);
        assertThat(r.out()).contains("env RDMAV_FORK_SAFE=1,RDMAV_HUGEPAGES_SAFE=1")
            .contains("IBV_FORK_ENABLED").contains("the page size of their VMA (RDMAV_HUGEPAGES_SAFE)")
            .contains("MADV_DONTFORK calls 1");
    }

    @Test
    void forkinitAfterARegistrationIsEinvalAndBeforeItIsZero()
    {
        final ScriptRun r = ScriptRun.ok("late.rsim", """
            host h ram=256M fork=legacy
            device nic h
            open early nic
            forkinit early
            expect ok
            open late nic
            pd pd late
            mmap buf late 4K
            reg m pd buf 4K
            forkinit late
            expect EINVAL
            """);
        assertThat(r.out()).contains("ibv_fork_init() = 0").contains("too late");
    }

    @Test
    void aModernHostAnswersUnneeded()
    {
        final ScriptRun r = ScriptRun.ok("modern.rsim", """
            host h ram=256M fork=modern
            device nic h
            open ctx nic env=RDMAV_FORK_SAFE=1
            show forkinit ctx
            """);
        assertThat(r.out()).contains("IBV_FORK_UNNEEDED");
    }

    @Test
    void hugetlbMemoryCutByAForkSafeRegistrationIsEinvalUnlessHugepagesSafe()
    {
        ScriptRun.ok("hugetlb.rsim", """
            host h ram=256M fork=legacy hugepages2m=4
            device nic h
            open unsafe nic env=RDMAV_FORK_SAFE=1
            pd pd unsafe
            mmap huge unsafe 2M backing=2m
            reg m pd huge+4K 4K
            expect EINVAL
            expect unsafe.pinned_vm == 0
            open safe nic env=RDMAV_FORK_SAFE=1,RDMAV_HUGEPAGES_SAFE=1
            pd pd2 safe
            mmap huge2 safe 2M backing=2m
            reg m2 pd2 huge2+4K 4K
            expect ok
            """);
    }

    @Test
    void aChildOfA64KiBPageHostSegfaultsBesideARegisteredBuffer()
    {
        final ScriptRun r = ScriptRun.ok("arm.rsim", """
            host arm ram=256M fork=legacy page=64k
            device nic arm
            open ctx nic env=RDMAV_FORK_SAFE=1
            pd pd ctx
            mmap heap ctx 128K
            reg rx pd heap 4K
            expect rx.pinned_pages == 1
            expect ctx.pinned_vm_bytes == 64K
            fork child ctx
            touch heap+32K 1 process=child
            expect EFAULT
            touch heap+64K 1 process=child
            expect ok
            """);
        assertThat(r.out()).contains("base page 64 KiB").contains("SIGSEGV");
    }

    @Test
    void badEnvAndPageWordsAreRefusedWithTheirForm()
    {
        assertThatThrownBy(() -> ScriptRun.run("env.rsim", """
            host h ram=256M
            process app h env==1
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("env=VAR=VALUE");
        assertThatThrownBy(() -> ScriptRun.run("page.rsim", """
            host h ram=256M page=8k
            """)).isInstanceOf(ScriptException.class).hasMessageContaining("16k");
        final ScriptRun pools = ScriptRun.run("pools.rsim", """
            host h ram=2G page=64k hugepages1g=1
            expect EINVAL
            """);
        assertThat(pools.result().exitCode()).as(pools.out()).isZero();
    }

    @Test
    void aReregWhoseNewRangeCannotBeMadvisedIsErrDontForkNewAndKeepsTheMr()
    {
        // verbs.c ibv_rereg_mr: IBV_REREG_MR_ERR_DONT_FORK_NEW when ibv_dontfork_range fails; the old MR stays.
        final ScriptRun r = ScriptRun.ok("rereg.rsim", """
            host h ram=256M fork=legacy max_map_count=3
            device nic h
            open ctx nic env=RDMAV_FORK_SAFE=1
            pd pd ctx
            mmap buf ctx 64K
            reg m pd buf 4K
            rereg m addr=buf+32K size=4K
            expect EAGAIN
            expect m.closed == 0
            expect m.addr == buf
            """);
        assertThat(r.out()).contains("IBV_REREG_MR_ERR_DONT_FORK_NEW").contains("still valid");
    }
}
