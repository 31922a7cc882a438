package dev.rnicsim.mtt;

import java.util.Arrays;

/**
 * The NIC's translation cache: a set-associative cache of MPT entries and MTT entries with LRU replacement
 * in each set. Capacity and associativity come from the device profile. It holds tags only (what is cached, not
 * the data), which is what hit, miss and invalidation counts need; the data is read from the tables.
 *
 * <p>A tag is the kind (MPT or MTT) and the entry index. Invalidating a key drops its MPT entry and the MTT
 * entries of its range; a flush drops everything. Each is counted: invalidations and entries dropped.
 *
 * <p>The lines of a set are allocated when the set is first filled: a fresh device (a test makes thousands) allocates
 * an array of its sets, not every line of the cache.
 *
 * <p>Not thread safe.
 */
public final class TranslationCache
{
    /** Most lines a cache may have: 2^24. */
    public static final int MAX_CAPACITY_ENTRIES = 1 << 24;
    private static final long EMPTY = -1;
    private static final long MTT_TAG = 1L << 62;
    /** {@code lastUse} of a line whose last use is kept in its tag's hint slot instead ({@link #hints}). */
    private static final long IN_HINT = -1;
    /** Most slots of the hint table. */
    private static final int HINT_SLOTS = 1 << 10;
    /** Slots of a new hint table: it doubles, up to {@link #hintSlotsMax}, as tags take each other's slots. */
    private static final int HINT_SLOTS_FIRST = 1 << 5;
    /**
     * Longs per hint slot: the tag plus one (0: an empty slot), the tag's line ({@link #line}: its set and way), the
     * line's last use.
     */
    private static final int HINT_LONGS = 3;

    private final int sets;
    private final int ways;
    /**
     * Each set's lines, null until the set is first filled: the tags of its ways ({@link #EMPTY}: an empty line),
     * then their last uses (0: never; {@link #IN_HINT}: kept in the tag's hint slot), way {@code w}'s at
     * {@code ways + w}. One array per set, and one of the sets: a fresh device (a test makes thousands) allocated two
     * of its sets, 8 KiB for a cache of 1,024 sets.
     */
    private final long[][] lines;
    private final long setsLong;
    private long clock;
    /**
     * The line of the last hit or fill and its tag: a repeated tag (every page of one MR shares its MPT tag) is found
     * at once. {@link #lastWay} is -1 after any line was emptied, else where the line's last use sits in {@link
     * #lastUses}, its set's lines (the way plus {@link #ways}).
     */
    private int lastWay = -1;
    private long[] lastUses;
    private long lastTag;
    /**
     * Hints, a shortcut of the simulator that changes no answer and no count: slot {@code tag & hintMask} may name
     * where a cached tag sits, and keep that line's last use (its {@code lastUse} then reads {@link #IN_HINT}). A slot
     * names a tag only while the tag sits in that line; a lookup the slot does not answer searches the set. A tag
     * found by a set search takes its slot (the tag it named keeps its line, and gets its last use back). So a walk
     * over consecutive MTT entries (a message's pages), once its tags were found, reads and writes consecutive slots,
     * memory side by side, instead of a set's lines that the hash spreads over the cache (which the copy of the pages
     * has pushed out of the CPU's caches by the next message). Allocated at the first set-searched hit, small (a fresh
     * device of a test that makes thousands may hint a few tags); it doubles, dropping its hints, when more tags took
     * an occupied slot than it has slots, up to {@link #hintSlotsMax}.
     */
    private long[] hints;
    private int hintMask;
    private final int hintSlotsMax;
    /** Hints that took a slot another tag held, since the table was last made. */
    private int hintCollisions;
    private long misses;
    private long evictions;
    private long invalidations;
    private long entriesDropped;

