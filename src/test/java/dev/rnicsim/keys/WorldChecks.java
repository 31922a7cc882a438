package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyWorld.PAGE;
import static dev.rnicsim.keys.KeyWorld.plantedMttBug;

import dev.rnicsim.keys.WorldModel.Buf;
import dev.rnicsim.keys.WorldModel.KeyName;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.keys.WorldModel.Page;
import dev.rnicsim.keys.WorldModel.PdM;
import dev.rnicsim.keys.WorldModel.Ring;
import dev.rnicsim.mtt.MptEntry;
import dev.rnicsim.mtt.MptState;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.QpState;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;

/**
 * The checks of a {@link KeyWorld} against its model: the invariants after every step (counters, tables, keys, QP
 * states, the address space) and, at the end of a chain, every byte of every live MR and every present page. Not
 * thread safe.
 */
final class WorldChecks
{
    private final KeyWorld world;

    WorldChecks(final KeyWorld world)
    {
        this.world = world;
    }

    /** The live MRs and windows of the last check, refilled by each (its arrays grow, and are kept). */
    private final Holders holders = new Holders();
    /** Final byte checks made: the number of the current one, as {@link WorldModel.Frame#checkedIn} notes it. */
    private int bytesChecks;

    /** The invariants after every step: counters, tables and address space agree with the model. */
    void checkInvariants()
    {
        // The model's counters in one pass over the MRs (pinnedVmModel, liveMrs and mttModel each in one), which
        // also collects the live MRs, and one over the windows, for the keys' holders below.
        holders.clear();
        long pinned = 0;
        long mrLive = 0;
        long reserved = 0;
        final java.util.List<MrM> mrs = world.mrList;
        for (int i = 0, n = mrs.size(); i < n; i++)
        {
            final MrM m = mrs.get(i);
            if (m.live)
            {
                pinned += m.pages();
                mrLive++;
                reserved += m.reserved;
                holders.addMr(m);
            }
        }
        for (final Ring r : world.memory.rings)
        {
            pinned += r.pages;
        }
        final long mtt = plantedMttBug && mrLive >= 4 ? reserved + 1 : reserved;
        final long pinnedBytes = pinned * PAGE;
        if (world.step != null)
        {
            world.step.invariants = new long[] {pinned, mrLive, mtt, pinnedBytes};
        }
        world.expectEqual(pinned, world.appB.pinnedVmPages(), "pinned_vm of app_b (pages: live MR pins + CQ/QP rings)");
        world.expectEqual(mrLive, world.nicB.counter(SimCounter.MR_LIVE), "sim_mr_live");
        world.expectEqual(mtt, world.nicB.counter(SimCounter.MTT_ENTRIES_IN_USE),
            "sim_mtt_entries_in_use (sum of the live MRs' reserved MTT entries)");
        world.expectEqual(pinnedBytes, world.nicB.counter(SimCounter.PINNED_BYTES), "sim_pinned_bytes");
        final java.util.List<MwM> mws = world.mwList;
        for (int i = 0, n = mws.size(); i < n; i++)
        {
            final MwM w = mws.get(i);
            if (w.live)
            {
                holders.addWindow(w);
            }
        }
        final long mwLive = holders.windowCount();
        final dev.rnicsim.mtt.MptTable table = world.nicB.tables().mpt();
        world.expectEqual(mwLive, world.nicB.tables().windowCount(), "memory windows in the tables");
        world.expectEqual(world.mpt.liveCount(), table.inUse(), "MPT entries in use");
        world.expectEqual(mrLive + mwLive, table.inUse(), "MPT entries = MRs + windows");
        // Every key ever issued: live in the tables iff the model has a live holder, with its fields.
        final java.util.List<KeyName> keys = world.keyList;
        for (int i = 0, n = keys.size(); i < n; i++)
        {
            final KeyName k = keys.get(i);
            final Object holder = holders.of(k.value);
            // The entry agrees in every field compared below (or is absent, as it should be): nothing to make.
            if (holder == null ? table.accessBits(k.value) < 0 : holder instanceof MrM m
                ? table.holds(k.value, MptState.VALID, m.pd.sim.pdNum(), true, m.addr, m.lengthBytes, m.accessBits)
                : holder instanceof MwM w && table.holds(k.value, w.bound ? MptState.VALID : MptState.INVALID,
                    w.pd.sim.pdNum(), w.bound, w.lo, w.len, w.rightsBits))
            {
                continue;
            }
            final MptEntry e = table.entry(k.value);
            if (holder == null)
            {
                if (e != null)
                {
                    throw world.failure(k.name + " = " + Script.key(k.value) + " (" + k.issuer
                        + ") names a live MPT entry "
                        + e + ", the model none");
                }
                continue;
            }
            if (e == null)
            {
                throw world.failure(k.name + " = " + Script.key(k.value) + " should name " + describe(holder)
                    + " but names no live MPT entry");
            }
            if (holder instanceof MrM m)
            {
                world.expectEqual(m.pd.sim.pdNum(), e.pd(), k.name, ": PD of ", m.name);
                world.expectEqual(m.addr, e.iova(), k.name, ": iova of ", m.name);
                world.expectEqual(m.lengthBytes, e.lengthBytes(), k.name, ": length of ", m.name);
                world.expectEqual(m.accessBits, e.access(), k.name, ": access of ", m.name);
                world.expectEqual(MptState.VALID, e.state(), k.name, ": state of ", m.name);
            }
            else if (holder instanceof MwM w)
            {
                world.expectEqual(w.bound ? MptState.VALID : MptState.INVALID, e.state(), k.name, ": state of ",
                    w.name);
                world.expectEqual(w.pd.sim.pdNum(), e.pd(), k.name, ": PD of ", w.name);
                if (w.bound)
                {
                    world.expectEqual(w.lo, e.iova(), k.name, ": start of ", w.name);
                    world.expectEqual(w.len, e.lengthBytes(), k.name, ": length of ", w.name);
                    world.expectEqual(w.rightsBits, e.access(), k.name, ": rights of ", w.name);
                }
            }
        }
        for (int i = 0, n = mrs.size(); i < n; i++)
        {
            final MrM m = mrs.get(i);
            if (m.live)
            {
                world.expectEqual(m.key, m.sim.lkey(), m.name, ".lkey", "");
                world.expectEqual(m.key, m.sim.rkey(), m.name, ".rkey (mlx5: rkey == lkey)", "");
                world.expectEqual(m.windows, m.sim.boundWindows(), m.name, ": windows bound", "");
                world.expectEqual((long)m.pages(), m.sim.pinnedPages(), m.name, ".pinned_pages", "");
            }
            else if (m.sim != null)
            {
                world.expectEqual(true, m.sim.isClosed(), m.name, " closed", "");
            }
        }
        for (int i = 0, n = mws.size(); i < n; i++)
        {
            final MwM w = mws.get(i);
            if (w.sim == null)
            {
                continue;
            }
            world.expectEqual(!w.live, w.sim.isClosed(), w.name, " closed", "");
            if (w.live)
            {
                world.expectEqual(w.shownKey, w.sim.rkey(), w.name, ".rkey", "");
                world.expectEqual(w.bound, w.sim.isBound(), w.name, " bound", "");
            }
        }
        final java.util.List<PdM> pds = world.pdList;
        for (int i = 0, n = pds.size(); i < n; i++)
        {
            final PdM pd = pds.get(i);
            if (pd.pair != null && !pd.pair.broken && pd.pair.qb.live)
            {
                final QpState qa = pd.pair.qa.state();
                if (qa != QpState.RTS)
                {
                    world.expectEqual(QpState.RTS, qa, "qa" + pd.index + ".state");
                }
                final QpState qb = pd.pair.qb.sim.state();
                if (qb != QpState.RTS)
                {
                    world.expectEqual(QpState.RTS, qb, "qb" + pd.index + ".state");
                }
            }
        }
        if (!world.memory.mapsTheModelsPages())
        {
            final TreeSet<Long> sim = world.memory.simPages();
            final TreeSet<Long> extra = new TreeSet<>(sim);
            final TreeSet<Long> model = world.memory.modelPages();
            extra.removeAll(model);
            final TreeSet<Long> missing = new TreeSet<>(model);
            missing.removeAll(sim);
            throw world.failure("app_b's mapped pages differ from the model: mapped but not in the model "
                + hexes(extra)
                + ", in the model but not mapped " + hexes(missing));
        }
    }

