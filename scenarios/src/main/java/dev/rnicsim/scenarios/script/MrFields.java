package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.MKey;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.StrategyCounters;

/**
 * The fields of the objects that carry keys ({@code NAME.FIELD} in a script): MRs of every kind (pinned, on-demand
 * paging, peer memory), fast-registration MRs, memory windows, pool fragments and cache handles, and the counters of
 * pools and caches. A key's index and variant are read as the device's key format has them ({@link MKey}, its
 * variant width a profile property). Stateless.
 */
final class MrFields
{
    private MrFields()
    {
    }

    /** The key variant width of the device of a PD (8 on most drivers, 16 on hfi1's rdmavt lkeys). */
    private static int variantBits(final SimPd pd)
    {
        return pd.context().device().profile().traits().keyVariantBits();
    }

    /** @return the MPT index a key of the device of a PD names ({@link MKey#index}). */
    static long keyIndex(final SimPd pd, final int key)
    {
        return MKey.index(key, variantBits(pd));
    }

    /** @return the variant (the consumer-owned low bits) of a key of the device of a PD. */
    static int keyVariant(final SimPd pd, final int key)
    {
        return MKey.variant(key, variantBits(pd));
    }

    /**
     * The fields every MR has: its range, its keys (their index and variant as the device of its PD has them) and
     * whether it is closed; 0 for a field it lacks.
     */
    private static long commonField(final MemoryRegion m, final SimPd pd, final String field)
    {
        return switch (field)
        {
            case "addr" -> m.addr();
            case "length" -> m.lengthBytes();
            case "iova" -> m.iova();
            case "lkey" -> m.lkey() & 0xffffffffL;
            case "rkey" -> m.rkey() & 0xffffffffL;
            case "index" -> keyIndex(pd, m.lkey());
            case "variant" -> keyVariant(pd, m.lkey());
            case "closed" -> m.isClosed() ? 1 : 0;
            default -> 0;
        };
    }

    /** A field of a pinned MR: the MR fields, its page size, MTT entries and pinned pages. */
    static long mrField(final SimMr m, final String field)
    {
        return switch (field)
        {
            case "page_size" -> m.pageSizeBytes();
            case "mtt_entries" -> m.mttEntries();
            case "mtt_reserved" -> m.mttEntriesReserved();
            case "pinned_pages" -> m.pinnedPages();
            default -> commonField(m, m.pd(), field);
        };
    }

    /**
     * A field of an on-demand-paging MR: the MR fields (nothing pinned; MTT entries as {@link OdpPages#mttEntries})
     * and its ODP figures.
     */
    static long odpField(final SimOdpMr m, final String field)
    {
        return switch (field)
        {
            case "page_size" -> 1L << m.pageShift();
            case "mtt_entries", "mtt_reserved" -> OdpPages.mttEntries(m);
            case "odp" -> 1;
            case "implicit" -> m.isImplicit() ? 1 : 0;
            case "page_faults" -> m.pageFaults();
            case "entries_mapped" -> m.entriesMapped();
            case "entries_zapped" -> m.entriesZapped();
            case "children" -> m.implicitChildren();
            case "mapped_pages" -> OdpPages.mappedBlocks(m);
            default -> commonField(m, m.pd(), field);
        };
    }

    /**
     * A field of an MR over GPU memory: the MR fields (nothing pinned in host memory), its BAR1 mapping, the
     * move_notify calls it received, the faults that re-mapped it, whether it was revoked.
     */
    static long peerField(final SimPeerMr m, final String field)
    {
        return switch (field)
        {
            case "page_size" ->
            {
                final int shift = m.pd().context().device().tables().pageShift(m.lkey());
                yield shift < 0 ? 0 : 1L << shift;
            }
            case "mtt_entries", "mtt_reserved" -> m.mttEntries();
            case "page_faults" -> m.pageFaults();
            case "moves" -> m.moves();
            case "revoked" -> m.isRevoked() ? 1 : 0;
            case "bar1" -> m.bar1MappedBytes();
            default -> commonField(m, m.pd(), field);
        };
    }

    /** A field of a fast-registration MR. */
    static long fastMrField(final SimFastRegMr f, final String field)
    {
        return switch (field)
        {
            case "addr", "iova" -> f.addr();
            case "length" -> f.lengthBytes();
            case "lkey" -> f.lkey() & 0xffffffffL;
            case "rkey" -> f.rkey() & 0xffffffffL;
            case "index" -> keyIndex(f.pd(), f.lkey());
            case "variant" -> keyVariant(f.pd(), f.lkey());
            case "max_num_sg" -> f.maxNumSg();
            case "valid" -> f.isValid() ? 1 : 0;
            case "closed" -> f.isClosed() ? 1 : 0;
            default -> 0;
        };
    }

    /** A field of a memory window. */
    static long mwField(final SimMw w, final String field)
    {
        return switch (field)
        {
            case "rkey" -> w.rkey() & 0xffffffffL;
            case "type" -> w.type().code();
            case "index" -> keyIndex(w.pd(), w.rkey());
            case "variant" -> keyVariant(w.pd(), w.rkey());
            case "bound" -> w.isBound() ? 1 : 0;
            case "addr" -> w.addr();
            case "length" -> w.lengthBytes();
            case "qp" -> w.boundQp() == null ? 0 : w.boundQp().qpNum();
            case "closed" -> w.isClosed() ? 1 : 0;
            default -> 0;
        };
    }

    /** A field of a pool fragment. */
    static long fragmentField(final MemoryPool.Fragment f, final String field)
    {
        return switch (field)
        {
            case "addr" -> f.addr();
            case "length" -> f.lengthBytes();
            case "lkey" -> f.lkey() & 0xffffffffL;
            case "rkey" -> f.rkey() & 0xffffffffL;
            default -> 0;
        };
    }

    /** A field of a cache handle. */
    static long handleField(final Session.HandleBinding h, final String field)
    {
        return switch (field)
        {
            case "addr" -> h.addr();
            case "length" -> h.lengthBytes();
            case "lkey" -> h.handle().lkey() & 0xffffffffL;
            case "rkey" -> h.handle().rkey() & 0xffffffffL;
            case "hit" -> h.hit() ? 1 : 0;
            default -> 0;
        };
    }

    /**
     * A field of a pool or a cache: its counters, and {@code fragments} (a pool's fragments out) or {@code idle}
     * (a cache's idle entries), both given as {@code extra}.
     */
    static long strategyField(final StrategyCounters c, final long extra, final String field)
    {
        return switch (field)
        {
            case "hits" -> c.hits();
            case "misses" -> c.misses();
            case "evictions" -> c.evictions();
            case "invalidations" -> c.invalidations();
            case "registrations" -> c.registrations();
            case "bytes_registered" -> c.bytesRegistered();
            case "live" -> c.liveMrs();
            case "live_bytes" -> c.liveBytes();
            case "fragments", "idle" -> extra;
            default -> 0;
        };
    }
}
