/**
 * The DMA engine: executes the data movement of work requests between simulated hosts, checking keys in the order
 * of rxe's requester and responder, translating through each device's translation cache and MTT, and copying
 * between physical memories. It counts; it never reads a clock.
 */
package dev.rnicsim.dma;
