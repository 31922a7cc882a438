package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.ibverbs.FabricOrigin;
import dev.rnicsim.ibverbs.ProgramRunner;
import org.junit.jupiter.api.Test;

/**
 * How {@code rnicsim exec} reports a run's end and a fabric it will not join, as a shell would.
 */
class ExecMessagesTest
{
    @Test
    void aSignalThatEndedTheProgramShouldBeNamedExceptThoseAShellLeavesUnsaid()
    {
        assertThat(ExecMessages.ended("./a.out", new ProgramRunner.Result(128 + 9, null, 0, 9)))
            .startsWith("./a.out: Killed (").endsWith("signal 9)");
        assertThat(ExecMessages.ended("./a.out", new ProgramRunner.Result(128 + 6, null, 0, 6)))
            .startsWith("./a.out: Aborted (");
        assertThat(ExecMessages.ended("./a.out", new ProgramRunner.Result(128 + 2, null, 0, 2))).as("Ctrl-C").isNull();
        assertThat(ExecMessages.ended("./a.out", new ProgramRunner.Result(128 + 13, null, 0, 13))).as("SIGPIPE").isNull();
        assertThat(ExecMessages.ended("./a.out", new ProgramRunner.Result(1, null, 0, 0))).isNull();
        assertThat(ExecMessages.ended("./a.out", new ProgramRunner.Result(128 + 9, null, 0, 0)))
            .as("a program's own exit(137) is no SIGKILL").isNull();
    }

    @Test
    void aSignalCaughtAfterTheProgramEndedShouldSaySo()
    {
        assertThat(ExecMessages.ended("ib_write_bw", new ProgramRunner.Result(0, null, 15, 0)))
            .startsWith("caught Terminated (").contains("after ib_write_bw ended (exit status 0)")
            .endsWith("ends with 143");
    }

    @Test
    void aJoinShouldBeRefusedOnlyForOtherDevicesOrATrace()
    {
        final FabricOrigin running = new FabricOrigin(42, "profile rxe (device rxe0)", null);
        assertThat(ExecMessages.joinRefusal("pp", running, null, null)).as("no device named: the fabric's").isNull();
        assertThat(ExecMessages.joinRefusal("pp", running, "profile rxe (device rxe0)", null)).isNull();
        assertThat(ExecMessages.joinRefusal("pp", running, "profile connectx5 (device mlx5_0)", null))
            .contains("fabric 'pp' is running with profile rxe (device rxe0), served by another rnicsim exec "
                + "(process 42)");
        assertThat(ExecMessages.joinRefusal("pp", new FabricOrigin(42, "profile rxe (device rxe0)", "/t/a.json"),
            null, "/t/b.json")).contains("which writes its trace to /t/a.json");
    }
}
