package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The work requests a QP executes on its own device: BIND_MW, LOCAL_INV, REG_MR, and the invalidation a received
 * SEND_WITH_INV asks for. The checks follow rxe (drivers/infiniband/sw/rxe/rxe_mw.c {@code rxe_check_bind_mw},
 * {@code rxe_invalidate_mw}; rxe_mr.c {@code rxe_reg_fast_mr}, {@code rxe_invalidate_mr}) in its order; a failure
 * changes nothing and completes the work request with IBV_WC_MW_BIND_ERR (bind) or IBV_WC_LOC_QP_OP_ERR.
 */
final class LocalOps
{
    /** Rights a bind may name (rxe_bind_mw refuses others). LOCAL_WRITE is accepted and ignored: a window grants
     * remote rights only (rdma-core tests/test_mr.py binds with REMOTE_WRITE|LOCAL_WRITE and expects success; rxe's
     * RXE_ACCESS_SUPPORTED_MW holds it; mlx5 maps only the remote bits into the window's mkey). FLUSH_GLOBAL and
     * FLUSH_PERSISTENT are in RXE_ACCESS_SUPPORTED_MW too: a FLUSH through the window's rkey needs its placement
     * type among the window's rights (rxe_resp.c check_rkey, rxe_lookup_mw with the FLUSH access). */
    private static final Set<Access> WINDOW_RIGHTS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ,
        Access.REMOTE_WRITE, Access.REMOTE_ATOMIC, Access.ZERO_BASED, Access.FLUSH_GLOBAL, Access.FLUSH_PERSISTENT);

    /** Rights a REG_MR may give (ib_check_mr_access is the user registration's rule, not applied here). */
    private static final Set<Access> REG_RIGHTS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ,
        Access.REMOTE_WRITE, Access.REMOTE_ATOMIC);

    private LocalOps()
    {
    }

    /**
     * Executes a bind. Type 1 windows arrive through ibv_bind_mw, type 2 through a posted BIND_MW.
     *
     * @return SUCCESS or MW_BIND_ERR (the reason goes to {@link SimQp#localFailure}).
     */
    static WcStatus bind(final SimQp qp, final SendWr.Bind b)
    {
        final SimMw mw = (SimMw)b.mw();
        final MwBindInfo info = b.info();
        // rxe_bind_mw: the key the work request names for the window must be the window's key on the device. A
        // type 1 bind named the key before ibv_inc_rkey; a type 2 bind names the rkey field at execution.
        final int named = mw.type() == MwType.TYPE_1 ? (b.newRkey() & 0xffffff00) | ((b.newRkey() - 1) & 0xff)
            : mw.rkey();
        final String why = named != mw.tableKey() && !mw.isClosed() ? "the work request names the window by rkey 0x"
            + Integer.toHexString(named) + " but the device knows it as 0x" + Integer.toHexString(mw.tableKey())
            + " (write mw.rkey back after a failed bind; rxe_bind_mw)" : bindProblem(qp, mw, info);
        if (why != null)
        {
            qp.localFailure(why);
            return WcStatus.MW_BIND_ERR;
        }
        final SimDevice device = qp.simDevice();
        final int oldKey = mw.tableKey();
        final int newKey = (oldKey & 0xffffff00) | (b.newRkey() & 0xff);
        final boolean unbind = info.lengthBytes() == 0;
        final SimMr mr = unbind ? null : (SimMr)info.mr();
        // The window's own rights decide a remote access through it (tests/test_qpex.py test_qp_ex_rc_bind_mw: a
        // window bound with LOCAL_WRITE alone refuses a remote WRITE with IBV_WC_REM_ACCESS_ERR).
        final Set<Access> granted = grantedBy(info.access());
        final int bits = Access.toBits(granted) & ~Access.ZERO_BASED.bit();
        device.fabric().engine().awaitKeyHolders(device, unbind ? "an unbind of the window (BIND_MW with no MR)"
            : "a rebind of the window (BIND_MW retires the rkey it had)", oldKey);
        final long dropped;
        try
        {
            dropped = device.tables().bindWindow(oldKey, newKey, unbind ? 0 : mr.lkey(),
                mw.type() == MwType.TYPE_2 ? qp.num() : -1, info.addr(), info.lengthBytes(), bits);
        }
        catch (final TableException e)
        {
            qp.localFailure(e.getMessage());
            return WcStatus.MW_BIND_ERR;
        }
        device.keys().forgetZeroBased(oldKey);
        if (!unbind && info.access().contains(Access.ZERO_BASED))
        {
            // Addresses presented with the window's rkey are offsets from the window's start.
            device.keys().zeroBased(newKey, info.addr());
        }
        mw.bound(newKey, mr, unbind || mw.type() == MwType.TYPE_1 ? null : qp, unbind ? 0 : info.addr(),
            info.lengthBytes(), unbind ? Set.of() : granted);
        device.count(SimCounter.MW_BINDS, 1);
        device.invalidated("bind_mw", oldKey, dropped);
        device.keyHistory().bound(newKey, unbind ? "type 1 window, unbound" : KeyHistory.window(mw, mr, info, qp));
        return WcStatus.SUCCESS;
    }

    /** The rights a bind gives the window: what it names, less LOCAL_WRITE. */
    static Set<Access> grantedBy(final Set<Access> named)
    {
        final EnumSet<Access> granted = named.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(named);
        granted.remove(Access.LOCAL_WRITE);
        return granted;
    }

    /** rxe_check_bind_mw and rxe_bind_mw's checks, in their order; null when the bind may go ahead. */
    private static String bindProblem(final SimQp qp, final SimMw mw, final MwBindInfo info)
    {
        if (mw.isClosed())
        {
            return "the window is deallocated";
        }
        final boolean unbind = info.lengthBytes() == 0;
        if (!WINDOW_RIGHTS.containsAll(info.access()))
        {
            return "window access " + info.access() + " outside LOCAL_WRITE (ignored), REMOTE_READ, REMOTE_WRITE, "
                + "REMOTE_ATOMIC, ZERO_BASED, FLUSH_GLOBAL, FLUSH_PERSISTENT (rxe_bind_mw: EOPNOTSUPP)";
        }
        if (mw.type() == MwType.TYPE_1 && info.access().contains(Access.ZERO_BASED))
        {
            return "type 1 windows cannot be zero-based (rxe_check_bind_mw)";
        }
        if (mw.type() == MwType.TYPE_2)
        {
            if (mw.isBound())
            {
                return "type 2 window is bound: invalidate it before binding again (state must be FREE)";
            }
            if (qp.simPd() != mw.pd())
            {
                return "the QP's PD differs from the window's PD (rxe_check_bind_mw)";
            }
            if (unbind)
            {
                return "a type 2 window cannot be unbound by a zero-length bind: use LOCAL_INV";
            }
        }
        if (unbind)
        {
            return null;
        }
        if (info.mr() instanceof SimOdpMr || info.mr() instanceof SimPeerMr)
        {
            return "memory windows cannot be bound to " + (info.mr() instanceof SimOdpMr ? "an ODP MR (mlx5 ODP MRs "
                + "do not support memory windows)" : "an MR over GPU memory in this model");
        }
        if (!(info.mr() instanceof SimMr mr) || mr.isClosed() || mr.pd().context().device() != qp.simDevice())
        {
            return "the MR is not a live MR of this device";
        }
        if (mr.pd() != mw.pd())
        {
            return "the MR and the window are in different PDs";
        }
        if (mr.access().contains(Access.ZERO_BASED))
        {
            return "the MR is zero-based (rxe_check_bind_mw)";
        }
        if (!mr.access().contains(Access.MW_BIND))
        {
            return "the MR lacks MW_BIND access (IBA C10-73, rxe_check_bind_mw)";
        }
        if ((info.access().contains(Access.REMOTE_WRITE) || info.access().contains(Access.REMOTE_ATOMIC))
            && !mr.access().contains(Access.LOCAL_WRITE))
        {
            return "a window with REMOTE_WRITE or REMOTE_ATOMIC needs an MR with LOCAL_WRITE (rxe_check_bind_mw)";
        }
        final long offset = info.addr() - mr.iova();
        if (info.lengthBytes() < 0 || Long.compareUnsigned(offset, mr.lengthBytes()) >= 0
            || Long.compareUnsigned(info.lengthBytes(), mr.lengthBytes() - offset) > 0)
        {
            return "window 0x" + Long.toHexString(info.addr()) + "+" + info.lengthBytes() + " is not inside the MR 0x"
                + Long.toHexString(mr.iova()) + "+" + mr.lengthBytes() + " (rxe_check_bind_mw)";
        }
        return null;
    }

    /**
     * LOCAL_INV on the QP's device, or the invalidation a SEND_WITH_INV received by {@code qp} asks for: a type 2
     * window (exact rkey) becomes unbound, a fast-registration MR (exact key) becomes INVALID. A type 1 window, a
     * user MR or an unknown key cannot be invalidated.
     *
     * @return true when invalidated (else the reason goes to {@link SimQp#localFailure}).
     */
    static boolean invalidate(final SimQp qp, final int rkey)
    {
        final SimDevice device = qp.simDevice();
        if (device.tables().isWindow(rkey))
        {
            final SimMw mw = device.keys().window(rkey);
            if (mw == null || mw.type() == MwType.TYPE_1)
            {
                qp.localFailure("rkey 0x" + Integer.toHexString(rkey) + " names a type 1 window, which cannot be "
                    + "invalidated (rxe_invalidate_mw); fix: unbind a type 1 window with ibv_bind_mw of length 0, or "
                    + "allocate a type 2 window (IBV_MW_TYPE_2) for keys that LOCAL_INV or SEND_WITH_INV revoke");
                return false;
            }
            if (device.profile().follows(ProviderRule.INVALIDATION_CHECKS_OWNER) && mw.isBound()
                && mw.boundQp() != qp)
            {
                qp.localFailure("rkey 0x" + Integer.toHexString(rkey) + " names a type 2 window bound to QP 0x"
                    + Integer.toHexString(mw.boundQp().qpNum()) + ", not this QP 0x" + Integer.toHexString(qp.num())
                    + " (mlx5 checks the QP of an invalidation); fix: invalidate the window from QP 0x"
                    + Integer.toHexString(mw.boundQp().qpNum()) + " (LOCAL_INV), or have that QP's peer send the "
                    + "SEND_WITH_INV");
                return false;
            }
            device.fabric().engine().awaitKeyHolders(device, "an invalidation (LOCAL_INV or SEND_WITH_INV)", rkey);
            final long dropped = device.tables().invalidateWindow(rkey);
            device.keys().forgetZeroBased(rkey);
            mw.bound(rkey, null, null, 0, 0, Set.of());
            device.invalidated("invalidate_mw", rkey, dropped);
            return true;
        }
        if (device.tables().isFastReg(rkey))
        {
            final SimFastRegMr mr = device.keys().fastReg(rkey);
            if (device.profile().follows(ProviderRule.INVALIDATION_CHECKS_OWNER) && mr != null
                && mr.pd() != qp.simPd())
            {
                qp.localFailure("key 0x" + Integer.toHexString(rkey) + " names a fast-registration MR of another PD"
                    + " than this QP's; fix: invalidate it from a QP of the MR's PD");
                return false;
            }
            device.fabric().engine().awaitKeyHolders(device, "an invalidation (LOCAL_INV or SEND_WITH_INV)", rkey);
            final long dropped = device.tables().invalidateFastReg(rkey);
            if (mr != null)
            {
                mr.invalidated();
            }
            device.invalidated("invalidate_mr", rkey, dropped);
            return true;
        }
        qp.localFailure(KeyAdvice.notInvalidatable(device, rkey));
        return false;
    }

    /**
     * Executes a REG_MR.
     *
     * @return SUCCESS or LOC_QP_OP_ERR.
     */
    static WcStatus fastRegister(final SimQp qp, final SendWr.Reg r)
    {
        final SimFastRegMr mr = (SimFastRegMr)r.mr();
        final String why;
        if (mr.isClosed())
        {
            why = "the MR is deregistered";
        }
        else if (mr.pd() != qp.simPd())
        {
            why = "the QP's PD differs from the MR's PD (rxe_reg_fast_mr)";
        }
        else if (mr.isValid())
        {
            why = "the MR is VALID: invalidate it first (rxe_reg_fast_mr requires state FREE)";
        }
        else if ((r.newKey() & 0xffffff00) != (mr.key() & 0xffffff00))
        {
            why = "new key 0x" + Integer.toHexString(r.newKey()) + " changes the index of 0x"
                + Integer.toHexString(mr.key()) + " (only the low byte may change)";
        }
        else if (mr.runs() == null)
        {
            why = "no pages mapped: call mapSg first (ib_map_mr_sg)";
        }
        else if (!REG_RIGHTS.containsAll(r.access()))
        {
            why = "REG_MR access " + r.access() + " outside LOCAL_WRITE, REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC";
        }
        else
        {
            why = null;
        }
        if (why != null)
        {
            qp.localFailure(why);
            return WcStatus.LOC_QP_OP_ERR;
        }
        final SimDevice device = qp.simDevice();
        final List<dev.rnicsim.mtt.DmaRun> runs = mr.runs();
        final long entries;
        try
        {
            entries = device.tables().fastRegister(mr.key(), r.newKey(), runs, mr.addr(), mr.lengthBytes(),
                mr.addr(), Access.toBits(r.access()));
        }
        catch (final TableException e)
        {
            qp.localFailure(e.getMessage());
            return WcStatus.LOC_QP_OP_ERR;
        }
        final int oldKey = mr.key();
        mr.registered(r.newKey(), r.access());
        device.count(SimCounter.FAST_REGISTRATIONS, 1);
        device.fabric().span(device, "reg_mr (fast)", "registration", device.fabric().costModel()
            .fastRegistrationNs(entries), java.util.Map.of("old_key", oldKey, "key", r.newKey(), "mtt_entries",
            entries));
        return WcStatus.SUCCESS;
    }

}
