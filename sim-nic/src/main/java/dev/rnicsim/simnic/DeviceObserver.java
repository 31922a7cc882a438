package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;

/**
 * Sees what a simulated device does, as it does it: the hooks a checker (such as the testkit's strict mode) uses to
 * turn misuse that real hardware hides into test failures. Every method has an empty default; an observer must not
 * call verbs on the device from a callback.
 */
public interface DeviceObserver
{
    /**
     * After a successful ibv_reg_mr.
     *
     * @param mr the new MR.
     */
    default void registered(final SimMr mr)
    {
    }

    /**
     * After a successful ibv_rereg_mr (its keys, range or pages may have changed).
     *
     * @param mr       the MR as it is now.
     * @param oldLkey  its lkey before.
     */
    default void reregistered(final SimMr mr, final int oldLkey)
    {
    }

    /**
     * After a successful ibv_dereg_mr (also when a PD, context or process closes it).
     *
     * @param mr the MR, closed now.
     */
    default void deregistered(final SimMr mr)
    {
    }

    /**
     * An MMU-notifier invalidation zapped the device's translation of part of an ODP MR, before the host changed
     * the pages.
     *
     * @param mr          the MR.
     * @param va          first byte zapped.
     * @param lengthBytes bytes zapped.
     * @param reason      the host operation ("munmap", "reclaim", "copy-on-write", ...).
     */
    default void odpInvalidated(final SimOdpMr mr, final long va, final long lengthBytes, final String reason)
    {
    }

    /**
     * Before a context closes what it still holds (ibv_close_device, or its process exiting).
     *
     * @param context the context.
     */
    default void closing(final SimContext context)
    {
    }

    /**
     * After a work request moved data successfully (its bytes are in place).
     *
     * @param qp   the requester QP.
     * @param wr   the work request.
     * @param peer the responder QP.
     * @param recv the receive it consumed at the peer (SEND and WRITE_WITH_IMM), or null.
     */
    default void transferred(final SimQp qp, final SendWr wr, final SimQp peer, final RecvWr recv)
    {
    }

    /**
     * When the first packet of a message moving packet by packet is placed: DMA from its gather list and into its
     * target (a READ's first response, the other way) happened, whatever ends the message later (a NAK, a peer gone,
     * a flush). Told on the requester's device and, when another, on the responder's.
     *
     * @param message the message.
     */
    default void firstPacketPlaced(final InflightMessage message)
    {
    }

    /**
     * After a work request failed in the DMA engine's checks (local or remote).
     *
     * @param qp     the requester QP.
     * @param wr     the work request.
     * @param result the engine's outcome (statuses and the failed key check).
     */
    default void failed(final SimQp qp, final SendWr wr, final DmaResult result)
    {
    }

    /**
     * When a key of this device is retired while a message in flight uses it: the rkey a responder checked on the
     * message's first packet, or an lkey of the requester's list. Told before the retirement takes effect (and, on a
     * device whose responder holds its keys, before it waits for the message).
     *
     * @param retirement what retires it: {@code ibv_dereg_mr}, {@code ibv_dealloc_mw}, {@code LOCAL_INV}, a bind.
     * @param key        the key retired.
     * @param message    the message in flight through it.
     */
    default void retiredInFlight(final String retirement, final int key, final InflightMessage message)
    {
    }
}
