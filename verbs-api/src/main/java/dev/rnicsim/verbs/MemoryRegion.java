package dev.rnicsim.verbs;

import java.util.EnumSet;

/**
 * A registered memory region ({@code struct ibv_mr}). Its pages are pinned and the device holds their
 * translation until it is deregistered.
 *
 * <p>Not thread safe on the simulator.
 */
public interface MemoryRegion extends AutoCloseable
{
    /**
     * @return the PD it belongs to.
     */
    ProtectionDomain pd();

    /**
     * @return virtual address of its first byte.
     */
    long addr();

    /**
     * @return its length in bytes.
     */
    long lengthBytes();

    /**
     * @return the address accesses use for its first byte ({@code iova}; 0-based offsets for ZERO_BASED).
     */
    long iova();

    /**
     * @return the local key, for SGEs.
     */
    int lkey();

    /**
     * @return the remote key, handed to peers for RDMA and atomics (0 on devices that issue none for an MR
     * without remote rights, as rxe).
     */
    int rkey();

    /**
     * @return the rights it was registered with.
     */
    EnumSet<Access> access();

    /**
     * @return true once deregistered.
     */
    boolean isClosed();

    /**
     * {@code ibv_dereg_mr}: the device's translation is destroyed, its pages unpinned. Idempotent.
     *
     * @throws VerbsException EBUSY or EINVAL when memory windows are still bound to it (the MR stays registered).
     */
    @Override
    void close();
}
