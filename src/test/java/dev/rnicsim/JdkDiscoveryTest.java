package dev.rnicsim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The README's commands find a JDK 25 through bin/jdk25.sh, and stop with a clear message when there is none.
 */
class JdkDiscoveryTest
{
    private Path root;

    @BeforeEach
    void findProjectRoot()
    {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("bin/jdk25.sh")))
        {
            dir = dir.getParent();
        }
        assertThat(dir).as("project root with bin/jdk25.sh").isNotNull();
        root = dir;
    }

    private record Result(int exitCode, String output)
    {
    }

    private Result runScript(final Map<String, String> env) throws IOException, InterruptedException
    {
        final ProcessBuilder pb = new ProcessBuilder("bash", "-c", ". bin/jdk25.sh && echo \"JAVA_HOME=$JAVA_HOME\"")
            .directory(root.toFile())
            .redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().put("HOME", System.getProperty("java.io.tmpdir"));
        pb.environment().putAll(env);
        final Process p = pb.start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.waitFor(), output);
    }

    @Test
    void shouldUseJavaHomeWhenItIsJdk25OrNewer() throws Exception
    {
        final String javaHome = System.getProperty("java.home");

        final Result r = runScript(Map.of("JAVA_HOME", javaHome, "PATH", "/usr/bin:/bin",
            "RNICSIM_JDK_DIRS", "/nonexistent"));

        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("JAVA_HOME=" + javaHome);
    }

    @Test
    void shouldFindJdk25InTheInstallFoldersWhenJavaHomeIsUnset() throws Exception
    {
        final Path javaHome = Path.of(System.getProperty("java.home"));

        final Result r = runScript(Map.of("PATH", "/usr/bin:/bin", "RNICSIM_JDK_DIRS",
            javaHome.getParent().toString() + "/*"));

        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("JAVA_HOME=" + javaHome);
    }

    @Test
    void shouldStopWithAClearMessageWhenNoJdk25Exists() throws Exception
    {
        final Result r = runScript(Map.of("JAVA_HOME", "/nonexistent", "PATH", "/nonexistent",
            "RNICSIM_JDK_DIRS", "/nonexistent/*"));

        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.output()).contains("needs a JDK 25 or newer and found none").contains("JAVA_HOME");
    }
}
