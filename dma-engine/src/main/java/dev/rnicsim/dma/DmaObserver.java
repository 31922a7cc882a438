package dev.rnicsim.dma;

/**
 * Told of every access a device's DMA makes to host memory, as it makes it: which key the access went through, the
 * I/O virtual address it presented, the physical bytes it read or wrote. A checker uses it to hold the invariant of
 * key retirement: once {@code ibv_dereg_mr}, {@code ibv_dealloc_mw}, a LOCAL_INV or an unbind has returned (or
 * completed), no DMA reads or writes memory through that key ({@code ibv_dereg_mr(3)}: the region is unregistered
 * when the call returns; IBA vol. 1 ch. 10.6, memory registration and invalidation). The DMA engine calls it only
 * when one is set, and never changes what it does because of it.
 */
@FunctionalInterface
public interface DmaObserver
{
    /**
     * @param port        the side whose memory was accessed (its tables name the device).
     * @param key         the lkey or rkey the access went through.
     * @param iova        the address presented with the key (first byte).
     * @param physAddr    the first physical address accessed.
     * @param lengthBytes bytes accessed (contiguous in physical memory).
     * @param write       true for a write into that memory, false for a read from it.
     */
    void accessed(DmaPort port, int key, long iova, long physAddr, long lengthBytes, boolean write);

    /**
     * A message that moves packet by packet passed the responder's checks of its first packet for {@code key}.
     *
     * @param message the message (the same object is passed to {@link #packet}).
     * @param port    the responder's side.
     * @param key     the rkey checked.
     */
    default void opened(final Object message, final DmaPort port, final int key)
    {
    }

    /**
     * A later packet of that message passed the re-check of {@code key}'s state and is about to be placed: a
     * checker can tell whether the key still names the registration the first packet was checked against.
     *
     * @param message the message.
     * @param port    the responder's side.
     * @param key     the rkey.
     */
    default void packet(final Object message, final DmaPort port, final int key)
    {
    }
}
