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
     *                        With ON_DEMAND nothing is pinned and RLIMIT_MEMLOCK is not charged; addr 0 with
     *                        lengthBytes -1 ({@code SIZE_MAX}) registers an implicit ODP MR over the whole address
     *                        space (EOPNOTSUPP without IBV_ODP_SUPPORT_IMPLICIT).
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
     * {@code ibv_create_srq}: a shared receive queue.
     *
     * @param attr max_wr, max_sge and srq_limit.
     * @return the SRQ.
     * @throws VerbsException EOPNOTSUPP when the device has no SRQs (max_srq 0); EINVAL for max_wr or max_sge of 0 or
     *                        above the device's limits, or a limit above max_wr; ENOMEM when max_srq SRQs live.
     */
    default SharedReceiveQueue createSrq(final SrqAttr attr)
    {
        throw new VerbsException("ibv_create_srq", Errno.EOPNOTSUPP.code(), "this backend has no SRQs; give each "
            + "QP its own receive queue, or use the simulated NIC, which has them");
    }

    /**
     * {@code ibv_create_srq_ex} with srq_type IBV_SRQT_XRC (comp_mask TYPE, PD, XRCD and CQ): an XRC SRQ of this PD in
     * the domain; the receives it completes go to {@code cq}. It keeps the PD, the domain and the CQ busy.
     *
     * @param xrcd the XRC domain, of this PD's context.
     * @param cq   the CQ its receive completions go to, of this PD's context.
     * @param attr max_wr, max_sge and srq_limit.
     * @return the SRQ; {@link SharedReceiveQueue#srqNum()} gives the number senders name.
     * @throws VerbsException EOPNOTSUPP when the device has no XRC or no SRQs; EINVAL for a domain or CQ of another
     *                        context or closed, or attributes as {@link #createSrq}; ENOMEM when max_srq SRQs live.
     */
    default SharedReceiveQueue createXrcSrq(final XrcDomain xrcd, final CompletionQueue cq, final SrqAttr attr)
    {
        throw new VerbsException("ibv_create_srq_ex", Errno.EOPNOTSUPP.code(), "this backend has no XRC SRQs; use the "
            + "simulated backend with a device that has XRC (mlx4, mlx5)");
    }

    /**
     * {@code ibv_create_ah}: an address handle for UD sends.
     *
     * @param attr the address vector.
     * @return the address handle.
     * @throws VerbsException EINVAL for a port outside 1..phys_port_cnt or, on RoCE, an address without a GID;
     *                        EOPNOTSUPP where the backend has none.
     */
    default AddressHandle createAh(final AhAttr attr)
    {
        throw new VerbsException("ibv_create_ah", Errno.EOPNOTSUPP.code(), "this backend has no "
            + "address handles; use RC QPs, or the simulated NIC for UD");
    }

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
     * {@code ibv_alloc_null_mr}: an MR whose writes are discarded and whose reads give zeros, spanning the whole
     * address space, with an lkey and no rkey; {@code ibv_rereg_mr} refuses it and so does mlx5's
     * {@code ibv_bind_mw}.
     *
     * @return the null MR.
     * @throws VerbsException EOPNOTSUPP when the provider has none (every driver but mlx5); ENOMEM when the MPT is
     *                        full; EINVAL when the PD is closed.
     */
    default MemoryRegion allocNullMr()
    {
        throw new VerbsException("ibv_alloc_null_mr", Errno.EOPNOTSUPP.code(), "this backend does not provide null MRs"
            + " (ibv_alloc_null_mr); use the simulated backend");
    }

    /**
     * {@code ibv_reg_dm_mr}: an MR over device memory, zero-based (IBV_ACCESS_ZERO_BASED must be given): addresses
     * presented with its keys are offsets from {@code dmOffset}.
     *
     * @param dm          the device memory, of this PD's context.
     * @param dmOffset    first byte of the MR in the device memory.
     * @param lengthBytes bytes.
     * @param access      ZERO_BASED and any of LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC.
     * @return the MR.
     * @throws VerbsException EOPNOTSUPP when the device has no device memory; EINVAL without ZERO_BASED, for other
     *                        flags, REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE, or a range outside the device
     *                        memory; ENOMEM when the MPT is full.
     */
    default MemoryRegion regDmMr(final DeviceMemory dm, final long dmOffset, final long lengthBytes,
        final Set<Access> access)
    {
        throw new VerbsException("ibv_reg_dm_mr", Errno.EOPNOTSUPP.code(), "this backend does not provide device "
            + "memory MRs"
            + " (ibv_reg_dm_mr); use the simulated backend");
    }

    /**
     * {@code ibv_reg_mr_ex}: one entry point for address-mode and dma-buf registrations, the fields selected by a
     * comp_mask ({@link MrInitAttr}). Address mode registers as {@link #regMr(long, long, long, Set)} (iova: the
     * given one with MASK_IOVA, else addr); fd mode as {@link #regDmabufMr} (offset: FD_OFFSET's, else 0; iova: the
     * given one, else the offset).
     *
     * @param in the input.
     * @return the MR.
     * @throws VerbsException EINVAL for a comp_mask with unknown bits, with neither or both modes, or FD_OFFSET
     *                        without FD (the library's checks; nothing reaches the device); EOPNOTSUPP for DMAH;
     *                        otherwise as the registration verb of the mode.
     */
    default MemoryRegion regMrEx(final MrInitAttr in)
    {
        if (in == null)
        {
            throw new VerbsException("ibv_reg_mr_ex", Errno.EINVAL.code(), "mr_init_attr is null"
                + "; pass an mr_init_attr");
        }
        in.check();
        final boolean iova = (in.compMask() & MrInitAttr.MASK_IOVA) != 0;
        if ((in.compMask() & MrInitAttr.MASK_ADDR) != 0)
        {
            return iova ? regMr(in.addr(), in.lengthBytes(), in.iova(), in.access())
                : regMr(in.addr(), in.lengthBytes(), in.access());
        }
        final long offset = (in.compMask() & MrInitAttr.MASK_FD_OFFSET) != 0 ? in.fdOffset() : 0;
        return regDmabufMr(offset, in.lengthBytes(), iova ? in.iova() : offset, in.fd(), in.access());
    }

    /**
     * {@code ibv_alloc_mw} with the type as the number the application passes, so that a number that is no window
     * type can be tried.
     *
     * @param typeCode the {@code enum ibv_mw_type} value: 1 or 2.
     * @return the window.
     * @throws VerbsException EINVAL for any other number (the kernel's {@code ib_uverbs_alloc_mw} refuses it),
     *                        after the device's own refusal (EOPNOTSUPP when it has no windows); otherwise as
     *                        {@link #allocMw(MwType)}.
     */
    default MemoryWindow allocMw(final int typeCode)
    {
        for (final MwType t : MwType.values())
        {
            if (t.code() == typeCode)
            {
                return allocMw(t);
            }
        }
        throw new VerbsException("ibv_alloc_mw", Errno.EINVAL.code(), "type " + typeCode + ": a memory window is "
            + "type 1 or type 2 (IBV_MW_TYPE_1, IBV_MW_TYPE_2; ib_uverbs_alloc_mw)"
            + "; pass type 1 or 2");
    }

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
     * {@code ibv_reg_dmabuf_mr} (ibv_reg_mr(3)): registers {@code [offset, offset + lengthBytes)} of a dma-buf (device
     * memory exported by another driver, e.g. a GPU's), addressed by {@code iova}.
     *
     * @param offset      first byte inside the dma-buf.
     * @param lengthBytes bytes, more than 0.
     * @param iova        the address accesses use; same offset within a 4 KiB page as {@code offset}.
     * @param fd          the dma-buf's file descriptor.
     * @param access      only LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC and RELAXED_ORDERING.
     * @return the MR.
     * @throws VerbsException EOPNOTSUPP when the provider cannot register dma-bufs; EINVAL for other access flags,
     *                        REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE, mismatched page offsets, a zero,
     *                        wrapping or too long range ({@code ib_umem_dmabuf_get}); EBADF when fd names no
     *                        dma-buf; EFAULT when the exporter cannot map it for the device (a full BAR1 aperture);
     *                        ENOMEM when the MTT or max_mr runs out.
     */
    default MemoryRegion regDmabufMr(final long offset, final long lengthBytes, final long iova, final int fd,
        final Set<Access> access)
    {
        throw new VerbsException("ibv_reg_dmabuf_mr", Errno.EOPNOTSUPP.code(), "this provider cannot register "
            + "dma-bufs (no reg_dmabuf_mr); use a provider that has it (mlx5, efa, rxe) or register host memory");
    }

    /**
     * {@code ibv_advise_mr} (ibv_advise_mr(3)): asks the device to map ranges of on-demand-paging MRs ahead of the
     * I/O. Best effort: without {@link MrAdvice#FLAG_FLUSH} the work may be deferred.
     *
     * @param advice  what to do.
     * @param flags   0 or {@link MrAdvice#FLAG_FLUSH}.
     * @param sgList  the ranges, each with the lkey of an ODP MR of this PD; not empty.
     * @throws VerbsException as ibv_advise_mr(3) and the mlx5 driver ({@code mlx5_ib_advise_mr_prefetch},
     *                        {@code get_prefetchable_mr}) give them: EOPNOTSUPP when the provider has no advise_mr;
     *                        EINVAL for unknown flags, an empty list or a closed PD; ENOENT when an lkey names no
     *                        MR; EINVAL when it names an MR that is not ODP; EPERM for an MR of another PD, or
     *                        PREFETCH_WRITE on an MR without LOCAL_WRITE; EFAULT for a range outside its MR or not
     *                        mapped in the process.
     */
    default void adviseMr(final MrAdvice advice, final int flags, final java.util.List<Sge> sgList)
    {
        throw new VerbsException("ibv_advise_mr", Errno.EOPNOTSUPP.code(), "this provider has no advise_mr"
            + " (ibv_advise_mr); use a device with ODP (mlx5)");
    }

    /**
     * @return true once closed.
     */
    boolean isClosed();

    /**
     * {@code ibv_dealloc_pd} itself, without closing anything first: the kernel counts the PD's users and frees it
     * only at zero ({@code ib_dealloc_pd_user} is reached from {@code uverbs_free_pd} only when {@code
     * pd->usecnt} is 0).
     *
     * @throws VerbsException EBUSY while an MR, a memory window, a QP, an SRQ or an address handle of this PD lives
     *                        (the PD stays usable and nothing changes); EINVAL when it is already closed.
     */
    void dealloc();

    /**
     * Closes this PD's QPs and MRs, then frees it ({@code ibv_dealloc_pd}). Idempotent.
     */
    @Override
    void close();
}
