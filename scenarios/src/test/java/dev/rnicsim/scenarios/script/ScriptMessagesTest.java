package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Values that mean nothing are refused before anything runs, with the option and the word to use instead; a line
 * that could not run later is found while checking; running out of heap names the line and how to give more.
 */
class ScriptMessagesTest
{
    private static ScriptRun run(final String text)
    {
        return ScriptRun.run("m.rsim", text);
    }

    @Test
    void negativeMemlockShouldBeRefusedNamingUnlimited()
    {
        assertThatThrownBy(() -> run("host alpha ram=256M memlock=-1\n")).isInstanceOf(ScriptException.class)
            .hasMessageContaining("m.rsim:1: memlock= is -1: negative values mean nothing here; for no limit write "
                + "memlock=unlimited");
    }

    @Test
    void negativeSizesPagesAndKeysShouldBeRefusedBeforeAnythingRuns()
    {
        final String head = ScriptRun.TWO_CONNECTED_HOSTS + "mmap b app_a 64K\nreg m pd_a b 64K\n";

        assertThatThrownBy(() -> run(head + "touch b -1\n")).isInstanceOf(ScriptException.class)
            .hasMessageContaining("m.rsim:16: argument 2 is -1: negative values mean nothing here");
        assertThatThrownBy(() -> run(head + "reclaim alpha -4K\n")).hasMessageContaining("argument 2 is -4K");
        assertThatThrownBy(() -> run(head + "post write qp_a sgl=m:8 remote=b rkey=-1\n"))
            .hasMessageContaining("rkey= is -1");
        assertThatThrownBy(() -> run(head + "post write qp_a sgl=b:8:-1 remote=m\n"))
            .hasMessageContaining("SGE 'b:8:-1' is -1");
    }

    @Test
    void aNegativeLetValueStaysLegal()
    {
        final ScriptRun r = ScriptRun.ok("m.rsim", "let sentinel -1\nexpect sentinel == 0-1\n");

        assertThat(r.out()).contains("expect sentinel == 0-1: held");
    }

    @Test
    void negativeAtomicOperandsStayLegal()
    {
        final ScriptRun r = ScriptRun.ok("m.rsim", ScriptRun.TWO_CONNECTED_HOSTS + """
            mmap a app_a 4K
            mmap b app_b 4K
            reg ma pd_a a 4K
            reg mb pd_b b 4K access=local_write,remote_write,remote_atomic
            post faa qp_a sgl=ma:8 remote=mb add=-1
            poll cq_a
            expect SUCCESS
            """);

        assertThat(r.out()).contains("IBV_WC_SUCCESS");
    }

    @Test
    void repeatZeroShouldBindNothingSoALaterUseIsMalformedBeforeAnythingRuns()
    {
        assertThatThrownBy(() -> run("host h ram=256M\nprocess p h\nrepeat 0 mmap b p 4K\ntouch b 4K\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("m.rsim:4: 'b' is neither a number")
            .hasMessageContaining("nor a name defined by an earlier line");
        assertThatThrownBy(() -> run("host h ram=256M\nprocess p h\nrepeat 0\n  mmap b p 4K\nend\ntouch b 4K\n"))
            .isInstanceOf(ScriptException.class).hasMessageContaining("m.rsim:6: 'b' is neither a number");
    }

    @Test
    void repeatedCreationOfAHostShouldBeMalformed()
    {
        assertThatThrownBy(() -> run("repeat 2 host h ram=256M\n")).isInstanceOf(ScriptException.class)
            .hasMessageContaining("m.rsim:1: 'repeat 2' (line 1) would create host 'h' 2 times");
        assertThatThrownBy(() -> run("host a ram=256M\nrepeat 3\n  device d a profile=rxe\nend\n"))
            .isInstanceOf(ScriptException.class)
            .hasMessageContaining("m.rsim:3: 'repeat 3' (line 2) would create device 'd' 3 times");
    }

    @Test
    void outOfHeapShouldNameTheLineWhatWasSimulatedAndHowToGiveMoreHeap()
    {
        final Session s = new Session(Path.of("."));
        s.fabric.addHost("alpha");
        final ScriptLine l = ScriptParser.statement("big.rsim", 7, "touch buf 512G write");

        final String why = ScriptRunner.outOfMemory(s, l, 6, new OutOfMemoryError("Java heap space"));

        assertThat(why).contains("big.rsim:7: out of Java heap (Java heap space) in step 6 ('touch buf 512G write')")
            .contains("pages").contains("0 MRs live").contains("RNICSIM_JAVA_OPTS=-Xmx8g ./rnicsim");
    }
}
