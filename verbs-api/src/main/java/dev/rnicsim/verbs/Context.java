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
}
