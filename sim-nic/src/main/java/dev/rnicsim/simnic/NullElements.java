package dev.rnicsim.simnic;

import java.util.Collection;

/** Whether a caller's collection holds null, asked by a loop: the verbs ask it on every call that takes a set. */
final class NullElements
{
    private NullElements()
    {
    }

    /**
     * @param elements a collection (not null).
     * @return true when one of its elements is null.
     */
    static boolean any(final Collection<?> elements)
    {
        for (final Object e : elements)
        {
            if (e == null)
            {
                return true;
            }
        }
        return false;
    }
}
