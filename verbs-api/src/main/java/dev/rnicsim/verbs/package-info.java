/**
 * The verbs-like interface users program against, with no dependency on any backend: {@link Verbs},
 * {@link Device}, {@link Context}, {@link ProtectionDomain}, {@link MemoryRegion}, {@link CompletionQueue},
 * {@link QueuePair}, work requests ({@link SendWr}, {@link RecvWr}, {@link Sge}), {@link WorkCompletion}, the
 * {@link Access} flags and {@link VerbsException} carrying the errno. Backends plug in through
 * {@link dev.rnicsim.verbs.spi.VerbsProvider}, so the simulated device and the real one sit behind the same calls.
 * Addresses are process virtual addresses and keys are 32-bit values, as in libibverbs.
 */
package dev.rnicsim.verbs;
