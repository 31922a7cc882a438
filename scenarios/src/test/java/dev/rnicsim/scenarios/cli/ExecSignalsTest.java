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
        return startRun(trace, err, pid, ":", script);
    }

    /**
     * As {@link #startRun(Path, Path, Path, String)}, the shell running {@code setUp} (a trap, say) before it writes
     * its process id: a signal sent once the id is there finds the set-up done.
     */
    private Process startRun(final Path trace, final Path err, final Path pid, final String setUp, final String script)
        throws Exception
    {
        LibraryRequired.require();
        // env resets the three to their default first: a shell without job control starts a command run with '&'
        // with SIGINT ignored, and an ignored signal stays ignored (the JVM cannot catch it); so for the program's
        // own child in the scripts
        final Process run = new ProcessBuilder("env", "--default-signal=INT,TERM,HUP",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), Rnicsim.class.getName(),
            "exec", "--trace", trace.toString(), "--",
            "sh", "-c", setUp + "; echo $$ > '" + pid + ".new'; mv '" + pid + ".new' '" + pid + "'; " + script)
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
        final Process run = startRun(trace, err, pid, "trap 'exit 7' TERM", "while :; do sleep 1; done");
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

    /**
     * A program that keeps starting processes when the signal comes: each it started gets the signal too, those
     * forked while the run was sending it as well (the run stops the whole tree before it signals it). SIGTERM: a shell without job control starts
     * its commands with SIGINT ignored, and one that has not yet reset it would rightly stay.
     */
    @Test
    void aSignalShouldReachTheChildrenAProgramStartsWhileItIsSent() throws Exception
    {
        final Path pid = dir.resolve("pid");
        final Path children = dir.resolve("children");
        final Path trace = dir.resolve("trace.json");
        final Path err = dir.resolve("err.txt");
        // four subshells each start a sleep every 10 ms or so (at most 400): some start while the run sends the signal
        final Process run = startRun(trace, err, pid, "for i in 1 2 3 4; do (j=0; while [ $j -lt 400 ]; do sleep 0.01; "
            + "sleep 600 & echo $! >> '" + children + "'; j=$((j + 1)); done; wait) & done; wait");
        try
        {
            while ((!Files.exists(children) || Files.readAllLines(children).size() < 20) && run.isAlive())
            {
                LockSupport.parkNanos(20_000_000L); // until the program has started a few
            }
            assertThat(new ProcessBuilder("sh", "-c", "kill -s TERM " + run.pid()).start().waitFor()).isZero();
            assertThat(run.waitFor()).as(Files.readString(err)).isEqualTo(128 + 15);
            final long deadlineNs = System.nanoTime() + 30_000_000_000L;
            for (final String line : Files.readAllLines(children))
            {
                final long childPid = Long.parseLong(line.strip());
                while (running(childPid) && System.nanoTime() < deadlineNs)
                {
                    LockSupport.parkNanos(20_000_000L); // a signal is delivered when the process is next scheduled
                }
                assertThat(running(childPid)).as("child %d of %d got the signal too", childPid,
                    Files.readAllLines(children).size()).isFalse();
            }
        }
        finally
        {
            run.destroyForcibly();
            for (final Path f : new Path[] {pid, children})
            {
                if (Files.exists(f))
                {
                    for (final String line : Files.readAllLines(f))
                    {
                        if (!line.isBlank())
                        {
                            ProcessHandle.of(Long.parseLong(line.strip())).ifPresent(ProcessHandle::destroyForcibly);
                        }
                    }
                }
            }
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
        // the child writes its own process id once SIGINT is back to its default (a shell without job control
        // starts it ignored): the run is signalled only when the child is there and can be ended by the signal
        final Process run = startRun(trace, err, pid, "env --default-signal=INT sh -c 'echo $$ > \"$1.new\"; mv \"$1.new\" "
            + "\"$1\"; exec sleep 600' child '" + child + "' & wait");
        try
        {
            while (!Files.exists(child) && run.isAlive())
            {
                LockSupport.parkNanos(20_000_000L); // until the program's child runs, as it says
            }
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
