package dev.rnicsim.simnic;

import java.util.Map;

/**
 * One span of simulated time on a device, for timelines: a registration, a deregistration (with its invalidation
 * stall), a work request's execution, a queue's creation.
 *
 * @param name       what happened, e.g. {@code reg_mr}, {@code RDMA_WRITE}.
 * @param category   {@code registration}, {@code dma}, {@code invalidation} or {@code queue}.
 * @param host       the host's name.
 * @param device     the device's name.
 * @param startNs    simulated start time in ns.
 * @param durationNs simulated duration in ns.
 * @param args       details (keys, bytes, pages, MTT entries, cache misses, status), in insertion order.
 */
public record TraceEvent(String name, String category, String host, String device, long startNs, long durationNs,
    Map<String, Object> args)
{
    /**
     * @throws NullPointerException when args is null.
     */
    public TraceEvent
    {
        args = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(args));
    }
}
