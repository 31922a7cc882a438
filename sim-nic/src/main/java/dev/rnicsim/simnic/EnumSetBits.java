package dev.rnicsim.simnic;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * The bits of the enum sets a verb is given again and again (the masks and rights of {@code ibv_modify_qp}): the
 * last set seen of each size and its bits, so that a set equal to it (an {@link EnumSet} compares with another in
 * one step) is not walked again. A set of another kind is answered right, only not faster. Thread safe: a slot holds
 * an immutable entry, replaced whole; two threads at worst both compute the bits.
 *
 * @param <E> the enum.
 */
final class EnumSetBits<E extends Enum<E>>
{
    /** A set as it was seen (a copy no caller holds) and its bits. */
    private record Entry(Set<?> set, long bits)
    {
    }

    private final Class<E> type;
    private final ToLongFunction<Set<E>> bitsOf;
    private final Entry[] bySize;

    /**
     * @param type   the enum.
     * @param bitsOf the bits of a set, as the caller defines them.
     */
    EnumSetBits(final Class<E> type, final ToLongFunction<Set<E>> bitsOf)
    {
        this.type = type;
        this.bitsOf = bitsOf;
        this.bySize = new Entry[type.getEnumConstants().length + 1];
    }

    /**
     * @param set a set of the enum's constants, without null.
     * @return its bits.
     */
    long of(final Set<E> set)
    {
        final int size = set.size();
        if (size >= bySize.length)
        {
            return bitsOf.applyAsLong(set);
        }
        final Entry e = bySize[size];
        if (e != null && set.equals(e.set()))
        {
            return e.bits();
        }
        final long bits = bitsOf.applyAsLong(set);
        bySize[size] = new Entry(size == 0 ? EnumSet.noneOf(type) : EnumSet.copyOf(set), bits);
        return bits;
    }
}
