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
     * {@code ibv_alloc_mw}: an unbound memory window.
     *
     * @param type type 1 or 2.
     * @return the window.
     * @throws VerbsException EOPNOTSUPP when the device has no memory windows (no MEM_WINDOW flag, or max_mw 0 as
     *                        ConnectX-3 and E810 report) or not this type (type 2 needs MEM_WINDOW_TYPE_2A or
     *                        _2B); ENOMEM when max_mw windows are live or the MPT is full; EINVAL when the PD is
     *                        closed.
     */
    MemoryWindow allocMw(MwType type);

    /**
     * The kernel's {@code ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_num_sg)}: an MR for fast registration.
     *
     * @param maxNumSg the most pages one registration maps, at least 1.
     * @return the MR, INVALID until a REG_MR work request completes.
     * @throws VerbsException EINVAL for maxNumSg below 1 or a closed PD; EOPNOTSUPP when the device lacks
     *                        MEM_MGT_EXTENSIONS; ENOMEM when the MTT or max_mr is exhausted.
     */
    FastRegMr allocMr(int maxNumSg);

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
