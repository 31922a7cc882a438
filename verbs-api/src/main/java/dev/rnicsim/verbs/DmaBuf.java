package dev.rnicsim.verbs;

/**
 * A dma-buf allocated from a GPU of the host and exported as a file descriptor, to register with
 * {@link ProtectionDomain#regDmabufMr} (what rdma-core's tests allocate through a DRM render node,
 * {@code DRM_IOCTL_MODE_CREATE_DUMB} then {@code DRM_IOCTL_PRIME_HANDLE_TO_FD}, in pyverbs' {@code DmaBuf}). The
 * buffer is GPU memory: the CPU reaches it through {@link #write} and {@link #read} (the exporter's mapping), not
 * through {@link HostMemory}.
 *
 * <p>Not thread safe.
 */
public interface DmaBuf extends AutoCloseable
{
    /**
     * @return the dma-buf's file descriptor, the {@code fd} of {@code ibv_reg_dmabuf_mr}.
     */
    int fd();

    /**
     * @return its size in bytes (the asked size rounded up to the exporter's page).
     */
    long sizeBytes();

    /**
     * Stores bytes through the exporter's CPU mapping.
     *
     * @param offset first byte, from the dma-buf's start.
     * @param data   bytes to store.
     * @throws VerbsException EFAULT when the range leaves the dma-buf; EBADF once closed.
     */
    void write(long offset, byte[] data);

    /**
     * Loads bytes through the exporter's CPU mapping.
     *
     * @param offset      first byte, from the dma-buf's start.
     * @param lengthBytes bytes to load.
     * @return the bytes.
     * @throws VerbsException EFAULT when the range leaves the dma-buf; EBADF once closed.
     */
    byte[] read(long offset, int lengthBytes);

    /**
     * Closes the descriptor and frees the GPU buffer; MRs registered from it keep their own reference until
     * deregistered (dma-buf reference counting). A second close does nothing.
     */
    @Override
    void close();
}
