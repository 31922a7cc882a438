package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * A registered memory region ({@code struct ibv_mr}). Its pages are pinned and the device holds their
 * translation until it is deregistered; an on-demand-paging MR (ON_DEMAND) pins nothing and the device maps its
 * pages on first access, following the process's page table.
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
     * {@code ibv_rereg_mr} (ibv_rereg_mr(3)): changes the translation, PD and/or access of the MR. The keys may
     * change (re-read {@link #lkey()} and {@link #rkey()} afterwards): which ones survive is the device's.
     *
     * @param flags       what changes; not empty.
     * @param pd          the new PD (CHANGE_PD), else ignored.
     * @param addr        the new first byte (CHANGE_TRANSLATION), else ignored.
     * @param lengthBytes the new length (CHANGE_TRANSLATION), else ignored.
     * @param access      the new access (CHANGE_ACCESS); must be empty otherwise.
     * @throws ReregException ERR_INPUT with EINVAL for the library's input checks (CHANGE_TRANSLATION with address
     *                        0 or length 0, access without CHANGE_ACCESS, a closed MR, an MR that is not a plain user
     *                        MR); ERR_CMD with the kernel's errno (EINVAL for empty flags, refused access, a foreign
     *                        or closed PD, or a window bound to the MR, EOPNOTSUPP
     *                        when the device cannot change the translation, ENOMEM, EFAULT as for ibv_reg_mr).
     */
    void rereg(Set<ReregFlag> flags, ProtectionDomain pd, long addr, long lengthBytes, Set<Access> access);

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
