package dev.rnicsim.verbs;

import java.util.Collection;
import java.util.List;

/**
 * The null checks of the API's value objects: a null where a value is required is the caller's mistake, answered with
 * an {@link IllegalArgumentException} that names the argument and what to pass instead, never with a bare
 * {@link NullPointerException} from deep inside. Stateless.
 */
final class Given
{
    private Given()
    {
    }

    /**
     * @param value the argument.
     * @param name  its name.
     * @param fix   what to pass instead.
     * @return the argument.
     * @throws IllegalArgumentException when it is null.
     */
    static <T> T required(final T value, final String name, final String fix)
    {
        if (value == null)
        {
            throw new IllegalArgumentException(name + " is null; " + fix);
        }
        return value;
    }

    /**
     * @param values the argument, a collection none of whose elements may be null.
     * @param name   its name.
     * @param fix    what to pass instead.
     * @return an unmodifiable copy, in order.
     * @throws IllegalArgumentException when it or an element is null.
     */
    static <T> List<T> list(final Collection<T> values, final String name, final String fix)
    {
        int i = 0;
        for (final T v : required(values, name, fix))
        {
            if (v == null)
            {
                throw new IllegalArgumentException(name + " holds null at position " + i + "; " + fix);
            }
            i++;
        }
        return List.copyOf(values);
    }
}
