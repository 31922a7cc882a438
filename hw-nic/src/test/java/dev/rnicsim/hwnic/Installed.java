package dev.rnicsim.hwnic;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.VerbsException;

/**
 * Skips a test, with the reason, when libibverbs is not installed on this machine (a CI host without rdma-core).
 */
final class Installed
{
    private Installed()
    {
    }

    /**
     * @return the process's libibverbs binding; the test is skipped when it cannot be loaded.
     */
    static Libibverbs libibverbsOrSkip()
    {
        try
        {
            return Libibverbs.system();
        }
        catch (final VerbsException e)
        {
            assumeTrue(false, "libibverbs is not installed here: " + e.getMessage());
            throw e;
        }
    }
}
