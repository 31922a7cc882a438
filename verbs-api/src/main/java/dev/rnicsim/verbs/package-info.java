/**
 * The verbs-like interface users program against, with no dependency on any backend.
 *
 * <p>What will live here: {@code Verbs}, {@code Device}, {@code Context}, {@code ProtectionDomain},
 * {@code MemoryRegion}, {@code MemoryWindow}, {@code CompletionQueue}, {@code QueuePair},
 * {@code WorkRequest}, {@code WorkCompletion}, the {@code Access} flags, {@code VerbsException} carrying the
 * errno, and the provider SPI found through {@link java.util.ServiceLoader}, so that the simulated device and
 * the real one (rdma-core through {@code java.lang.foreign}) sit behind the same calls.
 */
package dev.rnicsim.verbs;
