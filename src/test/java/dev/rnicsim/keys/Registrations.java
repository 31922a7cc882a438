package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyWorld.PAGE;
import static dev.rnicsim.keys.KeyWorld.WRITABLE;
import static dev.rnicsim.keys.KeyWorld.run;

import dev.rnicsim.keys.WorldModel.Frame;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.keys.WorldModel.PdM;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ReregFlag;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Memory registration in a {@link KeyWorld}: ibv_reg_mr, ibv_dereg_mr and ibv_rereg_mr, each predicted from the model
 * (rights, RLIMIT_MEMLOCK, mapped pages, a full MPT, bound windows), run, compared, and applied: the pages pinned, the
 * MTT entries reserved (exact or buddy), the key the policy hands out. Not thread safe.
 */
final class Registrations
{
    private final KeyWorld world;

    Registrations(final KeyWorld world)
    {
        this.world = world;
    }

    // ------------------------------------------------------------------ actions: registration

    void reg(final String mr, final int pdIndex, final String buf, final long off, final long len,
        final Set<Access> access, final int keyN)
    {
        final Script.Line line = () -> "reg " + mr + " pd_b" + pdIndex + " " + Script.at(buf, off) + " "
            + Script.size(len) + " access=" + KeyOps.words(access);
        if (!(world.pdBound(pdIndex) && world.bound.contains(buf)) && world.skipUnbound(line, "pd_b" + pdIndex, buf))
        {
            world.issueKey(keyN, mr, null, 0, 0, 0, true);
            return;
        }
        world.start(line);
        final PdM pd = world.pds.get(pdIndex);
        final long addr = world.bufAddr(buf) + off;
        final int npages = MrM.pages(addr, len);
        final boolean write = !java.util.Collections.disjoint(access, WRITABLE);
        final String predicted;
        boolean faults = false;
        if (!pd.live)
        {
            predicted = "EINVAL";
        }
        else if ((access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
            && !access.contains(Access.LOCAL_WRITE))
        {
            predicted = "EINVAL";
        }
        else if (world.pinnedVmModel() + npages > world.params.memlockBytes() / PAGE)
        {
            predicted = "ENOMEM";
        }
        else if (!world.memory.allMapped(addr, len))
        {
            predicted = "EFAULT";
        }
        else
        {
            faults = true;
            predicted = world.mpt.full() ? "ENOMEM" : "ok";
        }
        world.expectLine(predicted);
        final MemoryRegion[] got = new MemoryRegion[1];
        final KeyWorld.Result r = run(() -> got[0] = pd.sim.regMr(addr, len, EnumSet.copyOf(access.isEmpty()
            ? EnumSet.noneOf(Access.class) : access)));
        world.expectOutcome(predicted, r);
        if (faults)
        {
            // The pages were faulted in (and pinned) before the MPT refused: the faults stay, the pins go.
            final Frame[] frames = world.memory.pin(addr, len, write);
            if (!predicted.equals("ok"))
            {
                BetaMemory.unpin(frames);
            }
            else
            {
                final MrM m = new MrM(mr);
                m.sim = (SimMr)got[0];
                m.pd = pd;
                m.addr = addr;
                m.lengthBytes = len;
                m.access(access);
                m.frames = frames;
                m.writePin = write;
                m.live = true;
                m.key = m.sim.lkey();
                learnEntries(m);
                world.allocatedKey(mr, "lkey", m.key, false);
                world.putMr(m);
                world.bound.add(mr);
                world.issueKey(keyN, mr, "lkey", m.key, addr, len, true);
                return;
            }
        }
        world.issueKey(keyN, mr, null, 0, addr, len, true);
    }

    /** MTT entries of a new translation, read from the MR, checked against its page size. */
    private void learnEntries(final MrM m)
    {
        final long pageSize = m.sim.pageSizeBytes();
        if (pageSize < PAGE || Long.bitCount(pageSize) != 1)
        {
            throw world.failure(m.name + ": page size " + pageSize + " is no power of two of 4 KiB or more");
        }
        final long blocks = (((m.addr + m.lengthBytes + pageSize - 1) & -pageSize) - (m.addr & -pageSize)) / pageSize;
        m.entries = m.sim.mttEntries();
        if (blocks != m.entries)
        {
            world.expectEqual(blocks, m.entries, m.name + ".mtt_entries for page size " + pageSize);
        }
        m.reserved = world.params.reserved(m.entries);
        world.expectEqual(m.reserved, m.sim.mttEntriesReserved(), m.name, ".mtt_reserved (", world.params.buddyMtt()
            ? "buddy: a power of two, at least a segment of 8)" : "exact allocator)");
    }

    void dereg(final String mr)
    {
        final Script.Line line = () -> "dereg " + mr;
        if (world.skipUnbound(line, mr))
        {
            return;
        }
        world.start(line);
        final MrM m = world.mrs.get(mr);
        if (!m.live)
        {
            // The script refuses to deregister a name twice; the verbs API's close is idempotent.
            world.expectLine("EINVAL");
            world.expectEqual(true, m.sim.isClosed(), mr + " closed");
            return;
        }
        // mlx5 (DEREG_MR_INVALIDATES_BOUND_WINDOWS) lets the MR go and its windows translate nothing; others refuse
        final boolean letsGo = world.nicB.profile().follows(
            dev.rnicsim.simnic.ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS);
        final String predicted = m.windows > 0 && !letsGo ? "EINVAL" : "ok";
        world.expectLine(predicted);
        world.expectOutcome(predicted, run(() -> m.sim.close()));
        if (predicted.equals("ok"))
        {
            for (final MwM w : world.mwList)
            {
                if (w.bound && w.mr == m)
                {
                    w.bound = false;
                    w.mr = null;
                    w.lo = 0;
                    w.len = 0;
                    w.rights(Set.of());
                    w.qp = null;
                }
            }
            m.windows = 0;
            deregistered(m);
        }
    }

    void deregistered(final MrM m)
    {
        BetaMemory.unpin(m.frames);
        world.mpt.freed(m.key, false);
        world.mrKeyDied(m.key);
        m.live = false;
    }

    private static long mkeyCapacity(final long entries)
    {
        return entries <= 1 ? 1 : Long.highestOneBit(entries - 1) << 1;
    }

    void rereg(final String mr, final Integer pdIndex, final String buf, final long off, final long len,
        final Set<Access> access, final int keyN)
    {
        final StringBuilder sb = new StringBuilder("rereg " + mr);
        if (pdIndex != null)
        {
            sb.append(" pd=pd_b").append(pdIndex);
        }
        if (buf != null)
        {
            sb.append(" addr=").append(Script.at(buf, off)).append(" size=").append(Script.size(len));
        }
        if (access != null)
        {
            sb.append(" access=").append(KeyOps.words(access));
        }
        final String line = sb.toString();
        final List<String> needed = new ArrayList<>(List.of(mr));
        if (pdIndex != null)
        {
            needed.add("pd_b" + pdIndex);
        }
        if (buf != null)
        {
            needed.add(buf);
        }
        if (world.skipUnbound(line, needed.toArray(String[]::new)))
        {
            world.issueKey(keyN, mr, null, 0, 0, 0, true);
            return;
        }
        world.start(line);
        final MrM m = world.mrs.get(mr);
        final PdM target = pdIndex == null ? null : world.pds.get(pdIndex);
        final boolean translation = buf != null;
        final long newAddr = translation ? world.bufAddr(buf) + off : m.addr;
        final long newLen = translation ? len : m.lengthBytes;
        final Set<Access> rights = access != null ? access : m.access;
        final Set<ReregFlag> flags = EnumSet.noneOf(ReregFlag.class);
        if (pdIndex != null)
        {
            flags.add(ReregFlag.CHANGE_PD);
        }
        if (translation)
        {
            flags.add(ReregFlag.CHANGE_TRANSLATION);
        }
        if (access != null)
        {
            flags.add(ReregFlag.CHANGE_ACCESS);
        }
        // SimPd.rereg's order: the library's input checks, then the kernel's, then the change.
        String predicted = null;
        if (!m.live)
        {
            predicted = "EINVAL";
        }
        else if (flags.isEmpty())
        {
            predicted = "EINVAL";
        }
        else if (target != null && (!target.live || target.sim.context() != m.pd.sim.context()))
        {
            predicted = "EINVAL";
        }
        else if (access != null && (access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
            && !access.contains(Access.LOCAL_WRITE))
        {
            predicted = "EINVAL";
        }
        else if (m.windows > 0)
        {
            predicted = "EINVAL";
        }
        final boolean writePin = !java.util.Collections.disjoint(rights, WRITABLE);
        // mlx5 and rxe register anew, pinned for writing, an access change that needs it (a read-only pin).
        final boolean repin = translation || writePin && !m.writePin;
        final int newPages = MrM.pages(newAddr, newLen);
        boolean faults = false;
        boolean uncertain = false;
        if (predicted == null && repin)
        {
            if (world.pinnedVmModel() + newPages > world.params.memlockBytes() / PAGE)
            {
                predicted = "ENOMEM";
            }
            else if (!world.memory.allMapped(newAddr, newLen))
            {
                predicted = "EFAULT";
            }
            else
            {
                faults = true;
                // In place when the new translation fits the mkey's entries (can_use_umr_rereg_pas); at most one
                // entry per page, so it surely fits when its pages do; else it depends on the page size.
                final boolean surelyInPlace = newPages <= mkeyCapacity(m.entries);
                if (surelyInPlace || !world.mpt.full())
                {
                    predicted = "ok";
                }
                else
                {
                    uncertain = true;
                }
            }
        }
        else if (predicted == null)
        {
            predicted = "ok";
        }
        if (!uncertain)
        {
            world.expectLine(predicted);
        }
        final PdM newPd = target != null ? target : m.live ? m.pd : null;
        final KeyWorld.Result r = run(() -> m.sim.rereg(flags, target == null ? null : target.sim,
            translation ? newAddr : 0,
            translation ? newLen : 0, access == null ? Set.of() : access));
        if (uncertain)
        {
            if (!r.ok() && !r.errno().equals("ENOMEM"))
            {
                world.expectOutcome("ENOMEM", r);
            }
            predicted = r.errno();
            world.expectLine(predicted);
            world.line("# (the model allowed ENOMEM or a rereg in place here: it depends on the new page size)");
        }
        world.expectOutcome(predicted, r);
        if (faults)
        {
            final Frame[] frames = world.memory.pin(newAddr, newLen, writePin);
            if (!predicted.equals("ok"))
            {
                BetaMemory.unpin(frames);
            }
            else
            {
                final int oldKey = m.key;
                final long oldEntries = m.entries;
                final Frame[] old = m.frames;
                m.frames = frames;
                m.addr = newAddr;
                m.lengthBytes = newLen;
                m.access(rights);
                m.writePin = writePin;
                m.pd = newPd;
                learnEntries(m);
                final boolean fits = m.entries <= mkeyCapacity(oldEntries);
                final int newKey = m.sim.lkey();
                if (fits)
                {
                    world.expectEqual(Mismatch.Kind.KEY, oldKey, newKey, "key after a rereg in place (" + m.entries
                        + " entries fit the mkey's "
                        + mkeyCapacity(oldEntries) + ")");
                }
                else
                {
                    if (newKey == oldKey)
                    {
                        throw world.failure(Mismatch.Kind.KEY, "rereg kept key " + Script.key(oldKey) + " though "
                            + m.entries
                            + " entries do not fit the mkey's " + mkeyCapacity(oldEntries)
                            + " (REREG_TRANSLATION_NEW_KEY)");
                    }
                    world.allocatedKey(mr, "lkey", newKey, false);
                    world.mpt.freed(oldKey, false);
                    world.mrKeyDied(oldKey);
                    m.key = newKey;
                }
                BetaMemory.unpin(old);
            }
        }
        else if (predicted.equals("ok"))
        {
            m.access(rights);
            m.pd = newPd;
        }
        world.issueKey(keyN, mr, "lkey", m.sim == null ? 0 : m.sim.lkey(), m.addr, m.lengthBytes, true);
        if (m.live && m.sim.lkey() != m.key)
        {
            throw world.failure(Mismatch.Kind.KEY, mr + ".lkey is " + Script.key(m.sim.lkey()) + ", the model "
                + Script.key(m.key));
        }
    }
}
