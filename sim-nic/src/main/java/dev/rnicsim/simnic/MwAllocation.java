package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwType;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A PD's memory windows: allocation and deallocation, as the kernel's {@code ib_uverbs_alloc_mw} and
 * {@code uverbs_free_mw} (uverbs_cmd.c, uverbs_std_types_mw.c) and the driver's {@code alloc_mw}/{@code dealloc_mw}
 * (rxe_mw.c, mlx5 mr.c) do them; binding and invalidation are {@link SimMw}'s and the work requests'. Types and limits
 * come from the device attributes (MEM_WINDOW, MEM_WINDOW_TYPE_2A/2B, max_mw).
 *
 * <p>Not thread safe.
 */
final class MwAllocation
{
    private final SimPd pd;
    private final SimContext context;
    private final Set<SimMw> windows = new LinkedHashSet<>();
    private final java.util.Collection<SimMw> windowsView = java.util.Collections.unmodifiableSet(windows);

    MwAllocation(final SimPd pd)
    {
        this.pd = pd;
        this.context = pd.context();
    }

    /**
     * The device's refusal: without MEM_WINDOW in device_cap_flags or with max_mw 0, libibverbs finds no alloc_mw in
     * the provider and answers EOPNOTSUPP, whatever the type; max_mw 0 allows windows where the driver never sets
     * it ({@link ProviderRule#WINDOWS_WITHOUT_MAX_MW}: mlx4).
     */
    void checkSupported(final String verb)
    {
        final SimDevice device = context.device();
        final DeviceAttributes a = device.profile().attributes();
        if (!a.has(DeviceCap.MEM_WINDOW)
            || a.maxMw() == 0 && !device.profile().follows(ProviderRule.WINDOWS_WITHOUT_MAX_MW))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " has no memory windows (MEM_WINDOW "
                + (a.has(DeviceCap.MEM_WINDOW) ? "set" : "not set") + " in device_cap_flags, max_mw=" + a.maxMw()
                + ")"
                + "; use a device with memory windows (mlx5, rxe)");
        }
    }

    /**
     * ibv_alloc_mw: the type's support (type 2 needs MEM_WINDOW_TYPE_2A or _2B), max_mw, then an MPT entry for the
     * window in the tables.
     */
    MemoryWindow allocate(final MwType type)
    {
        final String verb = "ibv_alloc_mw";
        pd.checkOpen(verb);
        if (type == null)
        {
            throw Errors.invalid(verb, "type must be TYPE_1 or TYPE_2"
                + "; pass TYPE_1 or TYPE_2");
        }
        final SimDevice device = context.device();
        final DeviceAttributes a = device.profile().attributes();
        checkSupported(verb);
        if (type == MwType.TYPE_2 && !a.has(DeviceCap.MEM_WINDOW_TYPE_2A) && !a.has(DeviceCap.MEM_WINDOW_TYPE_2B))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " has no type 2 windows (neither "
                + "MEM_WINDOW_TYPE_2A nor MEM_WINDOW_TYPE_2B in device_cap_flags)"
                + "; allocate a type 1 window or use a device with type 2 windows");
        }
        // mlx4 counts windows in the MPT it shares with MRs (mlx4_mw_alloc): the tables refuse when it is full
        if (!device.profile().follows(ProviderRule.WINDOWS_WITHOUT_MAX_MW) && device.tables().windowCount() >= a.maxMw())
        {
            throw Errors.of(verb, Errno.ENOMEM, device.tables().windowCount() + " windows live = max_mw="
                + a.maxMw()
                + "; deallocate a window first or use a device with a larger max_mw");
        }
        final int key;
        try
        {
            key = device.tables().allocateWindow(pd.pdNum(), type.code());
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
        final SimMw mw = new SimMw(pd, type, key);
        windows.add(mw);
        device.keyHistory().allocated(key, (type == MwType.TYPE_1 ? "type 1" : "type 2") + " window of PD "
            + pd.pdNum() + ", not bound");
        return mw;
    }

    /** ibv_dealloc_mw: unbinds (releasing the MR), frees the window's MPT entry; its key stops validating. */
    void dealloc(final SimMw mw)
    {
        final SimDevice device = context.device();
        device.fabric().engine().awaitKeyHolders(device, "ibv_dealloc_mw", mw.tableKey());
        device.keys().forgetZeroBased(mw.tableKey());
        final long dropped = device.tables().freeWindow(mw.tableKey());
        mw.bound(mw.tableKey(), null, null, 0, 0, Set.of());
        windows.remove(mw);
        mw.markClosed();
        device.invalidated("dealloc_mw", mw.tableKey(), dropped);
    }

    /** @return the live windows, in allocation order. */
    List<SimMw> live()
    {
        return List.copyOf(windows);
    }

    /** @return the live windows, not copied: for a search that changes none. */
    java.util.Collection<SimMw> view()
    {
        return windowsView;
    }

    /** @return how many windows are live. */
    int count()
    {
        return windows.size();
    }
}
