package dev.rnicsim.verbs;

/**
 * Device memory ({@code ibv_alloc_dm}): memory on the adapter itself, written and read by the host with
 * {@code ibv_memcpy_to_dm} and {@code ibv_memcpy_from_dm}, and made reachable by work requests through an MR of
 * {@code ibv_reg_dm_mr} (zero-based: addresses are offsets into the device memory).
 *
 * <p>Not thread safe.
 */
public interface DeviceMemory extends AutoCloseable
{
    /**
     * @return bytes allocated.
     */
    long lengthBytes();

    /**
     * {@code ibv_memcpy_to_dm}.
     *
     * @param dmOffset first byte in the device memory.
     * @param src      bytes to write.
     * @throws VerbsException EFAULT when {@code [dmOffset, dmOffset + src.length)} is not inside the allocation;
     *                        EINVAL for an offset that is not a multiple of 4 (mlx5) or freed device memory.
     */
    void memcpyTo(long dmOffset, byte[] src);

    /**
     * {@code ibv_memcpy_from_dm}.
     *
     * @param dmOffset    first byte in the device memory.
     * @param lengthBytes bytes to read.
     * @return the bytes.
     * @throws VerbsException EFAULT when the range is not inside the allocation; EINVAL when it is freed.
     */
    byte[] memcpyFrom(long dmOffset, int lengthBytes);

    /**
     * The provider's copy unit: offsets and lengths of {@link #memcpyTo} and {@link #memcpyFrom} must be multiples of
     * it (EINVAL otherwise).
     *
     * @return bytes: 4 on mlx5 ({@code mlx5_access_dm} copies 4-byte words); 1 where the provider copies bytes, or
     *         where the backend cannot tell (rdma-core reports no copy unit: hw-nic answers 1, and the provider's
     *         copy returns EINVAL where its unit is larger).
     */
    default int copyGranuleBytes()
    {
        return 1;
    }

    /**
     * @return true once freed.
     */
    boolean isClosed();

    /**
     * {@code ibv_free_dm}. Idempotent once it succeeded.
     *
     * @throws VerbsException EBUSY while an MR of {@code ibv_reg_dm_mr} uses it (it stays allocated).
     */
    @Override
    void close();
}