    static String hexes(final Set<Long> vas)
    {
        return vas.stream().limit(8).map(v -> "0x" + Long.toHexString(v)).toList() + (vas.size() > 8 ? "..." : "");
    }

    static String describe(final Object holder)
    {
        return holder instanceof MrM m ? "MR " + m.name : holder instanceof MwM w ? "window " + w.name : "nothing";
    }

    // ------------------------------------------------------------------ final data check

    /**
     * Compares every byte of every live MR (read through the adapter's translation and the host's physical memory)
     * and of every present page of app_b (through its page table) with the model. At the first difference it adds a
     * step that shows it in the script: an RDMA READ of the MR (when it grants REMOTE_READ) or a CPU read of the
     * address, each with the model's bytes as its expectation, and runs it, so that the replay fails there too.
     */
    void checkAllBytes()
    {
        // One page of the simulator's bytes at a time, against the model's frame in place. A frame of zeros in the
        // model whose physical frame was never written (it reads as zeros) is not copied; a frame that one MR's pages
        // found whole and equal at a physical address is not read again for another MR or a page mapping it there
        // (the same bytes against the same model bytes).
        byte[] page = null; // made when a page must be read (most compare without)
        final int check = ++bytesChecks;
        final dev.rnicsim.pagetable.PhysicalMemory memory = world.hostB.host().physicalMemory();
        for (final MrM m : world.mrList)
        {
            if (!m.live)
            {
                continue;
            }
            int at = -1;
            for (long done = 0; done < m.lengthBytes && at < 0;)
            {
                final long va = m.addr + done;
                final int n = (int)Math.min(m.lengthBytes - done, PAGE - (va & (PAGE - 1)));
                final long phys = world.nicB.tables().translate(m.key, m.pd.sim.pdNum(), 0, va, n);
                if (phys < 0)
                {
                    throw world.failure("final check: " + m.name + " does not translate 0x" + Long.toHexString(va)
                        + ": "
                        + dev.rnicsim.mtt.KeyCheck.ofTranslation(phys));
                }
                final int in = (int)(va & (PAGE - 1));
                final WorldModel.Frame f = BetaMemory.mrFrame(m, va);
                if (f.checkedIn == check && f.checkedPhys == phys - in)
                {
                    done += n;
                    continue;
                }
                if (f.zeros() && memory.readsAsNeverWritten(phys, n))
                {
                    done += n; // zeros on both sides
                    continue;
                }
                if (page == null)
                {
                    page = new byte[(int)PAGE];
                }
                memory.read(phys, page, 0, n);
                final int differs = Arrays.mismatch(f.bytes(), in, in + n, page, 0, n);
                if (differs >= 0)
                {
                    at = (int)done + differs;
                }
                else if (n == PAGE && f != WorldModel.ZERO)
                {
                    // The whole frame agrees: the pages below need not read it again if one still maps it here.
                    f.checkedPhys = phys;
                    f.checkedIn = check;
                }
                done += n;
            }
            if (at < 0)
            {
                continue;
            }
            final byte[] want = BetaMemory.mrRead(m, m.addr, (int)m.lengthBytes);
            final byte[] got = new byte[(int)m.lengthBytes];
            for (long done = 0; done < m.lengthBytes;)
            {
                final long va = m.addr + done;
                final int n = (int)Math.min(m.lengthBytes - done, PAGE - (va & (PAGE - 1)));
                world.hostB.host().physicalMemory().read(world.nicB.tables().translate(m.key, m.pd.sim.pdNum(), 0, va,
                    n), got,
                    (int)done, n);
                done += n;
            }
            final long addr = m.addr + at;
            final int len = (int)Math.min(32, m.lengthBytes - at);
            final String detail = "final check: " + m.name + "'s bytes at 0x" + Long.toHexString(addr) + " are "
                + Script.hex(Arrays.copyOfRange(got, at, at + len)) + ", the model's "
                + Script.hex(Arrays.copyOfRange(want, at, at + len)) + " (read through the adapter's translation)";
            final int keyN = nameOf(m.key);
            final Buf b = bufferOf(addr);
            if (m.access.contains(Access.REMOTE_READ) && keyN >= 0 && b != null)
            {
                world.current = "final check of " + m.name;
                world.remoteAccess.access(KeyOps.Op.READ, m.pd.index, keyN, b.name(), addr - b.addr(), len, null, 0, 0);
            }
            throw world.failure(Mismatch.Kind.BYTES, detail);
        }
        for (final long va : world.memory.pages.sortedAddresses())
        {
            final Page p = world.memory.pages.get(va);
            final long phys = world.appB.translate(va);
            if (p.swapped || p.frame == null || phys < 0
                || p.frame.checkedIn == check && p.frame.checkedPhys == phys)
            {
                continue;
            }
            if (p.frame.zeros() && memory.readsAsNeverWritten(phys, (int)PAGE))
            {
                continue; // zeros on both sides
            }
            if (page == null)
            {
                page = new byte[(int)PAGE];
            }
            final byte[] got = page;
            memory.read(phys, got, 0, got.length);
            final int at = Arrays.mismatch(p.frame.bytes(), got);
            if (at < 0)
            {
                continue;
            }
            final long addr = va + at;
            final int len = (int)Math.min(32, PAGE - at);
            final Buf b = bufferOf(addr);
            if (b != null)
            {
                world.memoryVerbs.cpuRead(b.name(), addr - b.addr(), len);
            }
            throw world.failure(Mismatch.Kind.BYTES, "final check: the bytes at 0x" + Long.toHexString(addr) + " are "
                + Script.hex(Arrays.copyOfRange(got, at, at + len)) + ", the model's "
                + Script.hex(Arrays.copyOfRange(p.frame.bytes(), at, at + len)));
        }
    }

    /** The newest key name with this value, or -1. */
    private int nameOf(final int key)
    {
        int found = -1;
        for (final KeyName k : world.keyList)
        {
            if (k.value == key)
            {
                found = k.label;
            }
        }
        return found;
    }

    /** The newest buffer whose range holds {@code addr}, or null. */
    private Buf bufferOf(final long addr)
    {
        Buf found = null;
        for (final Buf b : world.bufs.values())
        {
            if (addr >= b.addr() && addr < b.addr() + b.lengthBytes())
            {
                found = b;
            }
        }
        return found;
    }
}