    /**
     * @param capacityEntries cache lines in all, a multiple of {@code ways}, at most {@link #MAX_CAPACITY_ENTRIES};
     *                        0 for no cache (every access misses).
     * @param ways            lines per set (associativity), at least 1.
     * @throws TableException EINVAL when the geometry is not possible.
     */
    public TranslationCache(final int capacityEntries, final int ways)
    {
        if (ways < 1 || capacityEntries < 0 || capacityEntries > MAX_CAPACITY_ENTRIES
            || capacityEntries % ways != 0 || (capacityEntries > 0 && ways > capacityEntries))
        {
            throw new TableException(Errno.EINVAL, "cache of " + capacityEntries + " entries cannot have " + ways
                + " ways: capacity must be a multiple of ways >= 1, at most " + MAX_CAPACITY_ENTRIES);
        }
        this.ways = ways;
        this.sets = capacityEntries / ways;
        this.setsLong = sets;
        this.lines = new long[sets][];
        this.hintSlotsMax = Math.min(HINT_SLOTS, Integer.highestOneBit(Math.max(1, capacityEntries)));
        this.hintMask = Math.min(HINT_SLOTS_FIRST, hintSlotsMax) - 1;
    }

    /**
     * A hint slot's name for the line at {@code way} of {@code set}: the set, and where the line's last use sits in
     * the set's lines.
     */
    private long line(final int set, final int way)
    {
        return (long)set << 32 | (ways + way);
    }

    /** The lines (tags and last uses) of the set of a line named by {@link #line}. */
    private long[] lastUsesOf(final long line)
    {
        return lines[(int)(line >>> 32)];
    }

    /** Gives a set its lines, all empty, when it has none yet. */
    private void fill(final int set)
    {
        if (lines[set] == null)
        {
            final long[] t = new long[2 * ways];
            Arrays.fill(t, 0, ways, EMPTY);
            lines[set] = t;
        }
    }

    /**
     * @param mptIndex an MPT index.
     * @return its tag.
     */
    public static long mptTag(final long mptIndex)
    {
        return mptIndex;
    }

    /**
     * @param mttIndex an MTT entry index.
     * @return its tag.
     */
    public static long mttTag(final long mttIndex)
    {
        return MTT_TAG | mttIndex;
    }

    /**
     * Looks a tag up and, on a miss, fills it in place of its set's least recently used line.
     *
     * @param tag an MPT or MTT tag.
     * @return true on a hit.
     * @throws TableException EINVAL for a negative tag, which neither {@link #mptTag} nor {@link #mttTag} makes.
     */
    public boolean access(final long tag)
    {
        if (tag < 0)
        {
            throw new TableException(Errno.EINVAL, "tag " + tag + " is not one of mptTag() or mttTag()"
                + "; pass one of those tags");
        }
        if (sets == 0)
        {
            misses++;
            return false;
        }
        if (lastWay >= 0 && lastTag == tag)
        {
            if (lastUses[lastWay] == IN_HINT)
            {
                hints[hintSlot(tag) + 2] = ++clock;
            }
            else
            {
                lastUses[lastWay] = ++clock;
            }
            return true;
        }
        final int slot = hintSlot(tag);
        final long[] h = hints;
        if (h != null && h[slot] == tag + 1)
        {
            h[slot + 2] = ++clock;
            // Its next lookup is answered by its slot again: the set's last uses, which the hash spreads over the
            // cache, are not read (see accessHinted).
            lastWay = -1;
            return true;
        }
        final int set = setOf(tag);
        fill(set);
        final long[] t = lines[set];
        for (int w = 0; w < ways; w++)
        {
            if (t[w] == tag)
            {
                // not IN_HINT: the tag's slot would have named it
                hint(slot, tag, set, w, ++clock);
                lastUses = t;
                lastWay = ways + w;
                lastTag = tag;
                return true;
            }
        }
        int victim = 0;
        long victimUse = lastUseOf(t, 0);
        for (int w = 1; w < ways; w++)
        {
            final long use = lastUseOf(t, w);
            if (use < victimUse)
            {
                victim = w;
                victimUse = use;
            }
        }
        misses++;
        if (t[victim] != EMPTY)
        {
            evictions++;
            if (t[ways + victim] == IN_HINT)
            {
                hints[hintSlot(t[victim])] = 0;
            }
        }
        t[victim] = tag;
        t[ways + victim] = ++clock;
        lastUses = t;
        lastWay = ways + victim;
        lastTag = tag;
        return false;
    }

