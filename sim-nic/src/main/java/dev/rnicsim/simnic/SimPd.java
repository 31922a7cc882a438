package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A simulated protection domain. Its {@link #regMr} is the driver path of a registration, step by step:
 * argument checks ({@code ib_uverbs_reg_mr}, {@code ib_check_mr_access}), the RLIMIT_MEMLOCK charge and the
 * long-term pin ({@code ib_umem_get}), physically contiguous pages merged into DMA runs, the page size chosen
 * ({@code ib_umem_find_best_pgsz}), MTT entries reserved and MPT index taken, entries written, keys returned. Any
 * failure undoes every earlier step, so a failed call leaves no pin, no charge and no table entry.
 *
 * <p>Not thread safe.
 */
public final class SimPd implements ProtectionDomain
{
    private static final String REG = "ibv_reg_mr";
    /** Most pages of a fast-registration MR: the kernel's {@code max_fast_reg_page_list_len} (assumed 2^16 for
     * every profile; rxe reports 512 and mlx5 derives it from its KLM list size). */
    static final int MAX_FAST_REG_PAGES = 1 << 16;
    /** Rights that make the pin FOLL_WRITE ({@code ib_access_writable}, include/rdma/ib_umem.h). */
    private static final Set<Access> WRITABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_ATOMIC, Access.MW_BIND);
    private static final Set<Access> REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    private final SimContext context;
    private final int pdNum;
    private final java.util.Set<SimMr> mrs = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimQp> qps = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimMw> windows = new java.util.LinkedHashSet<>();
    private final java.util.Set<SimFastRegMr> fastRegs = new java.util.LinkedHashSet<>();
    private boolean closed;

    SimPd(final SimContext context, final int pdNum)
    {
        this.context = context;
        this.pdNum = pdNum;
    }

    @Override
    public SimContext context()
    {
        return context;
    }

    /**
     * @return the PD number the adapter stores in MPT entries and QP contexts.
     */
    public int pdNum()
    {
        return pdNum;
    }

    @Override
    public MemoryRegion regMr(final long addr, final long lengthBytes, final Set<Access> access)
    {
        return register(addr, lengthBytes, addr, access, false);
    }

    @Override
    public MemoryRegion regMr(final long addr, final long lengthBytes, final long iova, final Set<Access> access)
    {
        return register(addr, lengthBytes, iova, access, true);
    }

    private SimMr register(final long addr, final long lengthBytes, final long iova, final Set<Access> access,
        final boolean explicitIova)
    {
        checkOpen(REG);
        if (access == null || hasNull(access))
        {
            throw Errors.invalid(REG, "access must be a set of Access flags (empty for none), got " + access);
        }
        final SimDevice device = context.device();
        final long startNs = device.fabric().clock().nowNs();
        final Set<Access> rights = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        final boolean zeroBased = rights.contains(Access.ZERO_BASED);
        final long tableIova = zeroBased ? addr & 0xfff : iova;
        try
        {
            checkArguments(device.profile().attributes(), addr, lengthBytes, iova, rights, explicitIova);
        }
        catch (final VerbsException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw e;
        }
        final UserProcess process = context.process();
        final PinnedPages pinned;
        try
        {
            pinned = process.pinUserPages(addr, lengthBytes, !disjoint(rights, WRITABLE), true);
        }
        catch (final KernelException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, e);
        }
        final List<DmaRun> runs = new ArrayList<>(pinned.runs().size());
        long leaves = 0;
        for (final PhysRun run : pinned.runs())
        {
            runs.add(new DmaRun(run.physAddr(), run.lengthBytes()));
            leaves += (run.lengthBytes() + run.pageSizeBytes() - 1) / run.pageSizeBytes();
        }
        final RegisteredMr registered;
        try
        {
            registered = device.tables().register(pdNum, runs, addr, lengthBytes, tableIova, Access.toBits(rights)
                & ~Access.ZERO_BASED.bit());
        }
        catch (final TableException e)
        {
            process.unpinUserPages(pinned);
            device.fabric().span(device, "reg_mr", "registration",
                device.fabric().costModel().failedRegistrationNs(pinned.pageCount(), leaves),
                java.util.Map.of("addr", addr, "length", lengthBytes, "pages_pinned", pinned.pageCount(),
                    "errno", e.errno().name()));
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, e);
        }
        final int key = registered.key();
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : key;
        if (zeroBased)
        {
            device.zeroBased(key, tableIova);
        }
        final SimMr mr = new SimMr(this, addr, lengthBytes, zeroBased ? 0 : iova, key, rkey, rights, pinned,
            registered);
        mrs.add(mr);
        final long durationNs = device.fabric().costModel().registrationNs(pinned.pageCount(), leaves,
            registered.mtt().entries());
        device.fabric().span(device, "reg_mr", "registration", durationNs, java.util.Map.of("lkey", key, "addr", addr,
            "length", lengthBytes, "pages_pinned", pinned.pageCount(), "page_size", registered.pageSizeBytes(),
            "mtt_entries", registered.mtt().entries()));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, pinned.lengthBytes());
        device.record(new RegistrationEvent(RegistrationEvent.Kind.REG, startNs, durationNs, key, addr, lengthBytes,
            mr.iova(), Access.toBits(rights), pinned.pageCount(), leaves, registered.pageSizeBytes(),
            registered.mtt().entries(), 0));
        device.observe(o -> o.registered(mr));
        return mr;
    }

    /**
     * The checks made before anything is pinned, in the kernel's order: page offsets of addr and iova
     * ({@code ib_uverbs_reg_mr}), access flags ({@code ib_check_mr_access}), length against {@code max_mr_size},
     * then zero and wrapping lengths ({@code ib_umem_get}).
     */
    private static void checkArguments(final DeviceAttributes a, final long addr, final long lengthBytes,
        final long iova, final Set<Access> rights, final boolean explicitIova)
    {
        if (explicitIova && (addr & 0xfff) != (iova & 0xfff))
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " and iova=0x" + Long.toHexString(iova)
                + " differ in their offset within a 4 KiB page (ib_uverbs_reg_mr)");
        }
        Access.checkDependencies(rights, REG);
        if (rights.contains(Access.ON_DEMAND))
        {
            throw Errors.of(REG, Errno.EOPNOTSUPP, "access ON_DEMAND: on-demand-paging MRs are not simulated yet "
                + "(issue #8); odp general caps of this device=0x" + Integer.toHexString(a.odpCaps().generalCaps()));
        }
        if (rights.contains(Access.FLUSH_GLOBAL) || rights.contains(Access.FLUSH_PERSISTENT))
        {
            throw Errors.of(REG, Errno.EOPNOTSUPP, "access " + rights + ": the device has no FLUSH capability "
                + "(ib_check_mr_access)");
        }
        if (lengthBytes == 0)
        {
            throw Errors.invalid(REG, "lengthBytes=0: an MR needs at least one byte (ib_umem_get)");
        }
        if (Long.compareUnsigned(lengthBytes, a.maxMrSizeBytes()) > 0)
        {
            throw Errors.invalid(REG, "lengthBytes=" + Long.toUnsignedString(lengthBytes) + " > max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes()));
        }
        if (Long.compareUnsigned(addr + lengthBytes, addr) < 0)
        {
            throw Errors.invalid(REG, "addr=0x" + Long.toHexString(addr) + " + lengthBytes="
                + Long.toUnsignedString(lengthBytes) + " wraps past 2^64 (ib_umem_get)");
        }
    }

    /** True when the set holds null (asked by iteration: immutable sets throw on contains(null)). */
    private static boolean hasNull(final Set<?> set)
    {
        for (final Object o : set)
        {
            if (o == null)
            {
                return true;
            }
        }
        return false;
    }

    private static boolean disjoint(final Set<Access> a, final Set<Access> b)
    {
        for (final Access x : a)
        {
            if (b.contains(x))
            {
                return false;
            }
        }
        return true;
    }

    /** The driver's deregistration: zap the MTT entries, invalidate the cache for the key, unpin, uncharge. */
    void deregister(final SimMr mr)
    {
        final SimDevice device = context.device();
        final long startNs = device.fabric().clock().nowNs();
        final long dropped = device.tables().deregister(mr.lkey());
        device.forgetZeroBased(mr.lkey());
        final PinnedPages pinned = mr.pinned();
        pinned.process().unpinUserPages(pinned);
        mrs.remove(mr);
        mr.markClosed();
        final long durationNs = device.fabric().costModel().deregistrationNs(pinned.pageCount());
        final long stallNs = device.fabric().costModel().invalidationStallNs();
        device.fabric().span(device, "dereg_mr", "registration", durationNs - stallNs, java.util.Map.of("lkey",
            mr.lkey(), "pages_unpinned", pinned.pageCount(), "mtt_entries", mr.mttEntries()));
        device.fabric().span(device, "invalidate", "invalidation", stallNs, java.util.Map.of("lkey", mr.lkey(),
            "cache_entries_dropped", dropped));
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, -pinned.lengthBytes());
        device.record(new RegistrationEvent(RegistrationEvent.Kind.DEREG, startNs, durationNs, mr.lkey(), mr.addr(),
            mr.lengthBytes(), mr.iova(), Access.toBits(mr.access()), pinned.pageCount(), 0, mr.pageSizeBytes(),
            mr.mttEntries(), dropped));
        device.observe(o -> o.deregistered(mr));
    }

    // ------------------------------------------------------------------ memory windows and fast registration

    @Override
    public MemoryWindow allocMw(final MwType type)
    {
        final String verb = "ibv_alloc_mw";
        checkOpen(verb);
        if (type == null)
        {
            throw Errors.invalid(verb, "type must be TYPE_1 or TYPE_2");
        }
        final SimDevice device = context.device();
        final DeviceAttributes a = device.profile().attributes();
        if (!a.has(DeviceCap.MEM_WINDOW) || a.maxMw() == 0)
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " has no memory windows (MEM_WINDOW "
                + (a.has(DeviceCap.MEM_WINDOW) ? "set" : "not set") + " in device_cap_flags, max_mw=" + a.maxMw()
                + ")");
        }
        if (type == MwType.TYPE_2 && !a.has(DeviceCap.MEM_WINDOW_TYPE_2A) && !a.has(DeviceCap.MEM_WINDOW_TYPE_2B))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " has no type 2 windows (neither "
                + "MEM_WINDOW_TYPE_2A nor MEM_WINDOW_TYPE_2B in device_cap_flags)");
        }
        if (device.tables().windowCount() >= a.maxMw())
        {
            throw Errors.of(verb, Errno.ENOMEM, device.tables().windowCount() + " windows live = max_mw="
                + a.maxMw());
        }
        final int key;
        try
        {
            key = device.tables().allocateWindow(pdNum, type.code());
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
        final SimMw mw = new SimMw(this, type, key);
        windows.add(mw);
        return mw;
    }

    /** ibv_dealloc_mw: unbinds (releasing the MR), frees the window's MPT entry; its key stops validating. */
    void deallocMw(final SimMw mw)
    {
        final SimDevice device = context.device();
        device.forgetZeroBased(mw.tableKey());
        final long dropped = device.tables().freeWindow(mw.tableKey());
        mw.bound(mw.tableKey(), null, null, 0, 0, Set.of());
        windows.remove(mw);
        mw.markClosed();
        device.invalidated("dealloc_mw", mw.tableKey(), dropped);
    }

    @Override
    public FastRegMr allocMr(final int maxNumSg)
    {
        final String verb = "ib_alloc_mr";
        checkOpen(verb);
        final SimDevice device = context.device();
        if (maxNumSg < 1 || maxNumSg > MAX_FAST_REG_PAGES)
        {
            throw Errors.invalid(verb, "max_num_sg=" + maxNumSg + " must be from 1 to " + MAX_FAST_REG_PAGES
                + " (max_fast_reg_page_list_len)");
        }
        if (!device.profile().attributes().has(DeviceCap.MEM_MGT_EXTENSIONS))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " lacks MEM_MGT_EXTENSIONS (fast "
                + "registration)");
        }
        final int key;
        try
        {
            key = device.tables().allocateFastReg(pdNum, maxNumSg);
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
        final SimFastRegMr mr = new SimFastRegMr(this, maxNumSg, key);
        fastRegs.add(mr);
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        return mr;
    }

    void deallocFastReg(final SimFastRegMr mr)
    {
        final SimDevice device = context.device();
        final long dropped = device.tables().deregister(mr.key());
        fastRegs.remove(mr);
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
        device.fabric().span(device, "invalidate", "invalidation", device.fabric().costModel().invalidationStallNs(),
            java.util.Map.of("cause", "dereg_mr", "key", mr.key(), "cache_entries_dropped", dropped));
    }

    /**
     * @return the live fast-registration MRs of this PD.
     */
    public List<SimFastRegMr> fastRegMrs()
    {
        return List.copyOf(fastRegs);
    }

    /**
     * @return the live memory windows of this PD.
     */
    public List<SimMw> memoryWindows()
    {
        return List.copyOf(windows);
    }

    // ------------------------------------------------------------------ rereg

    /**
     * ibv_rereg_mr: the library's input checks (ERR_INPUT), then the kernel's (ERR_CMD), then the change. Nothing
     * changes on failure.
     */
    void rereg(final SimMr mr, final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLength, final Set<Access> newAccess)
    {
        if (mr.isClosed())
        {
            throw reregInput("the MR is deregistered");
        }
        if (flags == null || hasNull(flags))
        {
            throw reregInput("flags must be a set of ReregFlag, got " + flags);
        }
        final boolean translation = flags.contains(ReregFlag.CHANGE_TRANSLATION);
        final boolean changePd = flags.contains(ReregFlag.CHANGE_PD);
        final boolean changeAccess = flags.contains(ReregFlag.CHANGE_ACCESS);
        if (translation && (newAddr == 0 || newLength == 0))
        {
            throw reregInput("CHANGE_TRANSLATION with addr=0x" + Long.toHexString(newAddr) + " lengthBytes="
                + newLength + ": both must be non-zero (ibv_rereg_mr)");
        }
        if (!changeAccess && newAccess != null && !newAccess.isEmpty())
        {
            throw reregInput("access " + newAccess + " given without CHANGE_ACCESS (ibv_rereg_mr)");
        }
        final SimDevice device = context.device();
        if (flags.isEmpty())
        {
            throw reregCmd(Errno.EINVAL, "flags=0: nothing to change (ib_uverbs_rereg_mr)");
        }
        final SimPd target;
        if (changePd)
        {
            if (!(newPd instanceof SimPd p) || p.context != context || p.closed)
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_PD: the PD given is not an open PD of this MR's context");
            }
            target = p;
        }
        else
        {
            target = this;
        }
        final Set<Access> rights;
        if (changeAccess)
        {
            if (newAccess == null || hasNull(newAccess))
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
                final String prefix = e.verb() + ": " + e.errnoName().name() + ": ";
                throw reregCmd(Errno.EINVAL, e.getMessage().startsWith(prefix)
                    ? e.getMessage().substring(prefix.length()) : e.getMessage());
            }
            if (rights.contains(Access.ON_DEMAND) != mr.access().contains(Access.ON_DEMAND)
                || rights.contains(Access.ZERO_BASED) != mr.access().contains(Access.ZERO_BASED))
            {
                throw reregCmd(Errno.EINVAL, "CHANGE_ACCESS cannot add or remove ON_DEMAND or ZERO_BASED");
            }
        }
        else
        {
            rights = mr.access();
        }
        if (mr.boundWindows() > 0)
        {
            throw reregCmd(Errno.EINVAL, mr.boundWindows() + " memory window(s) are bound to the MR (the "
                + "MPT cannot be taken back while windows use it; mlx4's HW2SW_MPT fails the same way)");
        }
        if (translation && device.profile().follows(ProviderRule.REREG_TRANSLATION_UNSUPPORTED))
        {
            throw reregCmd(Errno.EOPNOTSUPP, device.profile().driver() + " implements only CHANGE_PD and "
                + "CHANGE_ACCESS (rxe_rereg_user_mr)");
        }
        final int bits = Access.toBits(rights) & ~Access.ZERO_BASED.bit();
        final long startNs = device.fabric().clock().nowNs();
        final boolean needsWritablePin = !disjoint(rights, WRITABLE) && !mr.pinned().write();
        if (!translation && needsWritablePin)
        {
            if (!device.profile().follows(ProviderRule.REREG_TRANSLATION_NEW_KEY)
                && !device.profile().follows(ProviderRule.REREG_TRANSLATION_UNSUPPORTED))
            {
                throw reregCmd(Errno.EPERM, "CHANGE_ACCESS " + rights + " needs a writable pin but the MR's pages "
                    + "were pinned read-only (mlx4_ib_rereg_user_mr)");
            }
            // mlx5 and rxe register the range anew, pinned for writing (ib_umem_get with FOLL_WRITE).
            rereg(mr, EnumSet.of(ReregFlag.CHANGE_TRANSLATION, ReregFlag.CHANGE_ACCESS, ReregFlag.CHANGE_PD),
                target, mr.addr(), mr.lengthBytes(), rights);
            return;
        }
        if (translation)
        {
            rereg(mr, flags, target, newAddr, newLength, rights);
            return;
        }
        final long dropped = device.tables().modify(mr.lkey(), target.pdNum, bits);
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : mr.lkey();
        moveTo(mr, target);
        mr.reregistered(target, mr.addr(), mr.lengthBytes(), mr.iova(), mr.lkey(), rkey, rights, mr.pinned(),
            mr.registered());
        device.count(SimCounter.MR_REREGISTRATIONS, 1);
        device.fabric().span(device, "rereg_mr", "registration", device.fabric().costModel().registrationNs(0, 0, 0),
            java.util.Map.of("lkey", mr.lkey(), "flags", ReregFlag.toBits(flags)));
        device.invalidated("rereg_mr", mr.lkey(), dropped);
        device.observe(o -> o.reregistered(mr, mr.lkey()));
    }

    /**
     * The translation half of a rereg: pins the new range, writes a new translation (a new mkey where the profile
     * says so), unpins the old pages; also the re-pin an access change needs when the pages were pinned read-only.
     */
    private void rereg(final SimMr mr, final Set<ReregFlag> flags, final SimPd target, final long newAddr,
        final long newLength, final Set<Access> rights)
    {
        final SimDevice device = context.device();
        final int bits = Access.toBits(rights) & ~Access.ZERO_BASED.bit();
        final long startNs = device.fabric().clock().nowNs();
        final DeviceAttributes a = device.profile().attributes();
        if (Long.compareUnsigned(newLength, a.maxMrSizeBytes()) > 0 || Long.compareUnsigned(newAddr + newLength,
            newAddr) < 0)
        {
            throw reregCmd(Errno.EINVAL, "addr=0x" + Long.toHexString(newAddr) + " lengthBytes="
                + Long.toUnsignedString(newLength) + " wraps or exceeds max_mr_size="
                + Long.toUnsignedString(a.maxMrSizeBytes()));
        }
        final PinnedPages pinned;
        try
        {
            pinned = context.process().pinUserPages(newAddr, newLength, !disjoint(rights, WRITABLE), true);
        }
        catch (final KernelException e)
        {
            final String prefix = e.errno().name() + ": ";
            throw reregCmd(Errno.of(e.errno().value()), e.getMessage().startsWith(prefix)
                ? e.getMessage().substring(prefix.length()) : e.getMessage());
        }
        final List<DmaRun> runs = new ArrayList<>(pinned.runs().size());
        long leaves = 0;
        for (final PhysRun run : pinned.runs())
        {
            runs.add(new DmaRun(run.physAddr(), run.lengthBytes()));
            leaves += (run.lengthBytes() + run.pageSizeBytes() - 1) / run.pageSizeBytes();
        }
        final boolean zeroBased = rights.contains(Access.ZERO_BASED);
        final long tableIova = zeroBased ? newAddr & 0xfff : newAddr;
        // mlx5 rewrites the translation in place (UMR, same mkey) when the new one's DMA blocks, at its best page
        // size, fit the entries the mkey has (mlx5_ib_rereg_user_mr: can_use_umr_rereg_pas); otherwise it
        // registers a new mkey.
        final dev.rnicsim.mtt.PageSizeChoice choice;
        try
        {
            choice = device.tables().choose(runs, newAddr, newLength, tableIova);
        }
        catch (final TableException e)
        {
            context.process().unpinUserPages(pinned);
            throw reregCmd(Errno.EINVAL, e.getMessage());
        }
        final boolean newKey = device.profile().follows(ProviderRule.REREG_TRANSLATION_NEW_KEY)
            && (choice.pageSizeBytes() == 0 || choice.blocks() > mkeyCapacity(mr.mttEntries()));
        final RegisteredMr registered;
        long dropped = 0;
        try
        {
            registered = newKey ? device.tables().register(target.pdNum, runs, newAddr, newLength, tableIova, bits)
                : device.tables().retranslate(mr.lkey(), target.pdNum, runs, newAddr, newLength, tableIova, bits);
        }
        catch (final TableException e)
        {
            context.process().unpinUserPages(pinned);
            throw reregCmd(e.errno() == dev.rnicsim.mtt.Errno.ENOMEM ? Errno.ENOMEM : Errno.EINVAL, e.getMessage());
        }
        final int oldKey = mr.lkey();
        device.forgetZeroBased(oldKey);
        if (newKey)
        {
            dropped = device.tables().deregister(oldKey);
        }
        final PinnedPages old = mr.pinned();
        old.process().unpinUserPages(old);
        final int key = registered.key();
        if (zeroBased)
        {
            device.zeroBased(key, tableIova);
        }
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : key;
        moveTo(mr, target);
        mr.reregistered(target, newAddr, newLength, zeroBased ? 0 : newAddr, key, rkey, rights, pinned, registered);
        device.count(SimCounter.MR_REREGISTRATIONS, 1);
        device.count(SimCounter.PINNED_BYTES, pinned.lengthBytes() - old.lengthBytes());
        final long durationNs = device.fabric().costModel().registrationNs(pinned.pageCount(), leaves,
            registered.mtt().entries());
        device.fabric().span(device, "rereg_mr", "registration", durationNs, java.util.Map.of("old_lkey", oldKey,
            "lkey", key, "pages_pinned", pinned.pageCount(), "mtt_entries", registered.mtt().entries()));
        device.record(new RegistrationEvent(RegistrationEvent.Kind.REG, startNs, durationNs, key, newAddr, newLength,
            mr.iova(), Access.toBits(rights), pinned.pageCount(), leaves, registered.pageSizeBytes(),
            registered.mtt().entries(), dropped));
        device.invalidated("rereg_mr", oldKey, dropped);
        device.observe(o -> o.reregistered(mr, oldKey));
    }

    /** Entries an mlx5 mkey holds: its cache bucket's, a power of two (mr.c: {@code 1 << cache_ent->order}). */
    private static long mkeyCapacity(final long entries)
    {
        return entries <= 1 ? 1 : Long.highestOneBit(entries - 1) << 1;
    }

    private void moveTo(final SimMr mr, final SimPd target)
    {
        if (target != this)
        {
            mrs.remove(mr);
            target.mrs.add(mr);
        }
    }

    private static ReregException reregInput(final String message)
    {
        return new ReregException(Errno.EINVAL.code(), ReregException.ERR_INPUT, message);
    }

    private static ReregException reregCmd(final Errno errno, final String message)
    {
        return new ReregException(errno.code(), ReregException.ERR_CMD, message);
    }

    @Override
    public QueuePair createQp(final QpInitAttr attr)
    {
        checkOpen("ibv_create_qp");
        if (attr == null)
        {
            throw Errors.invalid("ibv_create_qp", "attr is null");
        }
        final SimQp qp = SimQp.create(this, attr);
        qps.add(qp);
        return qp;
    }

    void qpClosed(final SimQp qp)
    {
        qps.remove(qp);
    }

    /**
     * @return the live MRs of this PD.
     */
    public List<SimMr> memoryRegions()
    {
        return List.copyOf(mrs);
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        RuntimeException failure = Closing.each(List.copyOf(windows), SimMw::close, null);
        failure = Closing.each(List.copyOf(fastRegs), SimFastRegMr::close, failure);
        failure = Closing.each(List.copyOf(mrs), SimMr::close, Closing.each(List.copyOf(qps), SimQp::close,
            failure));
        closed = true;
        context.pdClosed(this);
        if (failure != null)
        {
            throw failure;
        }
    }

    void checkOpen(final String verb)
    {
        context.checkOpen(verb);
        if (closed)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the PD is closed");
        }
    }
}
