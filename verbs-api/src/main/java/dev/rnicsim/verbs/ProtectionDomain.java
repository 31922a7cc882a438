package dev.rnicsim.verbs;

import java.util.Set;

/**
 * A protection domain ({@code struct ibv_pd}): MRs and QPs of one PD can be used together; a key presented on a QP
 * of another PD is refused.
 *
 * <p>Not thread safe on the simulator.
 */
public interface ProtectionDomain extends AutoCloseable
{
    /**
     * @return the context that allocated this PD.
     */
    Context context();

    /**
     * {@code ibv_reg_mr}: registers {@code [addr, addr + lengthBytes)} with {@code iova == addr}.
     *
     * @param addr        first byte (process virtual address).
     * @param lengthBytes bytes to register, more than 0 and at most {@code max_mr_size}.
     * @param access      rights; REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE.
     * @return the MR.
     * @throws VerbsException EINVAL for a zero or wrapping length, a length above {@code max_mr_size}, a bad flag
     *                        combination, or flags the device does not support; ENOMEM when RLIMIT_MEMLOCK, the MTT,
     *                        {@code max_mr} or memory runs out; EFAULT when part of the range is not mapped with
     *                        the rights needed; EPERM when RLIMIT_MEMLOCK is 0 without CAP_IPC_LOCK; EOPNOTSUPP
     *                        for ON_DEMAND on a device without ODP.
     */
    MemoryRegion regMr(long addr, long lengthBytes, Set<Access> access);

    /**
     * {@code ibv_reg_mr_iova}: as {@link #regMr(long, long, Set)}, but the MR is addressed by {@code iova}: a
     * key-relative address X maps to {@code addr + (X - iova)}.
     *
     * @param addr        first byte (process virtual address).
     * @param lengthBytes bytes to register.
     * @param iova        the address remote and local accesses use; same offset within a 4 KiB page as addr.
     * @param access      rights.
     * @return the MR.
     * @throws VerbsException as {@link #regMr(long, long, Set)}, and EINVAL when addr and iova differ in their
     *                        page offset.
     */
    MemoryRegion regMr(long addr, long lengthBytes, long iova, Set<Access> access);

    /**
     * {@code ibv_create_qp}: a queue pair in RESET whose send and receive rings are pinned host memory.
     *
     * @param attr CQs, type and capacities.
     * @return the QP.
     * @throws VerbsException EINVAL for capacities above the device's limits or CQs of another context;
     *                        EOPNOTSUPP for a type the device does not offer; ENOMEM when the rings cannot be pinned.
     */
    QueuePair createQp(QpInitAttr attr);

    /**
     * @return true once closed.
     */
    boolean isClosed();

    /**
     * Closes this PD's QPs and MRs, then frees it ({@code ibv_dealloc_pd}). Idempotent.
     */
    @Override
    void close();
}
