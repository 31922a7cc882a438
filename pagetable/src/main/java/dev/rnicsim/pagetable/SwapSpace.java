package dev.rnicsim.pagetable;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * A swap device of fixed size in 4 KiB slots. A slot holds the bytes of one swapped-out page (nothing when the
 * page read as zeros) and a reference count: after fork, parent and child share swap entries
 * (mm/swapfile.c {@code swap_duplicate}).
 *
 * <p>Not thread safe.
 */
final class SwapSpace
{
    private final long totalSlots;
    private final BitSet used = new BitSet();
    private final Map<Long, byte[]> bytesBySlot = new HashMap<>();
    private final Map<Long, Integer> extraRefs = new HashMap<>();
    private long usedSlots;
    private int nextHint;

    SwapSpace(final long totalSlots)
    {
        this.totalSlots = totalSlots;
    }

    long totalSlots()
    {
        return totalSlots;
    }

    long usedSlots()
    {
        return usedSlots;
    }

    /** @return a new slot holding {@code bytes} (null for a zero page), or -1 when swap is full. */
    long store(final byte[] bytes)
    {
        if (usedSlots >= totalSlots)
        {
            return -1;
        }
        int slot = used.nextClearBit(nextHint);
        if (slot >= totalSlots)
        {
            slot = used.nextClearBit(0);
        }
        used.set(slot);
        nextHint = slot + 1;
        usedSlots++;
        if (bytes != null)
        {
            bytesBySlot.put((long)slot, bytes);
        }
        return slot;
    }

    byte[] bytes(final long slot)
    {
        return bytesBySlot.get(slot);
    }

    void duplicate(final long slot)
    {
        extraRefs.merge(slot, 1, Integer::sum);
    }

    /** Drops one reference; the slot is freed with the last one. */
    void release(final long slot)
    {
        final Integer extra = extraRefs.get(slot);
        if (extra != null)
        {
            if (extra == 1)
            {
                extraRefs.remove(slot);
            }
            else
            {
                extraRefs.put(slot, extra - 1);
            }
            return;
        }
        used.clear((int)slot);
        bytesBySlot.remove(slot);
        usedSlots--;
        nextHint = Math.min(nextHint, (int)slot);
    }
}
