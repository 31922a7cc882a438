package dev.rnicsim.simnic;

import java.util.Set;

/**
 * {@code ibv_dereg_mr} of an MR that memory windows are bound to. The IBA (10.6.7.2.6) has the deregistration fail
 * while windows are bound, and rxe ({@code rxe_dereg_mr}: EINVAL while {@code mr->num_mw} is not 0) and mlx4 (the
 * firmware refuses {@code HW2SW_MPT} of an MPT that windows are bound to: {@code mlx4_mr_free_reserved}, "MR has MWs
 * bound to it"; its errno is the firmware's status, modelled as EINVAL) do so. mlx5 counts no windows
 * ({@code mlx5_ib_dereg_mr} revokes or destroys the mkey whatever refers to it): where the profile follows
 * {@link ProviderRule#DEREG_MR_INVALIDATES_BOUND_WINDOWS} the MR goes and its windows, whose indirect mkeys point at
 * it, translate nothing any more: an access through one is refused as an access through an invalid key. Stateless.
 */
final class MrWindows
{
    private MrWindows()
    {
    }

    /**
     * @return why {@code ibv_dereg_mr} of {@code mr} is refused (EINVAL), or null when it may go on.
     */
    static String deregRefusal(final SimMr mr)
    {
        if (mr.boundWindows() == 0
            || mr.pd().context().device().profile().follows(ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS))
        {
            return null;
        }
        return mr.boundWindows() + " memory window(s) are bound to MR 0x" + Integer.toHexString(mr.lkey())
            + ": deregistration must fail (IBA 10.6.7.2.6; rxe_dereg_mr, mlx4 HW2SW_MPT); unbind or deallocate them "
            + "first";
    }

    /**
     * After the MR's deregistration, on a device that lets it go with windows bound: each window bound to it stops
     * translating (its MPT entry is made invalid, its cached entries dropped), as its indirection now names a
     * destroyed key. The window stays allocated; a new bind or ibv_dealloc_mw works as on any unbound window.
     */
    static void orphan(final SimMr mr)
    {
        if (mr.boundWindows() == 0)
        {
            return;
        }
        final SimDevice device = mr.pd().context().device();
        for (final SimMw mw : mr.pd().memoryWindows())
        {
            if (mw.boundMr() == mr)
            {
                final int key = mw.tableKey();
                // the handle's rkey stays as the application last saw it (a type 1 bind that failed moved it)
                final int shown = mw.rkey();
                final long dropped = device.tables().invalidateWindow(key);
                device.keys().forgetZeroBased(key);
                mw.bound(key, null, null, 0, 0, Set.of());
                mw.rkey(shown);
                device.invalidated("dereg_mr_window", key, dropped);
            }
        }
    }
}
