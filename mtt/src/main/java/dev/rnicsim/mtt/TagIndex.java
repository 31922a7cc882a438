package dev.rnicsim.mtt;

/**
 * Where each tag cached by a {@link TranslationCache} sits and when it was last used, kept by tag rather than by
 * set: the tags of 64 consecutive entries share one small block. A transfer walks consecutive MTT entries, whose
 * sets the cache's hash scatters over the whole cache; their blocks here lie side by side, so a hit reads and writes
 * memory next to the last hit's instead of a line of a far set. The cache's own arrays (which tag each line holds)
 * are read only to choose a victim on a miss.
 *
 * <p>Blocks live in an open-addressing map from {@code tag >>> 6}; a block goes away when its last tag leaves the
 * cache, so the index never holds more blocks than the cache holds tags. Not thread safe.
 */
final class TagIndex
{
    static final int BLOCK_SHIFT = 6;
    static final int BLOCK_TAGS = 1 << BLOCK_SHIFT;
    static final int BLOCK_MASK = BLOCK_TAGS - 1;

    /** The tags of one aligned run of 64: each one's line + 1 (0: not cached) and its last use (0: not cached). */
    static final class Block
    {
        final long key;
        final long[] lastUse = new long[BLOCK_TAGS];
        final int[] line = new int[BLOCK_TAGS];
        int cached;

        Block(final long key)
        {
            this.key = key;
        }
    }

    private static final long EMPTY_KEY = -1;
    private long[] keys = newKeys(16);
    private Block[] blocks = new Block[16];
    private int size;
    /** The block found last: a walk's next tag is most often in it. */
    private Block last;

    private static long[] newKeys(final int capacity)
    {
        final long[] k = new long[capacity];
        java.util.Arrays.fill(k, EMPTY_KEY);
        return k;
    }

    /** @return the block of {@code tag}, or null when none of its 64 tags is cached. */
    Block find(final long tag)
    {
        final long key = tag >>> BLOCK_SHIFT;
        final Block b = last;
        if (b != null && b.key == key)
        {
            return b;
        }
        final int mask = keys.length - 1;
        for (int i = slot(key, mask);; i = (i + 1) & mask)
        {
            final long k = keys[i];
            if (k == key)
            {
                last = blocks[i];
                return last;
            }
            if (k == EMPTY_KEY)
            {
                return null;
            }
        }
    }

    /** @return the block of {@code tag}, made when absent. */
    Block findOrAdd(final long tag)
    {
        final Block found = find(tag);
        if (found != null)
        {
            return found;
        }
        if (2 * (size + 1) > keys.length)
        {
            grow();
        }
        final long key = tag >>> BLOCK_SHIFT;
        final int mask = keys.length - 1;
        int i = slot(key, mask);
        while (keys[i] != EMPTY_KEY)
        {
            i = (i + 1) & mask;
        }
        final Block b = new Block(key);
        keys[i] = key;
        blocks[i] = b;
        size++;
        last = b;
        return b;
    }

    /** Takes a block whose last cached tag left out of the map (backward-shift deletion keeps the probes whole). */
    void remove(final Block b)
    {
        if (last == b)
        {
            last = null;
        }
        final int mask = keys.length - 1;
        int i = slot(b.key, mask);
        while (keys[i] != b.key)
        {
            if (keys[i] == EMPTY_KEY)
            {
                throw new IllegalStateException("tag block " + b.key + " is not in the index");
            }
            i = (i + 1) & mask;
        }
        size--;
        int gap = i;
        for (int j = (gap + 1) & mask; keys[j] != EMPTY_KEY; j = (j + 1) & mask)
        {
            final int home = slot(keys[j], mask);
            // Move j into the gap when its home is not in (gap, j] cyclically.
            if (((j - home) & mask) >= ((j - gap) & mask))
            {
                keys[gap] = keys[j];
                blocks[gap] = blocks[j];
                gap = j;
            }
        }
        keys[gap] = EMPTY_KEY;
        blocks[gap] = null;
    }

    private void grow()
    {
        final long[] oldKeys = keys;
        final Block[] oldBlocks = blocks;
        keys = newKeys(oldKeys.length * 2);
        blocks = new Block[oldKeys.length * 2];
        final int mask = keys.length - 1;
        for (int j = 0; j < oldKeys.length; j++)
        {
            if (oldKeys[j] != EMPTY_KEY)
            {
                int i = slot(oldKeys[j], mask);
                while (keys[i] != EMPTY_KEY)
                {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[j];
                blocks[i] = oldBlocks[j];
            }
        }
    }

    private static int slot(final long key, final int mask)
    {
        return (int)((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
    }
}
