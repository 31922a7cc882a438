package dev.rnicsim.simnic;

import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptEntry;
import dev.rnicsim.mtt.MptState;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MwType;
import java.util.List;
import java.util.Locale;

/**
 * What a refused key's diagnosis says beyond the check that failed, looked up on the device when the key is refused:
 * which live MR of the PD covers the range asked (the key to use instead), which other device of the fabric issued
 * a key this device never issued, and whether the key names a memory window that is not bound (never bound, unbound,
 * invalidated by LOCAL_INV or SEND_WITH_INV, or left translating nothing by its MR's deregistration).
 *
 * <p>A key names an MPT entry of the device that issued it (the lkey and rkey of ibv_reg_mr(3) are the device's
 * handles), and a window's rkey grants access only while the window is bound (ibv_bind_mw(3), ibv_alloc_mw(3):
 * invalidation and unbinding end it; on mlx5 so does {@code mlx5_ib_dereg_mr}, which destroys the mkey under the
 * window's indirect mkey). The status a device gives stays the device's (a key check answers LOC_PROT_ERR or
 * REM_ACCESS_ERR): only the words change.
 *
 * <p>Immutable and thread safe; made on the failure path only, once per refused key. The searches run at the failure;
 * what they found is kept as values and put into words only when the diagnosis is read.
 *
 * @param covering       the live MR of the PD covering the range asked, described with its key when written, or null.
 * @param elsewhere      the other device of the fabric that issued this key, described when written, or null.
 * @param windowType     for a key naming a live window that is not bound: 1 or 2; else 0.
 * @param processes      for a key of another PD whose process is not the QP's: both processes, described when
 *                       written; else null.
 * @param neverIssued    true when the device never issued the key: its index holds nothing and never held it, or
 *                       the index's whole history (fewer events than {@link KeyHistory#EVENTS_PER_INDEX}) is of
 *                       ordinary MRs and none had this key.
 * @param beforeBind     true when the key's index holds a bound window and the key is not one it was bound under:
 *                       most likely the rkey the window had before its bind ({@code mw->rkey} of ibv_alloc_mw).
 */
