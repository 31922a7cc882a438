package dev.rnicsim.verbs;

/**
 * An open device ({@code struct ibv_context}): the root of the resource tree Context → PD → {MR, QP} and
 * Context → CQ. Closing it closes everything it owns, children first, as the kernel releases a process's objects
 * at exit ({@code ib_uverbs_cleanup_ufile}); a second close does nothing.
 *
 * <p>Not thread safe on the simulator.
 */
public interface Context extends AutoCloseable
{
    /**
     * @return the device this context was opened on.
     */
    Device device();

    /**
     * @return the device's attributes ({@code ibv_query_device_ex}).
     * @throws VerbsException EINVAL when the context is closed.
     */
    DeviceAttributes queryDevice();

    /**
     * @return the memory of the process that opened the device, where buffers to register come from.
     */
    HostMemory memory();

    /**
     * {@code ibv_alloc_pd}.
     *
     * @return a new protection domain.
     * @throws VerbsException ENOMEM when {@code max_pd} PDs exist; EINVAL when the context is closed.
     */
    ProtectionDomain allocPd();

    /**
     * {@code ibv_create_cq}: a completion queue whose ring is pinned host memory, charged to RLIMIT_MEMLOCK.
     *
     * @param cqe minimum number of entries, 1 to {@code max_cqe}.
     * @return a new CQ.
     * @throws VerbsException EINVAL when {@code cqe} is out of range; ENOMEM when the ring cannot be pinned or
     *                        {@code max_cq} CQs exist.
     */
    CompletionQueue createCq(int cqe);

    /**
     * @return {@code num_comp_vectors} of {@code struct ibv_context}: the completion vectors (interrupt queues) a CQ
     *         may be bound to, 0 to this less one.
     */
    default int numCompVectors()
    {
        return 1;
    }

    /**
     * {@code ibv_create_cq} with a completion vector: the kernel refuses a vector the device does not have before the
     * driver sees the CQ ({@code ib_uverbs_create_cq}: comp_vector at or above {@code num_comp_vectors} is EINVAL).
     *
     * @param cqe        minimum number of entries, 1 to {@code max_cqe}.
     * @param compVector the completion vector, 0 to {@link #numCompVectors()} - 1.
     * @return a new CQ.
     * @throws VerbsException EINVAL for a vector out of range, else as {@link #createCq(int)}.
     */
    default CompletionQueue createCq(final int cqe, final int compVector)
    {
        if (compVector < 0 || compVector >= numCompVectors())
        {
            throw new VerbsException("ibv_create_cq", Errno.EINVAL.code(), "comp_vector=" + compVector
                + " must be 0.." + (numCompVectors() - 1) + " (num_comp_vectors=" + numCompVectors()
                + ", ib_uverbs_create_cq); use a vector below ibv_context.num_comp_vectors");
        }
        return createCq(cqe);
    }

    /**
     * @return true once closed.
     */
    boolean isClosed();

    /**
     * Closes every QP, MR, PD and CQ of this context, then the context ({@code ibv_close_device}). Idempotent.
     */
    @Override
    void close();

    /**
     * {@code ibv_alloc_dm}: device memory of {@code lengthBytes}.
     *
     * @param lengthBytes bytes, more than 0 and at most the device's {@code max_dm_size}.
     * @return the device memory.
     * @throws VerbsException EOPNOTSUPP when the device has none; EINVAL for a length of 0 or above max_dm_size;
     *                        ENOMEM when the device memory left cannot hold it.
     */
    default DeviceMemory allocDm(final long lengthBytes)
    {
        throw new VerbsException("ibv_alloc_dm", Errno.EOPNOTSUPP.code(), "this backend does not provide device "
            + "memory"
            + " (ibv_alloc_dm); use the simulated backend or a device with device memory");
    }

    /**
     * {@code ibv_alloc_dm} with its whole {@code struct ibv_alloc_dm_attr}: the comp_mask as the application passes
     * it. The default passes an attribute set without comp_mask to {@link #allocDm(long)} and refuses any other with
     * EOPNOTSUPP (a backend that cannot pass the structure on).
     *
     * @param attr length, log_align_req and comp_mask.
     * @return the device memory.
     * @throws VerbsException as {@link #allocDm(long)}; EINVAL for a comp_mask the provider does not know (mlx5).
     */
    default DeviceMemory allocDm(final DmAttr attr)
    {
        if (attr.compMask() == 0)
        {
            return allocDm(attr.lengthBytes());
        }
        throw new VerbsException("ibv_alloc_dm", Errno.EOPNOTSUPP.code(), "this backend does not pass a comp_mask of "
            + "struct ibv_alloc_dm_attr; use the simulated backend, or comp_mask 0");
    }

