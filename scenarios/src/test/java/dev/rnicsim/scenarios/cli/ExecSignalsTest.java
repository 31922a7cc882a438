package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM, SIGINT or SIGHUP to the {@code rnicsim exec} that started a fabric ends its program and the processes the
 * program started, writes the fabric's trace and ends the run with 128 + the signal, as a shell reports a command
 * ended by that signal; a program that catches it ends the run with its own status. The run is a JVM of its own (this test's class path), so that the signal reaches only it.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ExecSignalsTest
{
    @TempDir
    Path dir;

    /**
     * Starts {@code rnicsim exec --trace TRACE -- sh -c SCRIPT} in a JVM of its own, and returns once the program has
     * written its process id to {@code pid}.
     */
    private Process startRun(final Path trace, final Path err, final Path pid, final String script) throws Exception
    {
        LibraryRequired.require();
        // env resets the three to their default first: a shell without job control starts a command run with '&'
        // with SIGINT ignored, and an ignored signal stays ignored (the JVM cannot catch it); so for the program's
        // own child in the scripts
        final Process run = new ProcessBuilder("env", "--default-signal=INT,TERM,HUP",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Rnicsim.class.getName(),
            "exec", "--trace", trace.toString(), "--",
            "sh", "-c", "echo $$ > '" + pid + ".new'; mv '" + pid + ".new' '" + pid + "'; " + script)
            .redirectOutput(dir.resolve("out.txt").toFile()).redirectError(err.toFile()).start();
        while (!Files.exists(pid) && run.isAlive())
        {
            LockSupport.parkNanos(20_000_000L); // until the program runs
        }
        assertThat(run.isAlive()).as("the run is up: %s", Files.readString(err)).isTrue();
        return run;
    }

    @Test
    void aProgramThatCatchesTheSignalShouldEndTheRunWithItsOwnStatus() throws Exception
    {
        final Path pid = dir.resolve("pid");
        final Path trace = dir.resolve("trace.json");
        final Path err = dir.resolve("err.txt");
        final Process run = startRun(trace, err, pid, "trap 'exit 7' TERM; while :; do sleep 1; done");
        try
        {
            assertThat(new ProcessBuilder("sh", "-c", "kill -s TERM " + run.pid()).start().waitFor()).isZero();
            assertThat(run.waitFor()).as("as a shell's $? after the program: its own status")
                .as(Files.readString(err)).isEqualTo(7);
            assertThat(Files.readString(trace)).as("the fabric's trace is written").contains("\"traceEvents\"");
            assertThat(Files.readString(err)).doesNotContain("rnicsim exec:");
        }
        finally
        {
            run.destroyForcibly();
            ProcessHandle.of(Long.parseLong(Files.readString(pid).strip())).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Whether a process runs: it exists and is no zombie (an orphan's end waits for a reaper this test cannot be). */
    private static boolean running(final long pid) throws IOException
    {
        final Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (!Files.exists(stat))
        {
            return false;
        }
        try
        {
            final String s = Files.readString(stat);
            return s.charAt(s.lastIndexOf(')') + 2) != 'Z';
        }
        catch (final java.nio.file.NoSuchFileException e)
        {
            return false;
        }
    }

    @ParameterizedTest
    @CsvSource({"TERM, 15, Terminated", "INT, 2, ", "HUP, 1, Hangup"})
    void aSignalShouldReachTheProgramAndLeaveAWrittenTrace(final String signal, final int number, final String said)
        throws Exception
    {
        final Path pid = dir.resolve("pid");
        final Path child = dir.resolve("child");
        final Path trace = dir.resolve("trace.json");
        final Path err = dir.resolve("err.txt");
        final Process run = startRun(trace, err, pid, "env --default-signal=INT sleep 600 & echo $! > '" + child
            + "'; wait");
        try
        {
            final long programPid = Long.parseLong(Files.readString(pid).strip());
            assertThat(new ProcessBuilder("sh", "-c", "kill -s " + signal + " " + run.pid()).start().waitFor()).isZero();
            assertThat(run.waitFor()).as(Files.readString(err)).isEqualTo(128 + number);
            assertThat(ProcessHandle.of(programPid).map(ProcessHandle::isAlive).orElse(false))
                .as("the program ended with its run").isFalse();
            final long childPid = Long.parseLong(Files.readString(child).strip());
            final long deadlineNs = System.nanoTime() + 30_000_000_000L;
            while (running(childPid) && System.nanoTime() < deadlineNs)
            {
                LockSupport.parkNanos(20_000_000L); // a signal is delivered when the process is next scheduled
            }
            assertThat(running(childPid)).as("the program's own child (sleep 600) got the signal too").isFalse();
            assertThat(Files.readString(trace)).as("the fabric's trace is written").contains("\"traceEvents\"");
            if (said == null)
            {
                assertThat(Files.readString(err)).as("a shell says nothing of an interrupt")
                    .doesNotContain("rnicsim exec:").doesNotContain("Exception");
            }
            else
            {
                assertThat(Files.readString(err)).contains("rnicsim exec: sh: " + said + " (")
                    .contains("signal " + number + ")").doesNotContain("Exception");
            }
        }
        finally
        {
            run.destroyForcibly();
            for (final Path f : new Path[] {pid, child})
            {
                if (Files.exists(f) && !Files.readString(f).isBlank())
                {
                    ProcessHandle.of(Long.parseLong(Files.readString(f).strip())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        }
    }
}
