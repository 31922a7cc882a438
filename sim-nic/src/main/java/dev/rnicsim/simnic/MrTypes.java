package dev.rnicsim.simnic;

import dev.rnicsim.verbs.MemoryRegion;

/**
 * libibverbs' MR types ({@code enum ibv_mr_type} in driver.h): a plain MR ({@code IBV_MR_TYPE_MR}: ibv_reg_mr,
 * including ODP and peer-memory MRs) or a dma-buf MR ({@code IBV_MR_TYPE_DMABUF_MR}: ibv_reg_dmabuf_mr). Verbs that
 * accept only a plain MR (mlx5's ibv_bind_mw) ask here. Stateless.
 */
final class MrTypes
{
    private MrTypes()
    {
    }

    /**
     * @param mr an MR of this simulator.
     * @return its type's name as libibverbs spells it.
     */
    static String typeOf(final MemoryRegion mr)
    {
        if (mr instanceof SimPeerMr p && p.kind() != SimPeerMr.Kind.PEER_MEMORY)
        {
            return "IBV_MR_TYPE_DMABUF_MR";
        }
        if (mr instanceof SimNullMr)
        {
            return "IBV_MR_TYPE_NULL_MR";
        }
        if (mr instanceof SimDmMr)
        {
            return "device-memory MR (ibv_reg_dm_mr)";
        }
        return "IBV_MR_TYPE_MR";
    }

    /**
     * @param mr an MR of this simulator.
     * @return true for a plain MR ({@code IBV_MR_TYPE_MR}).
     */
    static boolean isPlain(final MemoryRegion mr)
    {
        return "IBV_MR_TYPE_MR".equals(typeOf(mr));
    }
}