    /**
     * {@code ibv_query_port}.
     *
     * @param portNum 1 to {@code phys_port_cnt}.
     * @return the port's attributes.
     * @throws VerbsException EINVAL for a port number outside 1..phys_port_cnt; EOPNOTSUPP when the backend does
     *                        not provide it.
     */
    default PortAttributes queryPort(final int portNum)
    {
        throw new VerbsException("ibv_query_port", Errno.EOPNOTSUPP.code(), "this backend does not provide it"
            + " (ibv_query_port); use the simulated backend");
    }

    /**
     * {@code ibv_query_gid_ex}: one entry of a port's GID table.
     *
     * @param portNum 1 to {@code phys_port_cnt}.
     * @param index   0 to {@code gid_tbl_len - 1}.
     * @return the 16-byte GID.
     * @throws VerbsException EINVAL for a port or index outside the table; ENODATA for an empty entry.
     */
    default byte[] queryGid(final int portNum, final int index)
    {
        throw new VerbsException("ibv_query_gid", Errno.EOPNOTSUPP.code(), "this backend does not provide it"
            + " (ibv_query_gid); use the simulated backend");
    }

    /**
     * {@code ibv_query_gid_ex}: one entry of a port's GID table with its type.
     *
     * @param portNum 1 to {@code phys_port_cnt}.
     * @param index   0 to {@code gid_tbl_len - 1}.
     * @return the entry: its GID and {@code gid_type}.
     * @throws VerbsException EINVAL for a port or index outside the table; ENODATA for an empty entry.
     */
    default GidEntry queryGidEntry(final int portNum, final int index)
    {
        throw new VerbsException("ibv_query_gid_ex", Errno.EOPNOTSUPP.code(), "this backend does not provide it"
            + " (ibv_query_gid_ex); use the simulated backend");
    }

    /**
     * {@code ibv_open_xrcd} without a file (fd -1): a new XRC domain of this context.
     *
     * @return the domain.
     * @throws VerbsException EOPNOTSUPP when the device has no XRC (no IBV_DEVICE_XRC in device_cap_flags: the
     *                        provider has no {@code open_xrcd}, and libibverbs' stand-in answers EOPNOTSUPP); EINVAL
     *                        when the context is closed.
     */
    default XrcDomain openXrcd()
    {
        throw new VerbsException("ibv_open_xrcd", Errno.EOPNOTSUPP.code(), "this backend does not provide XRC domains"
            + " (ibv_open_xrcd); use the simulated backend with a device that has XRC (mlx4, mlx5)");
    }

    /**
     * {@code ibv_open_xrcd} with a file: the XRC domain the file's inode names on this device, shared by every
     * context (process) of the device that opens the same file (kernel {@code ib_uverbs_open_xrcd}: one domain per
     * device and inode, found by {@code find_xrcd}). Each open gives a handle of this context; the domain lives while
     * any handle does (the kernel's {@code xrcd->usecnt}), and the last close frees it and forgets the inode
     * ({@code ib_uverbs_dealloc_xrcd}, {@code xrcd_table_delete}).
     *
     * @param file      the inode of the file given to ibv_open_xrcd.
     * @param create    O_CREAT: create the domain when the inode names none yet.
     * @param exclusive O_EXCL: refuse an inode that names a domain already.
     * @return a new handle on the domain.
     * @throws VerbsException EAGAIN when the inode names no domain of the device and {@code create} is false; EINVAL
     *                        when it names one and {@code exclusive} is true; EOPNOTSUPP when the device has no XRC.
     *                        Nothing changes then.
     */
    default XrcDomain openXrcd(final XrcdFile file, final boolean create, final boolean exclusive)
    {
        throw new VerbsException("ibv_open_xrcd", Errno.EOPNOTSUPP.code(), "this backend does not provide XRC domains"
            + " (ibv_open_xrcd); use the simulated backend with a device that has XRC (mlx4, mlx5)");
    }

    /**
     * {@code ibv_create_qp_ex} with IBV_QP_INIT_ATTR_XRCD: an XRC_RECV (target) QP in RESET, with no PD, no CQ and no
     * queues of its own; its messages go to the XRC SRQs of the domain they name.
     *
     * @param xrcd the XRC domain, of this context.
     * @return the QP.
     * @throws VerbsException EOPNOTSUPP when the device has no XRC; EINVAL for a domain of another context or one
     *                        closed; ENOMEM when max_qp QPs live.
     */
    default QueuePair createXrcRecvQp(final XrcDomain xrcd)
    {
        throw new VerbsException("ibv_create_qp_ex", Errno.EOPNOTSUPP.code(), "this backend does not provide XRC QPs"
            + "; use the simulated backend with a device that has XRC (mlx4, mlx5)");
    }

