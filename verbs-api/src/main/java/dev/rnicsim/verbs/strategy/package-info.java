/**
 * Registration strategies an application can adopt, written on the verbs interface only (so they run on the
 * simulator and on real hardware alike): a {@link dev.rnicsim.verbs.strategy.MemoryPool} that registers large chunks
 * once and hands out fragments with their keys, to be gathered into SGLs (the seed's S15), and a
 * {@link dev.rnicsim.verbs.strategy.RegistrationCache} that returns an existing MR for memory registered before and
 * drops entries when the memory goes away (S16, as UCX, libfabric, Open MPI and MPICH do).
 */
package dev.rnicsim.verbs.strategy;
