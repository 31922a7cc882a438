package dev.rnicsim.mtt;

import java.util.Arrays;

/**
 * A map from a {@code long} key (an MPT index, a 1 GiB slot number) to an object, open-addressed with linear
 * probing and backward-shift deletion, so that a lookup on the translation path boxes no {@code Long}. The load
 * factor stays at or under 1/2; the table only grows. Null values are not allowed.
 *
 * <p>Not thread safe.
 *
 * @param <V> the value type.
 */
final class LongMap<V>
{
    private static final int MIN_CAPACITY = 8;
    /** Fibonacci hashing multiplier (2^64 / golden ratio): spreads dense indices over the table. */
    private static final long SPREAD = 0x9E3779B97F4A7C15L;

    private long[] keys = new long[MIN_CAPACITY];
    private Object[] values = new Object[MIN_CAPACITY];
    private int shift = Long.SIZE - Integer.numberOfTrailingZeros(MIN_CAPACITY);
    private int size;

    private int slot(final long key)
    {
        return (int)((key * SPREAD) >>> shift);
    }

    private int find(final long key)
    {
        final int mask = keys.length - 1;
        for (int i = slot(key); values[i] != null; i = (i + 1) & mask)
        {
            if (keys[i] == key)
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * @param key a key.
     * @return its value, or null when absent.
     */
    @SuppressWarnings("unchecked")
    V get(final long key)
    {
        if (size == 0)
        {
            return null;
        }
        final int i = find(key);
        return i < 0 ? null : (V)values[i];
    }

    /**
     * @param key a key.
     * @return true when the key has a value.
     */
    boolean containsKey(final long key)
    {
        return size != 0 && find(key) >= 0;
    }

    /**
     * @param key   a key.
     * @param value its value, not null.
     * @return the value it replaced, or null.
     * @throws NullPointerException when {@code value} is null.
     */
    @SuppressWarnings("unchecked")
    V put(final long key, final V value)
    {
        if (value == null)
        {
            throw new NullPointerException("value");
        }
        final int mask = keys.length - 1;
        int i = slot(key);
        while (values[i] != null)
        {
            if (keys[i] == key)
            {
                final V old = (V)values[i];
                values[i] = value;
                return old;
            }
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        if (++size > keys.length >>> 1)
        {
            grow();
        }
        return null;
    }

    /**
     * @param key a key.
     * @return the value removed, or null when absent.
     */
    @SuppressWarnings("unchecked")
    V remove(final long key)
    {
        if (size == 0)
        {
            return null;
        }
        int i = find(key);
        if (i < 0)
        {
            return null;
        }
        final V old = (V)values[i];
        final int mask = keys.length - 1;
        // Backward-shift deletion: move later members of the probe run into the hole, so no tombstones are needed.
        int j = i;
        while (true)
        {
            j = (j + 1) & mask;
            if (values[j] == null)
            {
                break;
            }
            final int home = slot(keys[j]);
            // Move j to the hole at i unless its home lies cyclically in (i, j].
            if (((j - home) & mask) >= ((j - i) & mask))
            {
                keys[i] = keys[j];
                values[i] = values[j];
                i = j;
            }
        }
        values[i] = null;
        keys[i] = 0;
        size--;
        return old;
    }

    /**
     * @return the number of keys.
     */
    int size()
    {
        return size;
    }

    /**
     * @return true when there is no key.
     */
    boolean isEmpty()
    {
        return size == 0;
    }

    /**
     * @return the number of slots, for a walk with {@link #valueAt(int)}.
     */
    int slots()
    {
        return values.length;
    }

    /**
     * Walks the values: {@code for (int i = 0; i < map.slots(); i++)}, skipping nulls. The map must not change
     * during the walk.
     *
     * @param slot a slot, 0 to {@link #slots()} - 1.
     * @return the value in that slot, or null when it is empty.
     */
    @SuppressWarnings("unchecked")
    V valueAt(final int slot)
    {
        return (V)values[slot];
    }

    private void grow()
    {
        final long[] oldKeys = keys;
        final Object[] oldValues = values;
        keys = new long[oldKeys.length << 1];
        values = new Object[oldValues.length << 1];
        shift--;
        final int mask = keys.length - 1;
        for (int k = 0; k < oldKeys.length; k++)
        {
            if (oldValues[k] != null)
            {
                int i = slot(oldKeys[k]);
                while (values[i] != null)
                {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[k];
                values[i] = oldValues[k];
            }
        }
        Arrays.fill(oldValues, null);
    }
}