    /**
     * {@link #access}, with its hits by the last line and by hint slot (the MTT entries of a walk over a message's
     * pages, once their tags were found) answered in a method small enough to be compiled into its caller; anything
     * else goes through {@link #access}. Same answer, counts and last uses.
     *
     * @param tag an MPT or MTT tag.
     * @return true on a hit.
     */
    public boolean accessHinted(final long tag)
    {
        final long[] h = hints;
        if (tag >= 0 && h != null)
        {
            if (lastWay >= 0 && lastTag == tag)
            {
                final long use = ++clock;
                if (lastUses[lastWay] == IN_HINT)
                {
                    h[hintSlot(tag) + 2] = use;
                }
                else
                {
                    lastUses[lastWay] = use;
                }
                return true;
            }
            final int slot = hintSlot(tag);
            if (h[slot] == tag + 1)
            {
                h[slot + 2] = ++clock;
                // Not remembered as the last line: that would read its set's last uses (a reference in an array
                // indexed by set, which the hash spreads over the cache: a line the copy of a message's pages has
                // pushed out of the CPU's caches, read once per page on each side), and a walk does not look the
                // same MTT tag up twice in a row; its next lookup is answered by its slot again.
                lastWay = -1;
                return true;
            }
        }
        return access(tag);
    }

    /**
     * @param tag an MPT or MTT tag.
     * @return true when the tag is cached (no counter changes).
     */
    public boolean contains(final long tag)
    {
        return tag >= 0 && sets != 0 && find(setOf(tag), tag) >= 0;
    }

    /**
     * Drops the MPT entry of a key and the MTT entries of its range (one invalidation).
     *
     * @param mptIndex    the key's MPT index.
     * @param mttFirst    first MTT entry of the MR.
     * @param mttEntries  MTT entries of the MR.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when an argument is negative or the range overflows.
     */
    public long invalidate(final long mptIndex, final long mttFirst, final long mttEntries)
    {
        if (mptIndex < 0 || mttFirst < 0 || mttEntries < 0 || mttFirst > (1L << 62) - 1 - mttEntries)
        {
            throw new TableException(Errno.EINVAL, "invalidate: mptIndex=" + mptIndex + " mttFirst=" + mttFirst
                + " mttEntries=" + mttEntries + " are negative or overflow");
        }
        invalidations++;
        long dropped = drop(mptTag(mptIndex));
        if (mttEntries <= sets)
        {
            for (long i = mttFirst; i < mttFirst + mttEntries; i++)
            {
                dropped += drop(mttTag(i));
            }
        }
        else
        {
            for (int set = 0; set < sets; set++)
            {
                final long[] t = lines[set];
                if (t == null)
                {
                    continue;
                }
                for (int w = 0; w < ways; w++)
                {
                    if (t[w] != EMPTY && (t[w] & MTT_TAG) != 0)
                    {
                        final long index = t[w] & ~MTT_TAG;
                        if (index >= mttFirst && index < mttFirst + mttEntries)
                        {
                            empty(set, w);
                            dropped++;
                        }
                    }
                }
            }
        }
        entriesDropped += dropped;
        return dropped;
    }

    /**
     * Drops every cached entry (one invalidation).
     *
     * @return the number of entries dropped.
     */
    public long flush()
    {
        invalidations++;
        long dropped = 0;
        for (int set = 0; set < sets; set++)
        {
            final long[] t = lines[set];
            if (t == null)
            {
                continue;
            }
            for (int w = 0; w < ways; w++)
            {
                if (t[w] != EMPTY)
                {
                    t[w] = EMPTY;
                    t[ways + w] = 0;
                    dropped++;
                }
            }
        }
        if (hints != null)
        {
            Arrays.fill(hints, 0);
        }
        lastWay = -1;
        entriesDropped += dropped;
        return dropped;
    }

