package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.PageSizeChoice;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * ibv_rereg_mr of a pinned MR of a PD: libibverbs' input checks ({@code ibv_rereg_mr} in verbs.c, failing with
 * IBV_REREG_MR_ERR_INPUT), the kernel's ({@code ib_uverbs_rereg_mr} in uverbs_cmd.c, IBV_REREG_MR_ERR_CMD), then the
 * change the driver makes: rights and PD in place in the MPT, or a new translation (mlx5 {@code mlx5_ib_rereg_user_mr}
 * rewriting the mkey in place or registering a new one, mlx4 {@code mlx4_ib_rereg_user_mr}, rxe
 * {@code rxe_rereg_user_mr}), where the device profile's {@link ProviderRule}s say which. Nothing changes on failure.
 *
 * <p>Not thread safe.
 */
final class ReregMr
{
    private final SimPd pd;
    private final SimContext context;

    ReregMr(final SimPd pd)
    {
        this.pd = pd;
        this.context = pd.context();
    }

    /**
     * ibv_rereg_mr: the library's input checks (ERR_INPUT), then the kernel's (ERR_CMD), then the change. Nothing
     * changes on failure.
     */
    void rereg(final SimMr mr, final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLength, final Set<Access> newAccess)
    {
        if (mr.isClosed())
        {
            throw reregInput("the MR is deregistered"
                + " (ibv_dereg_mr released it); register a new MR");
        }
        if (flags == null || AccessRules.hasNull(flags))
        {
            throw reregInput("flags must be a set of ReregFlag, got " + flags);
        }
        final boolean translation = flags.contains(ReregFlag.CHANGE_TRANSLATION);
        final boolean changePd = flags.contains(ReregFlag.CHANGE_PD);
        final boolean changeAccess = flags.contains(ReregFlag.CHANGE_ACCESS);
        if (translation && (newAddr == 0 || newLength == 0))
        {
            throw reregInput("CHANGE_TRANSLATION with addr=0x" + Long.toHexString(newAddr) + " length="
                + newLength + ": both must be non-zero (ibv_rereg_mr)"
                + "; give both with CHANGE_TRANSLATION, or drop the flag");
        }
        if (!changeAccess && newAccess != null && !newAccess.isEmpty())
        {
            throw reregInput("access " + newAccess + " given without CHANGE_ACCESS (ibv_rereg_mr)"
                + "; add CHANGE_ACCESS or drop the access flags");
        }
        final SimDevice device = context.device();
        if (device.profile().follows(ProviderRule.REREG_MR_UNSUPPORTED))
        {
            throw new ReregException(Errno.EOPNOTSUPP.code(), ReregException.ERR_INPUT, device.profile().driver()
                + "'s provider has no rereg_mr (libibverbs' stand-in answers); deregister and register again");
        }
        if (flags.isEmpty())
        {
            throw reregCmd(Errno.EINVAL, "flags=0: nothing to change (ib_uverbs_rereg_mr)"
                + "; give CHANGE_PD, CHANGE_ACCESS or CHANGE_TRANSLATION");
        }
        final SimPd target;
        if (changePd)
        {
            if (!(newPd instanceof SimPd p) || p.context() != context || p.isClosed())
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_PD: the PD given is not an open PD of this MR's context"
                    + "; pass a PD opened on the same context, not deallocated");
            }
            target = p;
        }
        else
        {
            target = pd;
        }
        final Set<Access> rights;
        if (changeAccess)
        {
            if (newAccess == null || AccessRules.hasNull(newAccess))
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_ACCESS: access must be a set of Access flags");
            }
            rights = newAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(newAccess);
            try
            {
                Access.checkDependencies(rights, "ibv_rereg_mr");
            }
            catch (final VerbsException e)
            {
                throw reregCmd(e.errnoName(), e.detail());
            }
            if (rights.contains(Access.ON_DEMAND) != mr.access().contains(Access.ON_DEMAND)
                || rights.contains(Access.ZERO_BASED) != mr.access().contains(Access.ZERO_BASED))
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_ACCESS cannot add or remove ON_DEMAND or ZERO_BASED"
                    + "; deregister and register again to change them");
            }
        }
        else
        {
            rights = mr.access();
        }
        if (mr.boundWindows() > 0)
        {
            throw reregCmd(Errno.EINVAL, mr.boundWindows() + " memory window(s) are bound to the MR (the "
                + "MPT cannot be taken back while windows use it; mlx4's HW2SW_MPT fails the same way)"
                + "; unbind or deallocate the windows first");
        }
        if (translation && device.profile().follows(ProviderRule.REREG_TRANSLATION_UNSUPPORTED))
        {
            throw reregCmd(Errno.EOPNOTSUPP, device.profile().driver() + " implements only CHANGE_PD and "
                + "CHANGE_ACCESS (rxe_rereg_user_mr)"
                + "; deregister and register again to change the translation");
        }
        final int bits = Access.toBits(rights) & ~Access.ZERO_BASED.bit();
        final boolean needsWritablePin = AccessRules.writable(rights) && !mr.pinned().write();
        if (!translation && needsWritablePin)
        {
            if (!device.profile().follows(ProviderRule.REREG_TRANSLATION_NEW_KEY)
                && !device.profile().follows(ProviderRule.REREG_TRANSLATION_UNSUPPORTED))
            {
                throw reregCmd(Errno.EPERM, "CHANGE_ACCESS " + rights + " needs a writable pin but the MR's pages "
                    + "were pinned read-only (mlx4_ib_rereg_user_mr)"
                    + "; deregister and register again with LOCAL_WRITE");
            }
            // mlx5 and rxe register the range anew, pinned for writing (ib_umem_get with FOLL_WRITE).
            retranslate(mr, target, mr.addr(), mr.lengthBytes(), rights);
            return;
        }
        if (translation)
        {
            retranslate(mr, target, newAddr, newLength, rights);
            return;
        }
        final long dropped = device.tables().modify(mr.lkey(), target.pdNum(), bits);
        final int rkey = AccessRules.rkey(device.profile(), rights, mr.lkey());
        pd.umem().moveTo(mr, target.umem());
        mr.reregistered(target, mr.addr(), mr.lengthBytes(), mr.iova(), mr.lkey(), rkey, rights, mr.pinned(),
            mr.registered());
        device.count(SimCounter.MR_REREGISTRATIONS, 1);
        device.fabric().span(device, "rereg_mr", "registration", device.fabric().costModel().registrationNs(0, 0, 0),
            Map.of("lkey", mr.lkey(), "flags", ReregFlag.toBits(flags)));
        device.invalidated("rereg_mr", mr.lkey(), dropped);
        device.observe(o -> o.reregistered(mr, mr.lkey()));
    }

    /**
     * The translation half of a rereg: pins the new range, writes a new translation (a new mkey where the profile
     * says so), unpins the old pages; also the re-pin an access change needs when the pages were pinned read-only.
     */
    private void retranslate(final SimMr mr, final SimPd target, final long newAddr,
        final long newLength, final Set<Access> rights)
    {
        final SimDevice device = context.device();
        // The device finishes the writes it has in flight to the MR before its translation or rights change.
        device.writeOrdering().drain();
        final int bits = Access.toBits(rights) & ~Access.ZERO_BASED.bit();
        final long startNs = device.fabric().clock().nowNs();
        final DeviceAttributes a = device.profile().attributes();
        if (Long.compareUnsigned(newLength, a.maxMrSizeBytes()) > 0 || Long.compareUnsigned(newAddr + newLength,
            newAddr) < 0)
        {
            throw reregCmd(Errno.EINVAL, "addr=0x" + Long.toHexString(newAddr) + " length="
                + Long.toUnsignedString(newLength) + " wraps or exceeds max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes())
                + "; give a range of 1..max_mr_size bytes that ends below 2^64");
        }
        final PinnedPages pinned;
        try
        {
            pinned = context.process().pinUserPages(newAddr, newLength, AccessRules.writable(rights), true);
        }
        catch (final KernelException e)
        {
            throw Errors.reregCmd(e);
        }
        final List<DmaRun> runs = UmemRegistration.dmaRuns(pinned, newAddr);
        final long leaves = UmemRegistration.leavesWalked(pinned);
        final boolean zeroBased = rights.contains(Access.ZERO_BASED);
        final long tableIova = zeroBased ? newAddr & 0xfff : newAddr;
        // mlx5 rewrites the translation in place (UMR, same mkey) when the new one's DMA blocks, at its best page
        // size, fit the entries the mkey has (mlx5_ib_rereg_user_mr: can_use_umr_rereg_pas); otherwise it
        // registers a new mkey.
        final PageSizeChoice choice;
        try
        {
            choice = device.tables().choose(runs, newAddr, newLength, tableIova);
        }
        catch (final TableException e)
        {
            context.process().unpinUserPages(pinned);
            throw Errors.reregCmd(e);
        }
        final boolean newKey = device.profile().follows(ProviderRule.REREG_TRANSLATION_NEW_KEY)
            && (choice.pageSizeBytes() == 0 || choice.blocks() > mkeyCapacity(mr.mttEntries()));
        final RegisteredMr registered;
        long dropped = 0;
        try
        {
            registered = newKey ? device.tables().register(target.pdNum(), runs, newAddr, newLength, tableIova, bits,
                    SimHostMemory.basePageBytes(context.process()))
                : device.tables().retranslate(mr.lkey(), target.pdNum(), runs, newAddr, newLength, tableIova, bits,
                    SimHostMemory.basePageBytes(context.process()));
        }
        catch (final TableException e)
        {
            context.process().unpinUserPages(pinned);
            throw Errors.reregCmd(e);
        }
        final int oldKey = mr.lkey();
        device.keys().forgetZeroBased(oldKey);
        if (newKey)
        {
            dropped = device.tables().deregister(oldKey);
        }
        final PinnedPages old = mr.pinned();
        old.process().unpinUserPages(old);
        final int key = registered.key();
        if (zeroBased)
        {
            device.keys().zeroBased(key, tableIova);
        }
        final int rkey = AccessRules.rkey(device.profile(), rights, key);
        pd.umem().moveTo(mr, target.umem());
        mr.reregistered(target, newAddr, newLength, zeroBased ? 0 : newAddr, key, rkey, rights, pinned, registered);
        device.count(SimCounter.MR_REREGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, pinned.lengthBytes() - old.lengthBytes());
        final long durationNs = device.fabric().costModel().registrationNs(pinned.pageCount(), leaves,
            registered.mtt().entries());
        device.fabric().span(device, "rereg_mr", "registration", durationNs, !device.fabric().tracing()
            ? Map.of() : Map.of("old_lkey", oldKey, "lkey", key, "pages_pinned", pinned.pageCount(), "mtt_entries",
            registered.mtt().entries()));
        device.record(RegistrationEvent.reg(startNs, durationNs, key, newAddr, newLength, mr.iova(),
            Access.toBits(rights)).pinned(pinned.pageCount(), leaves).translation(registered.pageSizeBytes(),
            registered.mtt().entries()).dropped(dropped));
        device.invalidated("rereg_mr", oldKey, dropped);
        device.observe(o -> o.reregistered(mr, oldKey));
    }

    /** Entries an mlx5 mkey holds: its cache bucket's, a power of two (mr.c: {@code 1 << cache_ent->order}). */
    private static long mkeyCapacity(final long entries)
    {
        return entries <= 1 ? 1 : Long.highestOneBit(entries - 1) << 1;
    }

    private static ReregException reregInput(final String message)
    {
        return new ReregException(Errno.EINVAL.code(), ReregException.ERR_INPUT, message);
    }

    private static ReregException reregCmd(final Errno errno, final String message)
    {
        return new ReregException(errno.code(), ReregException.ERR_CMD, message);
    }
}
