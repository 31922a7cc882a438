package dev.rnicsim.simnic;

import java.util.Map;

/**
 * The device's half of an MR's deregistration, the same for a pinned, an ODP and a GPU MR: on a device whose
 * responder holds key references, wait until no message in flight holds the keys (rxe {@code rxe_dereg_mr} ending in
 * {@code rxe_cleanup}); let the writes in flight to the MR land (the device stops writing first); then zap the MPT
 * and MTT entries and the translation-cache entries of the key and forget its zero-based base. What the driver does
 * with the pages afterwards (unpin, drop notifiers, unmap BAR1) is its caller's.
 *
 * <p>Not thread safe.
 *
 * @param startNs             simulated time the deregistration started: after the wait, before the drain.
 * @param cacheEntriesDropped translation-cache entries dropped with the key.
 */
record KeyZap(long startNs, long cacheEntriesDropped)
{
    /**
     * Takes {@code lkey} away from the device.
     *
     * @param device the MR's device.
     * @param lkey   the MR's lkey, the key its tables entry has.
     * @param rkey   the MR's rkey (0 when it has none), waited on too.
     * @return when it started and what the translation cache lost.
     */
    static KeyZap of(final SimDevice device, final int lkey, final int rkey)
    {
        device.fabric().engine().awaitKeyHolders(device, "ibv_dereg_mr", lkey, rkey);
        final long startNs = device.fabric().clock().nowNs();
        // Writes still in flight to the MR land before its translation goes (the device stops writing first).
        device.writeOrdering().drain();
        final long dropped = device.tables().deregister(lkey);
        device.keys().forgetZeroBased(lkey);
        return new KeyZap(startNs, dropped);
    }

    /**
     * Reports the zap once the driver's own span is out: the invalidation stall as a span of its own
     * ({@link CostModel#invalidationStallNs()}) and one more MR deregistration counted.
     *
     * @param device the MR's device.
     * @param lkey   the key that went.
     */
    void reportInvalidation(final SimDevice device, final int lkey)
    {
        device.fabric().span(device, "invalidate", "invalidation", device.fabric().costModel().invalidationStallNs(),
            !device.fabric().tracing() ? Map.of() : Map.of("lkey", lkey, "cache_entries_dropped",
            cacheEntriesDropped));
        device.count(SimCounter.MR_DEREGISTRATIONS, 1);
    }
}