    /**
     * @return lookups that hit.
     */
    public long hits()
    {
        // Every lookup of a cache with lines takes one tick of the clock: the hits are the ticks no miss took.
        return sets == 0 ? 0 : clock - misses;
    }

    /**
     * @return lookups that missed (each a fetch from the tables over PCIe, priced by the cost model).
     */
    public long misses()
    {
        return misses;
    }

    /**
     * @return lines replaced to make room.
     */
    public long evictions()
    {
        return evictions;
    }

    /**
     * @return invalidations (by key or full flush).
     */
    public long invalidations()
    {
        return invalidations;
    }

    /**
     * @return cached entries dropped by invalidations.
     */
    public long entriesDropped()
    {
        return entriesDropped;
    }

    /**
     * @return lines in the cache.
     */
    public int capacityEntries()
    {
        return sets * ways;
    }

    private int drop(final long tag)
    {
        if (sets == 0)
        {
            return 0;
        }
        final int set = setOf(tag);
        final int w = find(set, tag);
        if (w < 0)
        {
            return 0;
        }
        empty(set, w);
        return 1;
    }

    /** Empties a line (its hint, if it has one, goes). */
    private void empty(final int set, final int w)
    {
        final long[] t = lines[set];
        if (t[ways + w] == IN_HINT)
        {
            hints[hintSlot(t[w])] = 0;
        }
        t[w] = EMPTY;
        t[ways + w] = 0;
        lastWay = -1;
    }

    /** The last use of line {@code w} of a set (its lines), wherever it is kept. */
    private long lastUseOf(final long[] t, final int w)
    {
        final long use = t[ways + w];
        return use == IN_HINT ? hints[hintSlot(t[w]) + 2] : use;
    }

    /** The first of a tag's hint slot's longs. */
    private int hintSlot(final long tag)
    {
        return ((int)tag & hintMask) * HINT_LONGS;
    }

    /**
     * Gives line {@code w}, which holds {@code tag} and was just used at {@code use}, the slot of its tag; the tag the
     * slot named before keeps its line and gets its last use back.
     */
    private void hint(final int tagSlot, final long tag, final int set, final int w, final long use)
    {
        int slot = tagSlot;
        if (hints == null)
        {
            hints = new long[(hintMask + 1) * HINT_LONGS];
        }
        else if (hints[slot] != 0 && ++hintCollisions > hintMask && hintMask + 1 < hintSlotsMax)
        {
            growHints();
            slot = hintSlot(tag);
        }
        if (hints[slot] != 0)
        {
            lastUsesOf(hints[slot + 1])[(int)hints[slot + 1]] = hints[slot + 2];
        }
        hints[slot] = tag + 1;
        hints[slot + 1] = line(set, w);
        hints[slot + 2] = use;
        lines[set][ways + w] = IN_HINT;
    }

    /** Drops every hint (each named line gets its last use back) for a table of twice the slots. */
    private void growHints()
    {
        for (int slot = 0; slot < hints.length; slot += HINT_LONGS)
        {
            if (hints[slot] != 0)
            {
                lastUsesOf(hints[slot + 1])[(int)hints[slot + 1]] = hints[slot + 2];
            }
        }
        hintMask = (hintMask + 1) * 2 - 1;
        hints = new long[(hintMask + 1) * HINT_LONGS];
        hintCollisions = 0;
    }

    /** The way of {@code set} that holds {@code tag}, or -1. */
    private int find(final int set, final long tag)
    {
        final long[] t = lines[set];
        if (t == null)
        {
            return -1;
        }
        for (int w = 0; w < ways; w++)
        {
            if (t[w] == tag)
            {
                return w;
            }
        }
        return -1;
    }

    /** Fibonacci hashing, then a multiply-shift range reduction to [0, sets) (no division on the hit path). */
    private int setOf(final long tag)
    {
        final long h = (tag * 0x9E3779B97F4A7C15L) >>> 32;
        return (int)((h * setsLong) >>> 32);
    }
}
