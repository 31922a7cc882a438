package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;

/**
 * The test's model of device b's MPT: which index a new entry takes and which variant (the key's low byte) it gets
 * under each {@link VariantPolicy}, written from the Javadoc of {@code MptTable}, {@code IndexPolicy} and
 * {@code VariantPolicy}, not from their code:
 * <ul>
 * <li>index: CYCLIC ({@code connectx5}): the first free index at or after the one after the last handed out,
 * wrapping to 1 (index 0 is reserved): the model is built with the table size, {@code max_mr + 1}, so
 * {@code max_mr} entries fit;</li>
 * <li>GENERATION: the variant of an index advances by one (mod 256) every time the index is freed, so a stale key
 * comes back after exactly 256 reuses of its index;</li>
 * <li>RANDOM: a seeded random variant, different from the index's previous one when the index was used before (the
 * model cannot predict the value; it checks the constraint and adopts the key the device returned);</li>
 * <li>RECYCLED (mlx5's mkey cache): an index reused by an MR hands out its last key again; a fresh index (never used,
 * or whose history a window or fast-registration MR erased when freed) takes the next value of a device-wide
 * counter. Windows are "created with a fresh variant" ({@code MptTable.forgetHistory}); see
 * {@link #WINDOW_TAKES_RECYCLED_VARIANT}.</li>
 * </ul>
 * Binds rewrite a window's variant in place ({@code ibv_inc_rkey}); rereg in place keeps the key.
 */
final class MptModel
{
    /**
     * True would model the simulator before commit e7d7e38, where under RECYCLED a new window on an index an MR used
     * last took that MR's stale key ({@code AdapterTables.allocateWindow} took its variant from {@code
     * MptTable.allocate}); {@code MptTable.forgetHistory}'s Javadoc and mlx5 ({@code assign_mkey_variant}) give
     * windows a fresh variant, as the model does with false.
     */
    static final boolean WINDOW_TAKES_RECYCLED_VARIANT = false;

    /**
     * Whether a window created on a never-used index under RECYCLED keys consumes two values of the device-wide
     * counter instead of one. False: mlx5 increments {@code mkey_var} once per mkey ({@code assign_mkey_variant}), and
     * the simulator does the same ({@code MptTable.allocate} with {@code fresh}).
     */
    static final boolean FRESH_WINDOW_SKIPS_A_VARIANT = false;

    static final int VARIANT_MASK = 0xff;

    final VariantPolicy policy;
    final int maxMr;
    private final boolean[] live;
    private final int[] variant;
    private final boolean[] used;
    /** Allocations of each index so far (the reuse count of a key is the difference since it died). */
    private final int[] allocations;
    private int cursor = 1;
    private int counter;
    private int liveCount;

    MptModel(final VariantPolicy policy, final int maxMr)
    {
        this.policy = policy;
        this.maxMr = maxMr;
        live = new boolean[maxMr];
        variant = new int[maxMr];
        used = new boolean[maxMr];
        allocations = new int[maxMr];
    }

    static int index(final int key)
    {
        return key >>> 8;
    }

    static int variantOf(final int key)
    {
        return key & VARIANT_MASK;
    }

    static int key(final int index, final int variant)
    {
        return index << 8 | variant;
    }

    int liveCount()
    {
        return liveCount;
    }

    boolean full()
    {
        return liveCount >= maxMr - 1;
    }

    int allocations(final int index)
    {
        return index < maxMr ? allocations[index] : 0;
    }

    /** The index the next allocation takes, or -1 when the table is full. */
    int nextIndex()
    {
        for (int i = cursor; i < maxMr; i++)
        {
            if (!live[i])
            {
                return i;
            }
        }
        for (int i = 1; i < cursor && i < maxMr; i++)
        {
            if (!live[i])
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * @param window the entry is a memory window.
     * @return the key the next allocation must return, or -1 when the policy (RANDOM) leaves the variant open.
     */
    int predict(final boolean window)
    {
        final int i = nextIndex();
        if (i < 0)
        {
            throw new IllegalStateException("no free MPT index to predict");
        }
        return switch (policy)
        {
            case GENERATION -> key(i, variant[i]);
            case RECYCLED -> key(i, used[i] && (!window || WINDOW_TAKES_RECYCLED_VARIANT) ? variant[i]
                : (counter + (window && !used[i] && FRESH_WINDOW_SKIPS_A_VARIANT ? 1 : 0)) & VARIANT_MASK);
            case FIXED -> key(i, 0);
            case RANDOM, DEVICE_COUNTER -> -1;
        };
    }

    /**
     * Checks a key the device handed out against the policy and records it.
     *
     * @return null when it agrees, else what the model expected.
     */
    String allocated(final int key, final boolean window)
    {
        final int i = nextIndex();
        final int expected = predict(window);
        String problem = null;
        if (index(key) != i)
        {
            problem = "MPT index " + i + " (CYCLIC: the first free index after the last one taken)";
        }
        else if (expected >= 0 && key != expected)
        {
            problem = String.format("key 0x%08x (%s, index %d %s)", expected, policy, i,
                used[i] ? "reused, previous variant " + variant[i] : "never used, or its history forgotten");
        }
        else if (expected < 0 && used[i] && !window && variantOf(key) == variant[i])
        {
            problem = "a variant other than the index's previous one, " + variant[i]
                + " (RANDOM: rxe_get_next_key excludes it)";
        }
        if (problem != null)
        {
            return problem;
        }
        if (policy == VariantPolicy.RECYCLED && !(used[i] && (!window || WINDOW_TAKES_RECYCLED_VARIANT)))
        {
            counter += window && !used[i] && FRESH_WINDOW_SKIPS_A_VARIANT ? 2 : 1;
        }
        live[i] = true;
        variant[i] = variantOf(key);
        used[i] = true;
        allocations[i]++;
        liveCount++;
        cursor = i + 1 >= maxMr ? 1 : i + 1;
        return null;
    }

    /**
     * Frees a live entry.
     *
     * @param forget a window or fast-registration MR: its index forgets its history (RECYCLED: the next MR there
     *               takes a fresh variant).
     */
    void freed(final int key, final boolean forget)
    {
        final int i = index(key);
        if (!live[i] || variant[i] != variantOf(key))
        {
            throw new IllegalStateException(String.format("model: free of key 0x%08x that is not live", key));
        }
        live[i] = false;
        liveCount--;
        if (policy == VariantPolicy.GENERATION)
        {
            variant[i] = (variant[i] + 1) & VARIANT_MASK;
        }
        if (forget)
        {
            used[i] = false;
        }
    }

    /** A window bind rewrote the variant of a live entry in place. */
    void rewritten(final int oldKey, final int newKey)
    {
        final int i = index(oldKey);
        if (!live[i] || index(newKey) != i)
        {
            throw new IllegalStateException(String.format("model: rewrite of 0x%08x to 0x%08x", oldKey, newKey));
        }
        variant[i] = variantOf(newKey);
    }
}
