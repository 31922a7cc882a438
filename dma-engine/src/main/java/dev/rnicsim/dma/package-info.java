/**
 * The DMA engine: executes work requests against the adapter tables and host memory.
 *
 * <p>What will live here: responder and requester checks in rxe's order (key, PD, rights, state, range,
 * length) with the work-completion status each failure yields ({@code IBV_WC_REM_ACCESS_ERR},
 * {@code IBV_WC_LOC_PROT_ERR}, ...), translation through the NIC translation cache and the MTT, reads,
 * writes and 8-byte atomics on host physical memory, ODP faults and ordering. It counts work (bytes moved,
 * cache misses, faults) and never reads a clock.
 */
package dev.rnicsim.dma;
