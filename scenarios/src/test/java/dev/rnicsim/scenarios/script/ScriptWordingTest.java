package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The runner's wording: nouns in the number of their count, an errno said once, a hint for a mistyped verb. */
class ScriptWordingTest
{
    @Test
    void countsOfOneShouldBeSingular()
    {
        final ScriptRun r = ScriptRun.ok("w.rsim", ScriptRun.TWO_CONNECTED_HOSTS + """
            mmap one app_a 4K
            touch one 4K write
            reg r1 pd_a one 4K
            dereg r1
            mmap two app_a 8K
            touch two 8K write
            """);
        assertThat(r.out()).contains("1 page faulted in", "1 MTT entry (", "1 page pinned", "1 page unpinned",
            "1 MTT entry zapped", "2 pages faulted in").doesNotContain("1 pages", "1 MTT entries");
        assertThat(Units.count(0, "MTT entry", "MTT entries")).isEqualTo("0 MTT entries");
    }

    @Test
    void aFailureLineShouldSayItsErrnoOnce()
    {
        final ScriptRun r = ScriptRun.ok("w.rsim", ScriptRun.TWO_CONNECTED_HOSTS + """
            mmap b app_a 64K
            reg m pd_a b 0
            expect EINVAL
            """);
        assertThat(r.out()).contains("-> EINVAL: ibv_reg_mr: lengthBytes=0").doesNotContain("EINVAL: ibv_reg_mr: EINVAL");
    }

    @Test
    void aMistypedVerbShouldGetItsNearestVerb()
    {
        assertThatThrownBy(() -> ScriptRun.run("w.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "dereq mr0\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("unknown verb 'dereq'; did you mean 'dereg'?");
        assertThatThrownBy(() -> ScriptRun.run("w.rsim", ScriptRun.TWO_CONNECTED_HOSTS + "frobnicate mr0\n"))
            .hasMessageContaining("unknown verb 'frobnicate'; verbs: ").hasMessageNotContaining("did you mean");
        assertThat(DidYouMean.distance("mmpa", "mmap")).as("a swap is one edit").isEqualTo(1);
    }
}
