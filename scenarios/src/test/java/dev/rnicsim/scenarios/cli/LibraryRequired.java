package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.ibverbs.ProgramRunner;
import java.io.IOException;

/** The C library that {@code rnicsim exec} puts before a program: its tests need it built. */
final class LibraryRequired
{
    private LibraryRequired()
    {
    }

    /**
     * Skips the test when the library cannot be built here (no gcc or no libibverbs headers), and fails it instead
     * under {@code CI=true}, where {@code .ci/run} has installed them.
     */
    static void require()
    {
        try
        {
            ProgramRunner.libraryDir();
        }
        catch (final IOException e)
        {
            if ("true".equals(System.getenv("CI")))
            {
                fail(e.getMessage());
            }
            assumeTrue(false, e.getMessage());
        }
    }
}
