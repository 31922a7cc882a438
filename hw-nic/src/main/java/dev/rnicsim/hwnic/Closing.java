package dev.rnicsim.hwnic;

import java.util.ArrayList;
import java.util.Collection;
import java.util.function.Consumer;

/**
 * Closes children before their parent and keeps going when one fails: the first failure is rethrown at the end
 * with the others attached as suppressed.
 *
 * <p>Stateless and thread safe.
 */
final class Closing
{
    private Closing()
    {
    }

    /**
     * @param children the children (copied first: closing removes them from the collection).
     * @param close    closes one.
     * @param failure  the failure so far, or null.
     * @param <T>      the child type.
     * @return the first failure, with later ones suppressed, or null.
     */
    static <T> RuntimeException each(final Collection<T> children, final Consumer<T> close,
        final RuntimeException failure)
    {
        RuntimeException first = failure;
        for (final T child : new ArrayList<>(children))
        {
            try
            {
                close.accept(child);
            }
            catch (final RuntimeException e)
            {
                if (first == null)
                {
                    first = e;
                }
                else
                {
                    first.addSuppressed(e);
                }
            }
        }
        return first;
    }
}
