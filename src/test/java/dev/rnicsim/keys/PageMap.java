package dev.rnicsim.keys;

import dev.rnicsim.keys.WorldModel.Page;
import java.util.Arrays;

/**
 * The model's pages of app_b by virtual address ({@link BetaMemory#pages}): a map from a page-aligned address to its
 * {@link Page} without boxing the address (open addressing, linear probing), whose addresses are also kept in
 * ascending order ({@link #sortedAddresses}: each put of a new address and each remove moves the tail of that array
 * by one), as a {@code TreeMap<Long, Page>} gave them. The invariants after every action and most actions look pages
 * up; a boxed key per look-up and a tree node per page cost more than the look-ups. Not thread safe.
 */
final class PageMap
{
    /** A slot's address when empty: no page-aligned address is odd. */
    private static final long EMPTY = 1;

    private long[] keys = newKeys(64);
    private Page[] values = new Page[64];
    private int size;
    /** The addresses mapped, ascending, in the first {@link #size} slots. */
    private long[] sorted = new long[64];
    /** {@link #sortedAddresses}' last answer (null after a change). */
    private long[] snapshot;

    private static long[] newKeys(final int capacity)
    {
        final long[] k = new long[capacity];
        Arrays.fill(k, EMPTY);
        return k;
    }

    private int slot(final long va)
    {
        final long h = va * 0x9E3779B97F4A7C15L;
        return (int)(h >>> 40) & (keys.length - 1);
    }

    /** The slot holding {@code va}, or -1. */
    private int find(final long va)
    {
        final int mask = keys.length - 1;
        for (int i = slot(va);; i = (i + 1) & mask)
        {
            final long k = keys[i];
            if (k == va)
            {
                return i;
            }
            if (k == EMPTY)
            {
                return -1;
            }
        }
    }

    int size()
    {
        return size;
    }

    /** @return the page at {@code va}, or null. */
    Page get(final long va)
    {
        final int i = find(va);
        return i < 0 ? null : values[i];
    }

    boolean containsKey(final long va)
    {
        return find(va) >= 0;
    }

    /** Maps {@code va} (page-aligned) to {@code p}; @return the page it mapped before, or null. */
    Page put(final long va, final Page p)
    {
        if ((va & (KeyWorld.PAGE - 1)) != 0)
        {
            throw new IllegalArgumentException("page address 0x" + Long.toHexString(va) + " is not page-aligned");
        }
        final int mask = keys.length - 1;
        int i = slot(va);
        while (keys[i] != EMPTY)
        {
            if (keys[i] == va)
            {
                final Page old = values[i];
                values[i] = p;
                return old;
            }
            i = (i + 1) & mask;
        }
        keys[i] = va;
        values[i] = p;
        final int at = -Arrays.binarySearch(sorted, 0, size, va) - 1;
        if (size == sorted.length)
        {
            sorted = Arrays.copyOf(sorted, size * 2);
        }
        System.arraycopy(sorted, at, sorted, at + 1, size - at);
        sorted[at] = va;
        snapshot = null;
        size++;
        if (size * 2 > keys.length)
        {
            grow();
        }
        return null;
    }

    /** Unmaps {@code va}; @return the page it mapped, or null. */
    Page remove(final long va)
    {
        int i = find(va);
        if (i < 0)
        {
            return null;
        }
        final Page old = values[i];
        final int at = Arrays.binarySearch(sorted, 0, size, va);
        System.arraycopy(sorted, at + 1, sorted, at, size - at - 1);
        snapshot = null;
        size--;
        // Backward-shift deletion: later entries of the run move up so that no probe stops early at the hole.
        final int mask = keys.length - 1;
        int j = i;
        while (true)
        {
            j = (j + 1) & mask;
            final long k = keys[j];
            if (k == EMPTY)
            {
                break;
            }
            final int home = slot(k);
            // Move k into the hole at i unless its home lies cyclically in (i, j].
            if (i <= j ? home <= i || home > j : home <= i && home > j)
            {
                keys[i] = k;
                values[i] = values[j];
                i = j;
            }
        }
        keys[i] = EMPTY;
        values[i] = null;
        return old;
    }

    private void grow()
    {
        final long[] oldKeys = keys;
        final Page[] oldValues = values;
        keys = newKeys(oldKeys.length * 2);
        values = new Page[oldKeys.length * 2];
        final int mask = keys.length - 1;
        for (int s = 0; s < oldKeys.length; s++)
        {
            if (oldKeys[s] != EMPTY)
            {
                int i = slot(oldKeys[s]);
                while (keys[i] != EMPTY)
                {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[s];
                values[i] = oldValues[s];
            }
        }
    }

    /**
     * @return the mapped addresses in ascending order: an array of exactly {@link #size} addresses, shared until the
     * next change (read it, never write it).
     */
    long[] sortedAddresses()
    {
        if (snapshot == null)
        {
            snapshot = Arrays.copyOf(sorted, size);
        }
        return snapshot;
    }

    /** The {@code i}th mapped address in ascending order, {@code i} below {@link #size}. */
    long sortedAddress(final int i)
    {
        return sorted[i];
    }
}