    /**
     * {@code ibv_fork_init} (ibv_fork_init(3)) for the process that opened this context: registered ranges are made
     * MADV_DONTFORK from now on, so that a child's copy-on-write cannot move a page under the device. Nothing to do,
     * and success, where the kernel copies DMA-pinned pages at fork ({@link ForkStatus#UNNEEDED}).
     *
     * @throws VerbsException EINVAL when the process registered memory (or created a queue) before asking and the
     *                        kernel does not copy pinned pages (libibverbs {@code ibv_fork_init}: too late); EOPNOTSUPP
     *                        where the backend does not provide it.
     */
    default void forkInit()
    {
        throw new VerbsException("ibv_fork_init", Errno.EOPNOTSUPP.code(), "this backend does not provide fork "
            + "support (ibv_fork_init); use the simulated backend or the rdma-core one");
    }

    /**
     * {@code ibv_is_fork_initialized} for the process that opened this context.
     *
     * @return UNNEEDED where the kernel copies pinned pages at fork, else ENABLED once {@link #forkInit()} succeeded,
     *         else DISABLED.
     * @throws VerbsException EOPNOTSUPP where the backend does not provide it.
     */
    default ForkStatus forkStatus()
    {
        throw new VerbsException("ibv_is_fork_initialized", Errno.EOPNOTSUPP.code(), "this backend does not report "
            + "fork support (ibv_is_fork_initialized); use the simulated backend or the rdma-core one");
    }

    /**
     * {@code ibv_get_async_event} on a non-blocking async fd: the oldest event not yet returned, in the order the
     * device raised them (ibv_get_async_event(3)). Each returned event must be acknowledged.
     *
     * @return the event, or empty when none is pending (the blocking call would wait; with O_NONBLOCK it is
     * EAGAIN).
     * @throws VerbsException EINVAL when the context is closed; EOPNOTSUPP when the backend does not provide it.
     */
    default java.util.Optional<AsyncEvent> getAsyncEvent()
    {
        throw new VerbsException("ibv_get_async_event", Errno.EOPNOTSUPP.code(), "this backend does not provide it"
            + " (ibv_get_async_event); use the simulated backend");
    }

    /**
     * {@code ibv_ack_async_event}: acknowledges an event {@link #getAsyncEvent()} returned.
     *
     * @param event the event.
     * @throws VerbsException EINVAL when this context did not return the event or it was acknowledged already;
     *                        EOPNOTSUPP when the backend does not provide it.
     */
    default void ackAsyncEvent(final AsyncEvent event)
    {
        throw new VerbsException("ibv_ack_async_event", Errno.EOPNOTSUPP.code(), "this backend does not provide it"
            + " (ibv_ack_async_event); use the simulated backend");
    }

    /**
     * {@code ibv_query_pkey}: one entry of a port's P_Key table, which libibverbs reads from sysfs
     * ({@code ports/PORT/pkeys/INDEX}; a port or index with no such file fails as the open does, ENOENT).
     *
     * @param portNum 1 to {@code phys_port_cnt}.
     * @param index   0 to {@code pkey_tbl_len - 1}.
     * @return the P_Key, 16 bits (0xffff: the default full-membership key).
     * @throws VerbsException ENOENT for a port or index outside the tables; EOPNOTSUPP when the backend does not
     *                        provide it.
     */
    default int queryPkey(final int portNum, final int index)
    {
        throw new VerbsException("ibv_query_pkey", Errno.EOPNOTSUPP.code(), "this backend does not provide it"
            + " (ibv_query_pkey); use the simulated backend");
    }

    /**
     * {@code ibv_query_gid_table}: the valid entries of every port's GID table (the kernel's
     * {@code UVERBS_METHOD_QUERY_GID_TABLE}, {@code rdma_query_gid_table}).
     *
     * @param maxEntries room for this many entries, more than 0 and at least the number of valid entries.
     * @return the valid entries, port by port, in index order.
     * @throws VerbsException EINVAL for 0 entries or fewer than the valid ones; EOPNOTSUPP when the backend does
     *                        not provide it.
     */
    default java.util.List<GidEntry> queryGidTable(final int maxEntries)
    {
        throw new VerbsException("ibv_query_gid_table", Errno.EOPNOTSUPP.code(), "this backend does not provide it"
            + " (ibv_query_gid_table); use the simulated backend");
    }

    /**
     * Allocates a buffer of a GPU of the host and exports it as a dma-buf, to register with
     * {@link ProtectionDomain#regDmabufMr} (rdma-core's tests do it through a DRM render node).
     *
     * @param sizeBytes bytes, more than 0; rounded up to the exporter's page.
     * @return the dma-buf.
     * @throws VerbsException ENODEV when the host has no GPU to export from; ENOMEM when the GPU's memory cannot
     *                        hold it; EINVAL for a size of 0 or less; EOPNOTSUPP when the backend does not provide it.
     */
    default DmaBuf allocDmabuf(final long sizeBytes)
    {
        throw new VerbsException("dmabuf_alloc", Errno.EOPNOTSUPP.code(), "this backend does not export dma-bufs"
            + " (a DRM or GPU allocation); use the simulated backend, whose host has a GPU");
    }
}
