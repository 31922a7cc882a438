package dev.rnicsim.simnic;

import dev.rnicsim.mtt.MKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What each MPT index of one device held, and since when: the last {@value #EVENTS_PER_INDEX} key events of every
 * index (registered, deregistered, re-registered, window allocated, window bound, invalidated, deallocated), each with the simulated
 * time and where the call came from ({@link SimFabric#origin()}: a script's file and line, else the verb). A
 * diagnosis reads it to say what a stale key once named and what its index names now.
 *
 * <p>Fed by the control path only (registration, deregistration, binds and invalidations); the data path never
 * touches it. One small record per event; memory grows with the number of distinct indices used. Not thread safe.
 */
public final class KeyHistory
{
    /** Events kept per MPT index. */
    public static final int EVENTS_PER_INDEX = 4;

    /** What happened to a key. */
    public enum What
    {
        /** ibv_reg_mr (and the ODP, dma-buf and re-registration variants that issue a new key). */
        REGISTERED,
        /** ibv_dereg_mr (or the close of its PD, context or process). */
        DEREGISTERED,
        /** A memory window was bound: the key is the window's new rkey. */
        BOUND,
        /** ibv_alloc_mw: the key is the window's rkey before any bind, which grants nothing (ibv_alloc_mw(3)). */
        ALLOCATED,
        /** The key stopped naming its object: invalidated, rebound, re-registered in place, or deallocated. */
        INVALIDATED
    }

    /**
     * One event of one key.
     *
     * @param what        what happened.
     * @param key         the key it concerns.
     * @param text        what the key names when it is not an MR (a window), or null for an MR.
     * @param mr          the MR's registration, or null (its text is formatted only when asked for: the
     *                    registration path formats nothing).
     * @param cause       the verb or operation, e.g. {@code ibv_dereg_mr}, {@code invalidate_mw}.
     * @param origin      where the call came from (script line), or null.
     * @param atNs        simulated time.
     * @param sequence    the device's event number (1 for the first).
     */
    public record Event(What what, int key, String text, RegistrationEvent mr, String cause, String origin, long atNs,
        long sequence)
    {
        /**
         * @return what the key names, e.g. {@code MR of 65536 bytes at addr 0x7f... iova 0x7f..., [LOCAL_WRITE]}.
         */
        public String object()
        {
            if (mr == null)
            {
                return text == null ? "key " + MKey.toHex(key) : text;
            }
            return String.format(Locale.ROOT, "MR of %d bytes at addr 0x%x iova 0x%x, %s", mr.lengthBytes(),
                mr.addr(), mr.iova(), dev.rnicsim.verbs.Access.fromBits(mr.access()));
        }

        /**
         * @return e.g. {@code deregistered at stale.rsim:9 (dereg mr0)}, or without a script
         * {@code deregistered by ibv_dereg_mr (key event #3)}.
         */
        public String describe()
        {
            return what.name().toLowerCase(Locale.ROOT) + (origin == null ? " by " + cause + " (key event #"
                + sequence + ")" : " at " + origin);
        }

        /**
         * @return one line of an index's history: time, what, key, object.
         */
        public String line()
        {
            return String.format(Locale.ROOT, "t=%.3f us %s: key %s, %s", atNs / 1e3, describe(), MKey.toHex(key),
                object());
        }
    }

    private final SimFabric fabric;
    private final int variantBits;
    private final Map<Long, Event[]> byIndex = new HashMap<>();
    private long sequence;

    KeyHistory(final SimFabric fabric, final int variantBits)
    {
        this.fabric = fabric;
        this.variantBits = variantBits;
    }

    /**
     * @return the bits of a key that are its variant on this device.
     */
    public int variantBits()
    {
        return variantBits;
    }

    /**
     * @param key a key.
     * @return its MPT index.
     */
    public long index(final int key)
    {
        return MKey.index(key, variantBits);
    }

    /**
     * @param key a key.
     * @return its variant.
     */
    public int variant(final int key)
    {
        return MKey.variant(key, variantBits);
    }

    void registration(final RegistrationEvent e)
    {
        final boolean reg = e.kind() == RegistrationEvent.Kind.REG;
        add(reg ? What.REGISTERED : What.DEREGISTERED, e.lkey(), null, e, reg ? "ibv_reg_mr" : "ibv_dereg_mr");
    }

    void invalidated(final String cause, final int key)
    {
        final Event last = last(index(key));
        final boolean same = last != null && last.key() == key;
        add(What.INVALIDATED, key, same ? last.text() : null, same ? last.mr() : null, cause);
    }

    void bound(final int newKey, final String object)
    {
        add(What.BOUND, newKey, object, null, "bind_mw");
    }

    /** ibv_alloc_mw gave a window the MPT entry of {@code key}, not bound: a diagnosis of the key names this call. */
    void allocated(final int key, final String object)
    {
        add(What.ALLOCATED, key, object, null, "ibv_alloc_mw");
    }

    /** The object a window's new rkey names after a bind. */
    static String window(final SimMw mw, final SimMr mr, final dev.rnicsim.verbs.MwBindInfo info, final SimQp qp)
    {
        return (mw.type() == dev.rnicsim.verbs.MwType.TYPE_1 ? "type 1" : "type 2") + " window over "
            + info.lengthBytes() + " bytes at 0x" + Long.toHexString(info.addr()) + " of MR lkey "
            + MKey.toHex(mr.lkey()) + ", rights " + info.access() + (mw.type() == dev.rnicsim.verbs.MwType.TYPE_2
            ? ", owned by QP 0x" + Integer.toHexString(qp.num()) : "");
    }

    private void add(final What what, final int key, final String text, final RegistrationEvent mr,
        final String cause)
    {
        final Event e = new Event(what, key, text, mr, cause, fabric.origin(), fabric.clock().nowNs(), ++sequence);
        final Event[] ring = byIndex.computeIfAbsent(index(key), i -> new Event[EVENTS_PER_INDEX]);
        System.arraycopy(ring, 1, ring, 0, EVENTS_PER_INDEX - 1);
        ring[EVENTS_PER_INDEX - 1] = e;
    }

    /**
     * @param index an MPT index.
     * @return its last events, oldest first (empty when none was seen).
     */
    public List<Event> events(final long index)
    {
        final Event[] ring = byIndex.get(index);
        final List<Event> out = new ArrayList<>(EVENTS_PER_INDEX);
        if (ring != null)
        {
            for (final Event e : ring)
            {
                if (e != null)
                {
                    out.add(e);
                }
            }
        }
        return out;
    }

    /**
     * @param index an MPT index.
     * @return its last event, or null.
     */
    public Event last(final long index)
    {
        final Event[] ring = byIndex.get(index);
        return ring == null ? null : ring[EVENTS_PER_INDEX - 1];
    }

    /**
     * @param key a key.
     * @return the last event of that exact key (all its bits) still in the history, or null.
     */
    public Event lastOf(final int key)
    {
        final Event[] ring = byIndex.get(index(key));
        if (ring != null)
        {
            for (int i = EVENTS_PER_INDEX - 1; i >= 0; i--)
            {
                if (ring[i] != null && ring[i].key() == key)
                {
                    return ring[i];
                }
            }
        }
        return null;
    }

    /**
     * @param key a key.
     * @return the first event of that exact key still in the history (its registration or bind), or null.
     */
    public Event firstOf(final int key)
    {
        final Event[] ring = byIndex.get(index(key));
        if (ring != null)
        {
            for (final Event e : ring)
            {
                if (e != null && e.key() == key)
                {
                    return e;
                }
            }
        }
        return null;
    }
}
