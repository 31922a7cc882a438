package dev.rnicsim.hwnic;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Compiles and runs small C programs against the installed headers, for the tests that compare the Java layouts
 * with C. {@link #orSkip(Path)} skips the test, with the reason, when gcc or {@code <infiniband/verbs.h>} is missing
 * (the programs need no libibverbs at run time: they only use sizes, offsets, constants and struct initialisers).
 */
final class CProgram
{
    private static final long TIMEOUT_SECONDS = 120;

    private final Path gcc;
    private final Path dir;

    /**
     * The output of a command.
     *
     * @param exit   its exit status (-1 when it timed out).
     * @param output standard output and error.
     */
    record Run(int exit, String output)
    {
    }

    private CProgram(final Path gcc, final Path dir)
    {
        this.gcc = gcc;
        this.dir = dir;
    }

    /**
     * @param dir a temporary directory.
     * @return a compiler ready for verbs.h; the test is skipped when there is none.
     * @throws IOException when the directory cannot be written.
     * @throws InterruptedException when interrupted waiting for gcc.
     */
    static CProgram orSkip(final Path dir) throws IOException, InterruptedException
    {
        final Path gcc = onPath("gcc");
        assumeTrue(gcc != null, "gcc is not on PATH: this test compiles a C program against the libibverbs headers "
            + "(install gcc)");
        final CProgram c = new CProgram(gcc, dir);
        final Path probe = dir.resolve("probe.c");
        Files.writeString(probe, "#include <infiniband/verbs.h>\nint main(void) { return 0; }\n");
        final Run probeRun = c.run(List.of(gcc.toString(), "-fsyntax-only", probe.toString()));
        assumeTrue(probeRun.exit() == 0, "gcc cannot compile #include <infiniband/verbs.h>: the libibverbs headers "
            + "are not installed (Debian/Ubuntu: libibverbs-dev; RHEL/Fedora: rdma-core-devel; .ci/run installs "
            + "them when it runs as root). gcc said: " + probeRun.output().strip());
        return c;
    }

    /**
     * @param name   the program's name.
     * @param source its C source.
     * @return gcc's result; the binary is {@code dir/name} when the exit status is 0.
     * @throws IOException when the source cannot be written.
     * @throws InterruptedException when interrupted.
     */
    Run compile(final String name, final String source) throws IOException, InterruptedException
    {
        final Path file = dir.resolve(name + ".c");
        Files.writeString(file, source, StandardCharsets.UTF_8);
        return run(List.of(gcc.toString(), "-std=gnu11", "-O0", "-o", dir.resolve(name).toString(), file.toString()));
    }

    /**
     * @param name a program compiled with {@link #compile}.
     * @return its result.
     * @throws IOException when it cannot be started.
     * @throws InterruptedException when interrupted.
     */
    Run execute(final String name) throws IOException, InterruptedException
    {
        return run(List.of(dir.resolve(name).toString()));
    }

    private Run run(final List<String> command) throws IOException, InterruptedException
    {
        final Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        final byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS))
        {
            p.destroyForcibly();
            return new Run(-1, command + " did not finish in " + TIMEOUT_SECONDS + " s");
        }
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    private static Path onPath(final String program)
    {
        final String path = System.getenv("PATH");
        if (path == null)
        {
            return null;
        }
        for (final String d : path.split(File.pathSeparator))
        {
            final Path candidate = Path.of(d, program);
            if (Files.isExecutable(candidate))
            {
                return candidate;
            }
        }
        return null;
    }
}
