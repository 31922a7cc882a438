package dev.rnicsim.verbs.strategy;

import java.util.function.Consumer;

/** Releases every item of a collection even when some releases fail: the first failure is thrown at the end. */
final class Release
{
    private Release()
    {
    }

    /**
     * @param items   what to release.
     * @param release the release of one item.
     * @param <T>     the item type.
     * @throws RuntimeException the first failure, after every item was tried.
     */
    static <T> void each(final Iterable<T> items, final Consumer<T> release)
    {
        RuntimeException failure = null;
        for (final T item : items)
        {
            try
            {
                release.accept(item);
            }
            catch (final RuntimeException e)
            {
                if (failure == null)
                {
                    failure = e;
                }
            }
        }
        if (failure != null)
        {
            throw failure;
        }
    }
}
