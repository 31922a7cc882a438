package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.FastRegMr;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A PD's fast-registration MRs: allocation and deallocation, as the kernel's {@code ib_alloc_mr} (verbs.c) with the
 * driver's {@code alloc_mr} (rxe {@code rxe_alloc_mr}, mlx5 {@code mlx5_ib_alloc_mr}) do them; mapping pages and the
 * REG_MR and LOCAL_INV work requests are {@link SimFastRegMr}'s. Needs MEM_MGT_EXTENSIONS.
 *
 * <p>Not thread safe.
 */
final class FastRegAllocation
{
    /** Most pages of a fast-registration MR: the kernel's {@code max_fast_reg_page_list_len} (assumed 2^16 for
     * every profile; rxe reports 512 and mlx5 derives it from its KLM list size). */
    static final int MAX_FAST_REG_PAGES = 1 << 16;

    private final SimPd pd;
    private final SimContext context;
    private final Set<SimFastRegMr> fastRegs = new LinkedHashSet<>();
    private final java.util.Collection<SimFastRegMr> fastRegsView = java.util.Collections.unmodifiableSet(fastRegs);

    FastRegAllocation(final SimPd pd)
    {
        this.pd = pd;
        this.context = pd.context();
    }

    /**
     * ib_alloc_mr: MEM_MGT_EXTENSIONS, max_num_sg from 1 to the driver's max_fast_reg_page_list_len, then an MPT
     * entry in the FREE state with MTT room for {@code maxNumSg} pages.
     */
    FastRegMr allocate(final int maxNumSg)
    {
        final String verb = "ib_alloc_mr";
        pd.checkOpen(verb);
        final SimDevice device = context.device();
        if (!device.profile().attributes().has(DeviceCap.MEM_MGT_EXTENSIONS))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " lacks MEM_MGT_EXTENSIONS (fast "
                + "registration)"
                + "; use a device with MEM_MGT_EXTENSIONS (mlx5, rxe)");
        }
        final int maxPages = Math.min(MAX_FAST_REG_PAGES, device.profile().traits().maxFastRegPages());
        if (maxNumSg < 1 || maxNumSg > maxPages)
        {
            throw Errors.invalid(verb, "max_num_sg=" + maxNumSg + " must be from 1 to " + maxPages
                + " (max_fast_reg_page_list_len of " + device.profile().traits().driver() + ", "
                + device.profile().traits().source() + ")"
                + "; give max_num_sg in that range");
        }
        final int key;
        try
        {
            key = device.tables().allocateFastReg(pd.pdNum(), maxNumSg);
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
        final SimFastRegMr mr = new SimFastRegMr(pd, maxNumSg, key);
        fastRegs.add(mr);
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        return mr;
    }

    /** ibv_dereg_mr of a fast-registration MR: its MPT entry and MTT room are freed, its key stops validating. */
    void dealloc(final SimFastRegMr mr)
    {
        final SimDevice device = context.device();
        device.fabric().engine().awaitKeyHolders(device, "ibv_dereg_mr", mr.key());
        final long dropped = device.tables().deregister(mr.key());
        fastRegs.remove(mr);
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
        device.fabric().span(device, "invalidate", "invalidation", device.fabric().costModel().invalidationStallNs(),
            Map.of("cause", "dereg_mr", "key", mr.key(), "cache_entries_dropped", dropped));
    }

    /** @return the live fast-registration MRs, in allocation order. */
    List<SimFastRegMr> live()
    {
        return List.copyOf(fastRegs);
    }

    /** @return the live fast-registration MRs, not copied: for a search that changes none. */
    java.util.Collection<SimFastRegMr> view()
    {
        return fastRegsView;
    }

    /** @return how many fast-registration MRs are live. */
    int count()
    {
        return fastRegs.size();
    }
}
