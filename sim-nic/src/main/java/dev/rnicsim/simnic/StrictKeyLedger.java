package dev.rnicsim.simnic;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What strict mode ({@link StrictChecker}) knows of the keys it saw issued and of the MRs they name: per device, the
 * MR each key named, where it was registered and released, and the deregistered MR that had the same key before; the
 * live MRs; and which MRs a DMA reached. A key can be issued again: an MR's key is its MPT index and an 8-bit
 * variant, and the variant policy of the device profile decides what a reused index gets (mlx5's mkey cache
 * re-issues the same key; a GENERATION variant wraps after 256 reuses), so a holder of the old key reaches the new
 * MR. The ledger keeps the chain so that the checker can name both MRs.
 *
 * <p>Not thread safe (nor is the simulator).
 */
final class StrictKeyLedger
{
    /** What the checker knows of a key it saw issued. */
    static final class Issued
    {
        final SimMr mr;
        final String registeredLine;
        final Throwable registeredAt;
        String releasedLine;
        Throwable releasedAt;
        /** The deregistered MR that had the same key before, or null. */
        final Issued previous;
        boolean reuseReported;
        boolean released;

        Issued(final SimMr mr, final String registeredLine, final Throwable registeredAt, final Issued previous)
        {
            this.mr = mr;
            this.registeredLine = registeredLine;
            this.registeredAt = registeredAt;
            this.previous = previous;
        }

        boolean released()
        {
            return released || mr.isClosed();
        }
    }

    private final Map<SimDevice, Map<Integer, Issued>> issued = new IdentityHashMap<>();
    private final Map<SimMr, Issued> live = new IdentityHashMap<>();
    private final Set<SimMr> touched = Collections.newSetFromMap(new IdentityHashMap<>());

    /** Starts a ledger for a device newly watched. */
    void attach(final SimDevice device)
    {
        issued.put(device, new HashMap<>());
    }

    /** @return what was last issued under {@code key} on a watched device, or null. */
    Issued issued(final SimDevice device, final int key)
    {
        final Map<Integer, Issued> keys = issued.get(device);
        return keys == null ? null : keys.get(key);
    }

    /** @return what is known of a live MR, or null. */
    Issued live(final SimMr mr)
    {
        return live.get(mr);
    }

    /** @return the live MRs, still registered, that no DMA reached. */
    List<Issued> untouchedLive()
    {
        final List<Issued> out = new ArrayList<>();
        for (final Map.Entry<SimMr, Issued> e : new ArrayList<>(live.entrySet()))
        {
            if (!touched.contains(e.getKey()) && !e.getKey().isClosed())
            {
                out.add(e.getValue());
            }
        }
        return out;
    }

    /** A DMA reached the MR. */
    void touch(final SimMr mr)
    {
        touched.add(mr);
    }

    /** @return true when a DMA reached the MR (which is forgotten). */
    boolean untouch(final SimMr mr)
    {
        return touched.remove(mr);
    }

    /**
     * An MR registered on {@code device}: its lkey and rkey issued, each linked to the released MR the key named
     * before.
     *
     * @return what is now known of the MR.
     */
    Issued registered(final SimDevice device, final SimMr mr, final String line, final Throwable at)
    {
        final Issued i = new Issued(mr, line, at, previousOf(device, mr.lkey(), mr));
        live.put(mr, i);
        issue(device, mr.lkey(), i);
        if (mr.rkey() != mr.lkey() && mr.rkey() != 0)
        {
            issue(device, mr.rkey(), new Issued(mr, i.registeredLine, i.registeredAt, previousOf(device, mr.rkey(),
                mr)));
        }
        return i;
    }

    /** An MR re-registered: a key it lost counts as released there; its keys now name the new registration. */
    void reregistered(final SimDevice device, final SimMr mr, final int oldLkey, final String line,
        final Throwable at)
    {
        final Issued old = issued.get(device).get(oldLkey);
        final Issued now = new Issued(mr, line, at, null);
        if (oldLkey != mr.lkey() && old != null)
        {
            final Issued retired = new Issued(mr, old.registeredLine, old.registeredAt, null);
            retired.releasedLine = now.registeredLine;
            retired.releasedAt = now.registeredAt;
            retired.released = true;
            issue(device, oldLkey, retired);
        }
        live.put(mr, now);
        issue(device, mr.lkey(), now);
        if (mr.rkey() != mr.lkey() && mr.rkey() != 0)
        {
            issue(device, mr.rkey(), now);
        }
    }

    /**
     * An MR deregistered: its keys count as released at {@code line}.
     *
     * @return what was known of it while live, or null.
     */
    Issued deregistered(final SimDevice device, final SimMr mr, final String line, final Throwable at)
    {
        final Issued i = live.remove(mr);
        for (final int key : new int[] {mr.lkey(), mr.rkey()})
        {
            final Issued k = issued.get(device).get(key);
            if (k != null && k.mr == mr)
            {
                k.releasedLine = line;
                k.releasedAt = at;
                k.released = true;
            }
        }
        return i;
    }

    private void issue(final SimDevice device, final int key, final Issued i)
    {
        issued.get(device).put(key, i);
    }

    private Issued previousOf(final SimDevice device, final int key, final SimMr mr)
    {
        final Issued before = issued.get(device).get(key);
        return before != null && before.mr != mr && before.released() ? before : null;
    }

    /** {@code (registered at A, deregistered at B)}, or empty when no line is known. */
    static String history(final Issued i)
    {
        if (i.registeredLine == null && i.releasedLine == null)
        {
            return "";
        }
        return " (registered" + StrictChecker.at(i.registeredLine) + ", deregistered" + StrictChecker.at(i.releasedLine)
            + ")";
    }
}
