package dev.rnicsim.simnic;

import java.util.List;
import java.util.function.Consumer;

/**
 * Closes children one after another, keeping the first failure and attaching later ones as suppressed, so that
 * one failing close does not leave the rest open.
 */
final class Closing
{
    private Closing()
    {
    }

    /** Closes each of {@code children} (a copy is taken, as closing removes a child from its parent's list). */
    static <T> RuntimeException each(final List<T> children, final Consumer<T> close, final RuntimeException failure)
    {
        if (children.isEmpty())
        {
            return failure;
        }
        RuntimeException result = failure;
        for (final T child : List.copyOf(children))
        {
            try
            {
                close.accept(child);
            }
            catch (final RuntimeException e)
            {
                result = kept(result, e);
            }
        }
        return result;
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
            return kept(failure, e);
        }
    }

    /** The first failure, with {@code e} suppressed in it; or {@code e} when it is the first. */
    private static RuntimeException kept(final RuntimeException failure, final RuntimeException e)
    {
        if (failure == null)
        {
            return e;
        }
        failure.addSuppressed(e);
        return failure;
    }
}
