package dev.rnicsim.dma;

/**
 * The driver side of a device page fault on an on-demand-paging MR: the device met a block it has no translation
 * for (or only a read-only one, for a write) and asks the driver to map the range (drivers/infiniband/hw/mlx5/odp.c
 * {@code pagefault_single_data_segment}: the whole data segment is mapped, not just the missing page).
 */
@FunctionalInterface
public interface PageFaultHandler
{
    /**
     * Maps a range of an ODP MR for the device, faulting pages in on the host as needed.
     *
     * @param key         the ODP MR's key (its key checks have passed).
     * @param iova        first address of the range.
     * @param lengthBytes bytes of the range.
     * @param write       the device will write.
     * @param remote      the access came from the network (the responder answers RNR NAK while it is handled).
     * @param odpOperation the operation that faulted as a per-transport ODP capability bit
     *                    ({@code IBV_ODP_SUPPORT_SEND} 0x1 for a requester gathering a SEND or WRITE,
     *                    {@code RECV} 0x2 for a receive buffer, {@code WRITE} 0x4 for a WRITE's target,
     *                    {@code READ} 0x8 for a READ's source or the requester's READ buffer, {@code ATOMIC} 0x10).
     * @return null when every block of the range is mapped now; otherwise why the fault failed (the work request
     * then completes in error, as after {@code mlx5_ib_page_fault_resume} with the error flag).
     */
    String resolve(int key, long iova, long lengthBytes, boolean write, boolean remote, int odpOperation);
}
