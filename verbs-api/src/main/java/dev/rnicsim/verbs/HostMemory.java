package dev.rnicsim.verbs;

/**
 * The memory of the process that opened a device, where buffers to register come from: process virtual
 * addresses, the same for every backend (a simulated process's address space on the simulator, native memory on
 * real hardware), so that code written against this interface runs on both.
 *
 * <p>Not thread safe unless the backend says otherwise.
 */
public interface HostMemory
{
    /**
     * Maps anonymous private memory ({@code mmap(NULL, lengthBytes, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS
     * [|MAP_HUGETLB], -1, 0)}), aligned to the backing's page size. Pages are not populated until touched.
     *
     * @param lengthBytes bytes to map, more than 0; rounded up to the page size.
     * @param backing     what backs it.
     * @return the virtual address of the first byte.
     * @throws VerbsException ENOMEM when the address space, {@code vm.max_map_count} or the hugetlb pool is
     *                        exhausted; EINVAL for a bad length.
     */
    long allocate(long lengthBytes, Backing backing);

    /**
     * Unmaps a range ({@code munmap}). Pages still pinned by an MR stay allocated to the device: the MR keeps
     * pointing at them although the addresses no longer map them.
     *
     * @param address     first byte, page aligned.
     * @param lengthBytes bytes to unmap.
     * @throws VerbsException EINVAL for an unaligned or wrapping range.
     */
    void free(long address, long lengthBytes);

    /**
     * CPU store of bytes (faults pages in as needed).
     *
     * @param address first byte written.
     * @param data    bytes to write.
     * @throws VerbsException EFAULT when part of the range is not mapped writable.
     */
    void write(long address, byte[] data);

    /**
     * CPU load of bytes.
     *
     * @param address     first byte read.
     * @param lengthBytes bytes to read.
     * @return the bytes.
     * @throws VerbsException EFAULT when part of the range is not mapped readable.
     */
    byte[] read(long address, int lengthBytes);

    /**
     * Asks to be told of every unmap of this memory before it happens (a munmap, or {@link #free}), as the memory
     * hooks of UCX and Open MPI are: a registration cache uses it to invalidate its entries.
     *
     * @param hook receives the first address and the length in bytes of each range unmapped.
     * @throws UnsupportedOperationException when this memory cannot report unmaps (then call the cache's
     *                                       invalidation from the application's free path).
     */
    default void onUnmap(final java.util.function.BiConsumer<Long, Long> hook)
    {
        throw new UnsupportedOperationException("this host memory cannot report unmaps: invalidate from the "
            + "application's free path instead");
    }

    /**
     * @param address first byte of an 8-byte little-endian value.
     * @return the value, as an atomic's result would be read.
     * @throws VerbsException EFAULT when the 8 bytes are not mapped readable.
     */
    default long readLong(final long address)
    {
        final byte[] b = read(address, Long.BYTES);
        long v = 0;
        for (int i = Long.BYTES - 1; i >= 0; i--)
        {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }

    /**
     * @param address first byte of an 8-byte little-endian value.
     * @param value   the value.
     * @throws VerbsException EFAULT when the 8 bytes are not mapped writable.
     */
    default void writeLong(final long address, final long value)
    {
        final byte[] b = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            b[i] = (byte)(value >>> (8 * i));
        }
        write(address, b);
    }
}
