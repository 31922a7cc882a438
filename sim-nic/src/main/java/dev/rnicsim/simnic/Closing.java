package dev.rnicsim.simnic;

/**
 * Closes children one after another, keeping the first failure and attaching later ones as suppressed, so that
 * one failing close does not leave the rest open.
 */
final class Closing
{
    private Closing()
    {
    }

    static RuntimeException run(final Runnable close, final RuntimeException failure)
    {
        try
        {
            close.run();
            return failure;
        }
        catch (final RuntimeException e)
        {
            if (failure == null)
            {
                return e;
            }
            failure.addSuppressed(e);
            return failure;
        }
    }
}
