package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run of {@code rnicsim exec} that joins a live fabric with other fabric server settings ({@code RNICSIM_FABRIC_*})
 * than the run that started it says so on stderr, naming the setting, the fabric's value and the way to get its own.
 * The joining run is a JVM of its own (this test's class path), so that its environment differs from the host's.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ExecFabricSettingsTest
{
    @TempDir
    Path dir;

    @Test
    void aJoiningRunShouldNameTheServerSettingsItCannotChange() throws Exception
    {
        LibraryRequired.require();
        final Path go = dir.resolve("go");
        assertThat(new ProcessBuilder("mkfifo", go.toString()).start().waitFor()).isZero();
        final Path ready = dir.resolve("ready");
        final String fabric = "cli-settings-" + ProcessHandle.current().pid();
        final StringWriter hostErr = new StringWriter();
        final Thread host = Thread.ofPlatform().start(() -> Rnicsim.execute(new String[] {"exec", "--fabric", fabric,
            "--", "sh", "-c", "touch '" + ready + "'; cat '" + go + "' >/dev/null"},
            new PrintWriter(new StringWriter()), new PrintWriter(hostErr, true)));
        try
        {
            while (!Files.exists(ready) && host.isAlive())
            {
                LockSupport.parkNanos(10_000_000L); // until the host's program runs
            }
            // the join below means something only while the hosting run serves its fabric
            assertThat(ready).as("the hosting run ended before its program ran: %s", hostErr).exists();
            // a value that differs from this JVM's, whatever it is
            final String mine = "0".equals(System.getenv("RNICSIM_FABRIC_SPIN_NS")) ? "5000" : "0";
            final ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                Rnicsim.class.getName(), "exec", "--fabric", fabric, "--", "true")
                .redirectError(dir.resolve("err.txt").toFile()).redirectOutput(dir.resolve("out.txt").toFile());
            pb.environment().put("RNICSIM_FABRIC_SPIN_NS", mine);
            pb.environment().remove("RNICSIM_FABRIC_STATS");
            final Process joiner = pb.start();
            assertThat(joiner.waitFor()).as(Files.readString(dir.resolve("err.txt"))).isZero();
            final String err = Files.readString(dir.resolve("err.txt"));
            assertThat(err).contains("rnicsim exec: RNICSIM_FABRIC_SPIN_NS=" + mine + " does not apply to this run: "
                + "fabric '" + fabric + "' is served by the run that started it (process "
                + ProcessHandle.current().pid() + "), with RNICSIM_FABRIC_SPIN_NS ")
                .contains("use a new --fabric name");
            if (System.getenv("RNICSIM_FABRIC_STATS") != null)
            {
                assertThat(err).contains("RNICSIM_FABRIC_STATS unset does not apply");
            }
            else
            {
                assertThat(err).doesNotContain("RNICSIM_FABRIC_STATS");
            }
        }
        finally
        {
            if (host.isAlive())
            {
                Files.writeString(go, "go\n"); // the host's program ends
            }
            host.join();
        }
    }
}
