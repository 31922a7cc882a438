package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.AdapterConfig;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.IndexPolicy;
import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MptState;
import dev.rnicsim.mtt.MptTable;
import dev.rnicsim.mtt.Mtt;
import dev.rnicsim.mtt.MttAllocatorKind;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.MttOccupancy;
import dev.rnicsim.mtt.MttRange;
import dev.rnicsim.mtt.PageSizeSelector;
import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.mtt.VariantPolicy;
import java.util.ArrayList;
import java.util.List;

/**
 * The adapter tables' errno paths (module mtt) reached through their Java API, as a program that models an
 * adapter's MTT, MPT and translation cache directly calls them: configurations, registration, windows, fast
 * registration and on-demand paging. Stateless.
 */
final class ErrnoWalkTables
{
    private static final long BUF = 0x1000_0000L;
    private static final long LEN = 0x1_0000L;
    private static final int LW = AccessFlags.LOCAL_WRITE;

    private ErrnoWalkTables()
    {
    }

    private static AdapterTables tables()
    {
        return new AdapterTables(new AdapterConfig(MttConfig.exact(1 << 16), MptConfig.of(1024,
            VariantPolicy.GENERATION), 0xffff_f000L, 64, 4));
    }

    private static List<DmaRun> runs()
    {
        return List.of(new DmaRun(0x10_0000L, LEN));
    }

    private static int mr(final AdapterTables t)
    {
        return t.register(1, runs(), BUF, LEN, BUF, LW).key();
    }