record KeyAdvice(Covering covering, Elsewhere elsewhere, int windowType, Processes processes, boolean neverIssued,
    boolean beforeBind)
{
    /**
     * The MR that covers the range asked, as found at the failure.
     *
     * @param local      true when the key asked for was an lkey.
     * @param use        the key of the MR to use instead.
     * @param lengthBytes the MR's length.
     * @param iova       the MR's iova.
     * @param born       the first event of its lkey in the history, or null.
     */
    record Covering(boolean local, int use, long lengthBytes, long iova, KeyHistory.Event born)
    {
        /** @return e.g. {@code lkey 0x... of the MR of 4096 bytes at iova 0x... (registered at ...)}. */
        @Override
        public String toString()
        {
            return String.format(Locale.ROOT, "%s %s of the MR of %d bytes at iova 0x%x%s", local ? "lkey" : "rkey",
                MKey.toHex(use), lengthBytes, iova, born == null ? "" : " (" + born.describe() + ")");
        }
    }

    /**
     * The other device where the key names a live MR or window, as found at the failure.
     *
     * @param device its name.
     * @param born   the first event of the key there, or null.
     */
    record Elsewhere(String device, KeyHistory.Event born)
    {
        /** @return e.g. {@code mlx5_1, where it names MR of ...}. */
        @Override
        public String toString()
        {
            return device + ", where it names " + (born == null ? "a live MR or window" : born.object() + ", "
                + born.describe());
        }
    }

    /**
     * The processes of the key's PD and of the QP's PD.
     *
     * @param keyPd    the key's PD number.
     * @param keyPid   its process's pid.
     * @param keyName  its process's name.
     * @param qpPd     the QP's PD number.
     * @param qpPid    its process's pid.
     * @param qpName   its process's name.
     */
    record Processes(int keyPd, int keyPid, String keyName, int qpPd, int qpPid, String qpName)
    {
        /** @return e.g. {@code the key's PD 2 is process 1001's (other), the QP's PD 1 process 1000's (app_b)}. */
        @Override
        public String toString()
        {
            return "the key's PD " + keyPd + " is process " + keyPid + "'s (" + keyName + "), the QP's PD " + qpPd
                + " process " + qpPid + "'s (" + qpName + ")";
        }
    }

    /** No advice: the check's own words say it all. */
    static final KeyAdvice NONE = new KeyAdvice(null, null, 0, null, false, false);

    /**
     * The advice for a refused key: the MR search runs only for a key this device never issued and for a range
     * check, the fabric search only for a key never issued.
     *
     * @param device the device that refused the key.
     * @param pd     the number of the PD the access was made in (the QP's).
     * @param key    the key refused.
     * @param local  true for an lkey (an SGE), false for an rkey.
     * @param addr   first address asked.
     * @param length bytes asked.
     * @param check  the check that failed.
     * @param own    the key's MPT entry at the failure, or null.
     * @param mine   the last event of the key in its index's history, or null.
     * @return the advice for that failure.
     */
    static KeyAdvice of(final SimDevice device, final int pd, final int key, final boolean local, final long addr,
        final long length, final KeyCheck check, final MptEntry own, final KeyHistory.Event mine)
    {
        // a key never seen, or the rkey ibv_alloc_mw gave a window (its only event): what does its index hold now?
        final boolean unbound = mine == null || mine.what() == KeyHistory.What.ALLOCATED;
        final List<KeyHistory.Event> events = check == KeyCheck.VARIANT_MISMATCH && unbound
            ? device.keyHistory().events(device.keyHistory().index(key)) : List.of();
        final KeyHistory.Event current = events.isEmpty() ? null : events.get(events.size() - 1);
        final boolean beforeBind = current != null && current.what() == KeyHistory.What.BOUND
            && device.tables().isWindow(current.key());
        final boolean neverHere = check == KeyCheck.NO_SUCH_INDEX && mine == null
            || check == KeyCheck.VARIANT_MISMATCH && mine == null && events.size() < KeyHistory.EVENTS_PER_INDEX
            && allMrs(events) && current != null
            && !device.tables().isFastReg(current.key());
        final Covering covering = neverHere || check == KeyCheck.OUT_OF_RANGE || reregistered(check, mine)
            ? covering(device, pd, key, local, addr, length) : null;
        final Elsewhere elsewhere = neverHere ? elsewhere(device, key) : null;
        int windowType = 0;
        if (own != null && own.state() != MptState.VALID && device.tables().isWindow(key)
            && (check == KeyCheck.RIGHTS_MISSING || check == KeyCheck.WRONG_STATE))
        {
            final SimMw mw = device.keys().window(key);
            windowType = mw != null && mw.type() == MwType.TYPE_1 ? 1 : 2;
        }
        final Processes processes = check == KeyCheck.WRONG_PD && own != null ? processes(device, own.pd(), pd) : null;
        return covering == null && elsewhere == null && windowType == 0 && processes == null && !neverHere
            && !beforeBind ? NONE : new KeyAdvice(covering, elsewhere, windowType, processes, neverHere, beforeBind);
    }

    /** True when every event names an MR. */
    private static boolean allMrs(final List<KeyHistory.Event> events)
    {
        for (int i = 0; i < events.size(); i++)
        {
            if (events.get(i).mr() == null)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @return for a key naming a window's index under a key the window was never bound with, the summary's cause
     * and the fix; else null.
     */
    String[] beforeBind(final String who, final KeyHistory.Event now, final KeyHistory.Event mine)
    {
        if (!beforeBind)
        {
            return null;
        }
        final boolean allocated = mine != null && mine.what() == KeyHistory.What.ALLOCATED;
        return new String[] {who + " is not the key the window at its index is bound under: the index holds key "
            + MKey.toHex(now.key()) + " (" + now.object() + ", " + now.describe() + "); " + (allocated
            ? "this key is the rkey the window had from ibv_alloc_mw (" + mine.describe() + "), which" : "a window's "
            + "rkey from ibv_alloc_mw,") + " before its bind, grants nothing", "fix: a bind gives the window a new rkey (type 2: the "
            + "key of the BIND_MW work request, ibv_inc_rkey(mw->rkey); type 1: mw->rkey after ibv_bind_mw "
            + "returns): hand the peer that one, " + MKey.toHex(now.key())};
    }

    /** True when the key stopped naming its MR because ibv_rereg_mr gave the MR new keys. */
    private static boolean reregistered(final KeyCheck check, final KeyHistory.Event mine)
    {
        return (check == KeyCheck.NO_SUCH_INDEX || check == KeyCheck.VARIANT_MISMATCH) && mine != null
            && mine.what() == KeyHistory.What.INVALIDATED && "rereg_mr".equals(mine.cause());
    }

    /**
     * @param check the check that failed.
     * @param mine  the key's last event.
     * @param fix   the fix of a stale key.
     * @return for a key ibv_rereg_mr replaced, the fix naming that call and the new key; else {@code fix}.
     */
    String staleFix(final KeyCheck check, final KeyHistory.Event mine, final String fix)
    {
        if (!reregistered(check, mine))
        {
            return fix;
        }
        return "fix: ibv_rereg_mr gave the MR new keys (" + mine.describe() + ") and the old ones stopped "
            + "translating: use the " + (covering != null ? covering + ", which covers the range asked,"
            : "keys the call left in the MR (mr->lkey, mr->rkey)") + " and hand the peer the new rkey (which keys "
            + "survive a re-registration is the driver's choice)";
    }

    /** The live PD numbered {@code pdNum} on the device, or null. */
    private static SimPd pdOf(final SimDevice device, final int pdNum)
    {
        for (final SimContext c : device.contexts())
        {
            for (final SimPd p : c.pdsView())
            {
                if (p.pdNum() == pdNum)
                {
                    return p;
                }
            }
        }
        return null;
    }

    /**
     * @return when the key's PD and the QP's PD belong to different processes, both, e.g. {@code the key's PD 2 is
     * process 1001's (other), the QP's PD 1 process 1000's (app_b)}; else null.
     */
    private static Processes processes(final SimDevice device, final int keyPd, final int qpPd)
    {
        final SimPd mine = pdOf(device, keyPd);
        final SimPd theirs = pdOf(device, qpPd);
        if (mine == null || theirs == null || mine.context().process() == theirs.context().process())
        {
            return null;
        }
        return new Processes(keyPd, mine.context().process().pid(), mine.context().process().name(), qpPd,
            theirs.context().process().pid(), theirs.context().process().name());
    }

    /**
     * @param fix the fix of a key of another PD.
     * @return that fix, and for a key of another process, how processes share memory registrations.
     */
    String pdFix(final String fix)
    {
        return processes == null ? fix : "fix: " + processes + ": a key serves only the QPs of its own PD, and "
            + "PDs are per process; register the memory in the QP's process and PD, or share one PD between the "
            + "processes (ibv_import_pd on a shared context) and register in it";
    }

    /** The live MR of the PD numbered {@code pd} whose range holds [addr, addr + length), or null. */
    private static Covering covering(final SimDevice device, final int pd, final int key, final boolean local,
        final long addr, final long length)
    {
        for (final SimContext c : device.contexts())
        {
            for (final SimPd p : c.pdsView())
            {
                if (p.pdNum() != pd)
                {
                    continue;
                }
                final Covering found = covering(device, p.memoryRegions(), key, local, addr, length);
                if (found != null)
                {
                    return found;
                }
                final Covering odp = covering(device, p.odpMemoryRegions(), key, local, addr, length);
                if (odp != null)
                {
                    return odp;
                }
            }
        }
        return null;
    }

    private static Covering covering(final SimDevice device, final List<? extends MemoryRegion> mrs, final int key,
        final boolean local, final long addr, final long length)
    {
        for (final MemoryRegion mr : mrs)
        {
            final int use = local ? mr.lkey() : mr.rkey();
            final long offset = addr - mr.iova();
            if (use != key && use != 0 && offset >= 0 && length >= 0 && offset <= mr.lengthBytes()
                && length <= mr.lengthBytes() - offset)
            {
                return new Covering(local, use, mr.lengthBytes(), mr.iova(), device.keyHistory().firstOf(mr.lkey()));
            }
        }
        return null;
    }

    /** The other device of the fabric where this exact key names a live MR or window, described, or null. */
    private static Elsewhere elsewhere(final SimDevice device, final int key)
    {
        for (final SimDevice d : device.fabric().devices())
        {
            if (d == device)
            {
                continue;
            }
            final MptEntry e = d.tables().mpt().entry(key);
            if (e != null && e.key() == key && e.state() == MptState.VALID)
            {
                return new Elsewhere(d.name(), d.keyHistory().firstOf(key));
            }
        }
        return null;
    }

    /**
     * @return for a key that names a window that is not bound, the summary's cause and the fix; else null.
     */
    String[] unboundWindow(final String who, final KeyHistory.Event mine)
    {
        if (windowType == 0)
        {
            return null;
        }
        final String window = "a type " + windowType + " window";
        final String rebind = windowType == 1 ? "bind it again to a live MR (ibv_bind_mw) and hand the peer the "
            + "rkey that bind gives" : "bind it again to a live MR (a BIND_MW work request with a new key byte, "
            + "ibv_inc_rkey) and hand the peer the new rkey";
        final String summary;
        final String fix;
        if (mine == null || mine.what() == KeyHistory.What.ALLOCATED)
        {
            summary = who + " names " + window + " that was never bound: ibv_alloc_mw gives a window that grants "
                + "nothing until a bind" + (mine == null ? "" : " (this one " + mine.describe() + ", and no bind "
                + "followed)");
            fix = "fix: bind the window to an MR first (" + (windowType == 1 ? "ibv_bind_mw" : "a BIND_MW work "
                + "request on the QP the peer talks to") + ") and hand the peer the rkey of that bind";
        }
        else if ("dereg_mr_window".equals(mine.cause()))
        {
            summary = who + " names " + window + " that is no longer bound: its MR was deregistered ("
                + mine.describe() + "), which left the window translating nothing (mlx5 lets ibv_dereg_mr go "
                + "with windows bound)";
            fix = "fix: unbind or deallocate the windows of an MR before deregistering it (rxe and mlx4 refuse "
                + "ibv_dereg_mr while windows are bound, IBA 10.6.7.2.6); to go on, " + rebind;
        }
        else if ("invalidate_mw".equals(mine.cause()))
        {
            summary = who + " names " + window + " that is no longer bound: a LOCAL_INV or a SEND_WITH_INV from "
                + "the peer invalidated it (" + mine.describe() + ")";
            fix = "fix: a peer must stop using a window's rkey once it is invalidated; " + rebind;
        }
        else
        {
            summary = who + " names " + window + " that is no longer bound: " + (mine.what()
                == KeyHistory.What.BOUND ? "unbound " + mine.describe().substring("bound ".length())
                : mine.describe());
            fix = "fix: " + rebind;
        }
        return new String[] {summary + "; an unbound window's MPT entry is INVALID and grants no rights", fix};
    }

    /**
     * @return the fix for a key this device never issued: where it was issued, and the key to use instead.
     */
    String neverIssuedFix(final int key, final String deviceName, final boolean local, final int pd, final long addr,
        final long length)
    {
        final String range = AddressRangeText.of(addr, length);
        return "fix: " + MKey.toHex(key) + " was never issued on " + deviceName + (elsewhere == null ? ""
            : "; it is a key of " + elsewhere + ", and a key is valid only on the device that issued it")
            + (covering != null ? ": use the " + covering + ", which covers " + range
            : local ? ": no MR of PD " + pd + " on this device covers " + range + "; register that memory "
            + "(ibv_reg_mr) in the QP's PD and use the new MR's lkey"
            : ": no MR of PD " + pd + " on this device covers " + range + "; the peer must register that memory "
            + "with the remote right and send its rkey");
    }

    /**
     * @return the fix of an access outside its key's range: the key of the MR that covers it, if any.
     */
    String rangeFix(final String fix)
    {
        return covering == null ? fix : fix + "; the " + covering + " covers the whole range asked: use that key";
    }

    /**
     * The fix of an access below an MR's iova that would fit the MR as an offset from 0: the peer gave an offset
     * (or the 0 a zero-based MR starts at) where an MR registered without IBV_ACCESS_ZERO_BASED is addressed by its
     * iova plus the offset (ibv_reg_mr(3): the remote address is the virtual address unless ZERO_BASED or an iova was
     * given). libfabric's UCX provider handed out base address 0 for such an MR, and the READ at 0 failed with a
     * remote access error where the virtual address worked (ofiwg/libfabric issue 11643).
     *
     * @return the fix naming the iova and ZERO_BASED, or null when the access is no such offset.
     */
    static String offsetAsAddress(final long addr, final long length, final long iova, final long lengthBytes)
    {
        if (iova == 0 || addr >= iova || addr + length > lengthBytes)
        {
            return null;
        }
        return "fix: 0x" + Long.toHexString(addr) + " is an offset into the MR, not an address in it: an MR "
            + "registered without IBV_ACCESS_ZERO_BASED is addressed from its iova (0x" + Long.toHexString(iova)
            + ", the buffer's virtual address unless another iova was given), so hand the peer the MR's address with "
            + "the rkey (remote = iova + offset), or register it with IBV_ACCESS_ZERO_BASED to be addressed from 0";
    }

    /**
     * Why a LOCAL_INV or a SEND_WITH_INV of {@code key} is refused when the key names neither a type 2 window nor a
     * fast-registration MR: what the key names on the device, and the fix. Only those keys can be invalidated
     * (ibv_post_send(3) on IBV_WR_LOCAL_INV and IBV_WR_SEND_WITH_INV; rxe_invalidate_mr in rxe_mr.c and
     * rxe_invalidate_mw in rxe_mw.c); the status stays the device's. The fix names both kinds: a type 2 window,
     * and the fast-registration MR whose rkey the kernel's NVMe-oF host offers for remote invalidation (the target
     * answers with SEND_WITH_INV only when the host's SGL asks for it: spdk/spdk issue 974).
     */
    static CharSequence notInvalidatable(final SimDevice device, final int key)
    {
        final MptEntry e = device.tables().mpt().entry(key);
        final KeyHistory.Event born = device.keyHistory().firstOf(key);
        final boolean ordinary = e != null && e.key() == key && born != null && born.mr() != null;
        return new LazyText(() -> notInvalidatable(key, ordinary, born));
    }

    private static String notInvalidatable(final int key, final boolean ordinary, final KeyHistory.Event born)
    {
        final String hex = "rkey 0x" + Integer.toHexString(key);
        final String what = ordinary
            ? hex + " is the key of an ordinary MR (" + born.object() + ", " + born.describe() + "), which no work "
            + "request can invalidate"
            : hex + " names no type 2 window or fast-registration MR (user MRs cannot be invalidated; a stale key "
            + "matches nothing)";
        return what + "; fix: revoke an MR's keys with ibv_dereg_mr; to hand a peer a key that LOCAL_INV or "
            + "SEND_WITH_INV can revoke, bind a type 2 window over the MR (ibv_alloc_mw with IBV_MW_TYPE_2) and send "
            + "its rkey, or (kernel verbs) register the pages with a fast-registration MR (ib_alloc_mr, IB_WR_REG_MR), "
            + "as the kernel's NVMe-oF host does for the target's SEND_WITH_INV";
    }

    /**
     * @return how far an access reaches outside its key's range, e.g. {@code : 58 bytes past its end}, or empty.
     */
    static String overshoot(final long addr, final long length, final long iova, final long lengthBytes)
    {
        if (Long.compareUnsigned(addr, iova) < 0)
        {
            return String.format(Locale.ROOT, ": it starts %d bytes before the registered range", iova - addr);
        }
        if (AddressRangeText.wraps(addr, length))
        {
            return ": it wraps past 2^64, so no registered range holds it";
        }
        final long past = addr + length - (iova + lengthBytes);
        return past > 0 ? String.format(Locale.ROOT, ": %d bytes past its end", past) : "";
    }

    /**
     * @param missing the rights the operation needs that the key lacks.
     * @param who     the key as the summary names it ({@code local sge[0] lkey ...}, {@code the responder's receive
     *                ... lkey ...}, {@code rkey ...}).
     * @param window  true when the key names a bound window.
     * @return the fix of a missing right, naming it.
     */
    static String rightsFix(final int missing, final String who, final boolean window)
    {
        final boolean local = who.contains("lkey");
        final String rights = Access.fromBits(missing).toString();
        if (window)
        {
            return "fix: bind the window with " + rights + " (the MR under it must allow it too)";
        }
        return "fix: register the " + (!local ? "MR" : who.contains("receive") ? "receive buffer's MR"
            : "local buffer's MR") + " with " + rights + (!local ? "" : who.contains("receive")
            ? " (the device writes each message it receives into it)"
            : " (an RDMA READ or an atomic writes its result into the local buffer)")
            + (local || (missing & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) == 0 ? ""
            : " and LOCAL_WRITE, which remote writes and atomics need")
            + ", or change it with ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS)";
    }
}
