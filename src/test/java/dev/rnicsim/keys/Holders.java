package dev.rnicsim.keys;

import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import java.util.Arrays;
import java.util.List;

/**
 * The live MRs and windows of one moment, in the model's order, in arrays: a key's holder is found as
 * {@link KeyWorld#holderOf} finds it (an MR before a window), without walking the model's maps again or building one.
 * It can be cleared and filled again (its arrays are kept). Not thread safe.
 */
final class Holders
{
    private MrM[] liveMrs = new MrM[8];
    private int mrCount;
    private MwM[] liveWindows = new MwM[8];
    private int windowCount;

    /** The live MRs and windows of {@code mrs} and {@code windows} (a world's lists, in the model's order). */
    static Holders live(final List<MrM> mrs, final List<MwM> windows)
    {
        final Holders h = new Holders();
        for (final MrM m : mrs)
        {
            if (m.live)
            {
                h.addMr(m);
            }
        }
        for (final MwM w : windows)
        {
            if (w.live)
            {
                h.addWindow(w);
            }
        }
        return h;
    }

    /**
     * The live MR or window whose key is exactly {@code key}, or null: what {@link #of} answers of the holders of the
     * same lists, without filling any.
     */
    static Object holderOf(final List<MrM> mrs, final List<MwM> windows, final int key)
    {
        for (final MrM m : mrs)
        {
            if (m.live && m.key == key)
            {
                return m;
            }
        }
        for (final MwM w : windows)
        {
            if (w.live && w.tableKey == key)
            {
                return w;
            }
        }
        return null;
    }

    /** Empties it (the arrays keep their old entries until overwritten: objects of the same world). */
    void clear()
    {
        mrCount = 0;
        windowCount = 0;
    }

    /** Adds a live MR, after those added before it. */
    void addMr(final MrM m)
    {
        if (mrCount == liveMrs.length)
        {
            liveMrs = Arrays.copyOf(liveMrs, mrCount * 2);
        }
        liveMrs[mrCount++] = m;
    }

    /** Adds a live window, after those added before it. */
    void addWindow(final MwM w)
    {
        if (windowCount == liveWindows.length)
        {
            liveWindows = Arrays.copyOf(liveWindows, windowCount * 2);
        }
        liveWindows[windowCount++] = w;
    }

    int windowCount()
    {
        return windowCount;
    }

    /** The live MR or window whose key is exactly {@code key}, or null. */
    Object of(final int key)
    {
        for (int i = 0; i < mrCount; i++)
        {
            if (liveMrs[i].key == key)
            {
                return liveMrs[i];
            }
        }
        for (int i = 0; i < windowCount; i++)
        {
            if (liveWindows[i].tableKey == key)
            {
                return liveWindows[i];
            }
        }
        return null;
    }
}