    /** @return every case. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        // configurations
        c.add(c("an adapter without MTT or MPT configuration", "EINVAL",
            () -> new AdapterConfig(null, null, 0xfffff000L, 64, 4), "MTT and MPT configurations"));
        c.add(c("an adapter with page_size_cap 0", "EINVAL", () -> new AdapterConfig(MttConfig.exact(16),
            MptConfig.of(16, VariantPolicy.GENERATION), 0, 64, 4), "page_size_cap=0"));
        c.add(c("an MPT with 0 variant bits", "EINVAL",
            () -> new MptConfig(16, 0, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0), "variantBits=0"));
        c.add(c("an MPT of one entry", "EINVAL", () -> MptConfig.of(1, VariantPolicy.GENERATION), "max_mr=1"));
        c.add(c("an MPT without policies", "EINVAL", () -> new MptConfig(16, 8, null, null, 0), "variantPolicy"));
        c.add(c("an MTT without an allocator", "EINVAL", () -> new MttConfig(null, 0, 0, 16),
            "MttAllocatorKind.BUDDY"));
        c.add(c("an MTT with 8 entries per segment", "EINVAL", () -> MttConfig.buddy(10, 8), "log_mtts_per_seg=8"));
        c.add(c("a buddy MTT of too many segments", "EINVAL", () -> MttConfig.buddy(40, 0), "log_num_mtt=40"));
        c.add(c("an MTT with more entries than addressable", "EINVAL", () -> MttConfig.buddy(28, 7),
            "log_mtts_per_seg="));
        c.add(c("a buddy MTT with an entry count", "EINVAL",
            () -> new MttConfig(MttAllocatorKind.BUDDY, 10, 0, 16), "capacityEntries=16"));
        c.add(c("an exact MTT of no entries", "EINVAL", () -> MttConfig.exact(0), "capacityEntries=0"));
        c.add(c("a translation cache whose ways do not divide it", "EINVAL", () -> new TranslationCache(10, 4),
            "cannot have 4 ways"));
        c.add(c("a translation-cache tag that is negative", "EINVAL", () -> new TranslationCache(64, 4).access(-1),
            "mptTag()"));
        c.add(c("a translation-cache invalidation of a negative range", "EINVAL",
            () -> new TranslationCache(64, 4).invalidate(-1, 0, 0), "mptIndex=-1"));
        // MTT and MPT
        c.add(c("an MTT allocation of no entries", "EINVAL", () -> new Mtt(MttConfig.exact(16)).allocate(0),
            "MTT entries=0"));
        c.add(c("an MTT occupancy reservation of no entries", "EINVAL",
            () -> new MttOccupancy(MttConfig.exact(16)).tryReserve(0), "MTT entries=0"));
        c.add(c("an MTT range freed twice", "EINVAL", () -> {
            final Mtt m = new Mtt(MttConfig.exact(16));
            final MttRange r = m.allocate(4);
            m.free(r);
            m.free(r);
        }, "not a range this MTT handed out"));
        c.add(c("an MTT write past its range", "EINVAL", () -> {
            final Mtt m = new Mtt(MttConfig.exact(16));
            m.write(m.allocate(4), 4, 0x1000);
        }, "write: block 4"));
        c.add(c("an MTT entry read outside the table", "EINVAL", () -> new Mtt(MttConfig.exact(16)).entry(16),
            "MTT entry 16"));
        c.add(c("an MPT entry in state FREE", "EINVAL", () -> new MptTable(MptConfig.of(16,
            VariantPolicy.GENERATION)).allocate(MptState.FREE, 1, BUF, LEN, LW, 12, new MttRange(0, 1, 1)),
            "state INVALID or VALID"));
        c.add(c("an MPT entry with page shift 63", "EINVAL", () -> new MptTable(MptConfig.of(16,
            VariantPolicy.GENERATION)).allocate(MptState.VALID, 1, BUF, LEN, LW, 63, new MttRange(0, 1, 1)),
            "pageShift=63"));
        c.add(c("an MPT entry set FREE", "EINVAL", () -> {
            final MptTable t = new MptTable(MptConfig.of(16, VariantPolicy.GENERATION));
            t.setState(t.allocate(MptState.VALID, 1, BUF, LEN, LW, 12, new MttRange(0, 1, 1)), MptState.FREE);
        }, "state FREE", "use free()"));
        c.add(c("an MPT entry freed twice", "EINVAL", () -> {
            final MptTable t = new MptTable(MptConfig.of(16, VariantPolicy.GENERATION));
            final int k = t.allocate(MptState.VALID, 1, BUF, LEN, LW, 12, new MttRange(0, 1, 1));
            t.free(k);
            t.free(k);
        }, "names no live MPT entry"));
        // page sizes and DMA runs (ib_umem_find_best_pgsz)
        c.add(c("a DMA run that is not 4 KiB aligned", "EINVAL", () -> new DmaRun(0x800, 4096), "4096-aligned"));
        c.add(c("a page-size choice with an iova that wraps", "EINVAL",
            () -> PageSizeSelector.choose(runs(), BUF, LEN, -4096, 0xffff_f000L), "overflows"));
        c.add(c("a page-size choice without runs", "EINVAL",
            () -> PageSizeSelector.choose(List.of(), BUF, LEN, BUF, 0xffff_f000L), "at least one DMA run"));
        c.add(c("a page-size choice of a length near 2^63", "EINVAL",
            () -> PageSizeSelector.choose(runs(), BUF + 1, Long.MAX_VALUE - 10, BUF + 1, 0xffff_f000L),
            "too large"));
        c.add(c("a page-size choice with runs shorter than the buffer", "EINVAL",
            () -> PageSizeSelector.choose(runs(), BUF, 2 * LEN, BUF, 0xffff_f000L), "fewer than"));
        c.add(c("a DMA-block count for a page size that is no power of two", "EINVAL",
            () -> PageSizeSelector.numDmaBlocks(BUF, LEN, 3000), "power-of-two"));
        // registration through the tables
        c.add(c("a registration with unknown access bits", "EINVAL",
            () -> tables().register(1, runs(), BUF, LEN, BUF, 1 << 12), "IB_ACCESS_SUPPORTED"));
        c.add(c("a registration of remote write without local write", "EINVAL",
            () -> tables().register(1, runs(), BUF, LEN, BUF, AccessFlags.REMOTE_WRITE), "need LOCAL_WRITE"));
        c.add(c("a registration of zero bytes", "EINVAL", () -> tables().register(1, runs(), BUF, 0, BUF, LW),
            "is empty"));
        c.add(c("a registration whose iova has another page offset", "EINVAL",
            () -> tables().register(1, runs(), BUF, LEN, BUF + 8, LW), "page offset"));
        c.add(c("a page-size choice of an empty buffer", "EINVAL", () -> tables().choose(runs(), BUF, 0, BUF),
            "is empty, wraps"));
        c.add(c("a registration no page size fits", "EINVAL", () -> new AdapterTables(new AdapterConfig(
            MttConfig.exact(1 << 16), MptConfig.of(1024, VariantPolicy.GENERATION), 1L << 21, 64, 4))
            .register(1, runs(), BUF, LEN, BUF, LW), "no page size in page_size_cap"));
        c.add(c("a deregistration twice", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int k = mr(t);
            t.deregister(k);
            t.deregister(k);
        }, "names no live MR"));
        c.add(c("a window deregistered as an MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            t.deregister(t.allocateWindow(1, 1));
        }, "names a memory window"));
        c.add(c("a rereg of a key that is no pinned MR", "EINVAL", () -> tables().modify(0x1234, 1, LW),
            "names no live pinned user MR"));
        // on-demand paging
        c.add(c("an ODP MR with page shift 40", "EINVAL", () -> tables().registerOnDemand(1, LEN, BUF, LW, 40),
            "page shift 40"));
        c.add(c("an implicit ODP MR of no length", "EINVAL", () -> tables().registerImplicit(1, 0, LW),
            "must be positiv"));
        c.add(c("an ODP fault through a key that is no ODP MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            t.firstUnmapped(mr(t), BUF, 4096, false);
        }, "names no live ODP MR"));
        c.add(c("an ODP mapping outside its MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            t.mapOnDemand(t.registerOnDemand(1, LEN, BUF, LW, 12).key(), BUF + 2 * LEN, 0x1000, true);
        }, "is outside the MR"));
        c.add(c("the children of an explicit ODP MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            t.implicitChildren(t.registerOnDemand(1, LEN, BUF, LW, 12).key());
        }, "explicit ODP MR"));
        // windows
        c.add(c("a window of type 3", "EINVAL", () -> tables().allocateWindow(1, 3), "expected 1 or 2"));
        c.add(c("a bind of a key that is no window", "EINVAL", () -> tables().bindWindow(0x1234, 0x1234, 0, 1, BUF,
            4096, 0), "names no live window"));
        c.add(c("a bind with a key of another index", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int w = t.allocateWindow(1, 1);
            t.bindWindow(w, w + 0x100, mr(t), 1, BUF, 4096, AccessFlags.REMOTE_READ);
        }, "must keep the index"));
        c.add(c("a bind to a key that is no MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int w = t.allocateWindow(1, 1);
            t.bindWindow(w, w + 1, 0x7777, 1, BUF, 4096, AccessFlags.REMOTE_READ);
        }, "names no live MR"));
        c.add(c("a bind outside the MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int w = t.allocateWindow(1, 1);
            t.bindWindow(w, w + 1, mr(t), 1, BUF, 2 * LEN, AccessFlags.REMOTE_READ);
        }, "is outside the MR"));
        c.add(c("an invalidation of a key that is no window", "EINVAL", () -> tables().invalidateWindow(0x1234),
            "names no live window"));
        c.add(c("a window freed twice", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int w = t.allocateWindow(1, 1);
            t.freeWindow(w);
            t.freeWindow(w);
        }, "names no live window"));
        // fast registration
        c.add(c("a fast-registration MR of no pages", "EINVAL", () -> tables().allocateFastReg(1, 0),
            "max_num_sg=0"));
        c.add(c("a REG_MR of a user MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int k = mr(t);
            t.fastRegister(k, k + 1, runs(), BUF, LEN, BUF, LW);
        }, "names no fast-registration"));
        c.add(c("a REG_MR of a VALID MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int k = t.allocateFastReg(1, 16);
            t.fastRegister(k, k + 1, runs(), BUF, LEN, BUF, LW);
            t.fastRegister(k + 1, k + 2, runs(), BUF, LEN, BUF, LW);
        }, "is VALID", "invalidate it"));
        c.add(c("a REG_MR with a key of another index", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int k = t.allocateFastReg(1, 16);
            t.fastRegister(k, k + 0x100, runs(), BUF, LEN, BUF, LW);
        }, "must keep the index"));
        c.add(c("a REG_MR of more pages than the MR holds", "EINVAL", () -> {
            final AdapterTables t = tables();
            final int k = t.allocateFastReg(1, 2);
            t.fastRegister(k, k + 1, runs(), BUF, LEN, BUF, LW);
        }, "max_num_sg=2"));
        c.add(c("a LOCAL_INV of a user MR", "EINVAL", () -> {
            final AdapterTables t = tables();
            t.invalidateFastReg(mr(t));
        }, "names no fast-registration"));
        return c;
    }
}
