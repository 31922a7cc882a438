package dev.rnicsim.pagetable;

import java.util.HashMap;
import java.util.Map;

/**
 * Memory of a PCIe device other than the NIC (a GPU's VRAM) seen from the host's bus: a range of bus addresses above
 * all RAM that a NIC's DMA may read and write peer to peer, as it does host frames. It holds bytes only; who owns which
 * part is the device model's business. Bytes are kept in 64 KiB chunks created on first write, so a device of many
 * GiB costs memory only where written; unwritten bytes read as 0.
 *
 * <p>Not thread safe.
 */
public final class DeviceMemory
{
    private static final int CHUNK_SHIFT = 16;
    private static final int CHUNK_BYTES = 1 << CHUNK_SHIFT;

    private final String name;
    private final long baseAddr;
    private final long sizeBytes;
    private final Map<Long, byte[]> chunks = new HashMap<>();

    DeviceMemory(final String name, final long baseAddr, final long sizeBytes)
    {
        this.name = name;
        this.baseAddr = baseAddr;
        this.sizeBytes = sizeBytes;
    }

    /**
     * @return the device's name.
     */
    public String name()
    {
        return name;
    }

    /**
     * @return the bus address of its first byte.
     */
    public long baseAddr()
    {
        return baseAddr;
    }

    /**
     * @return its size in bytes.
     */
    public long sizeBytes()
    {
        return sizeBytes;
    }

    /**
     * @param busAddr a bus address.
     * @return true when it lies in this device's memory.
     */
    public boolean contains(final long busAddr)
    {
        return busAddr >= baseAddr && busAddr - baseAddr < sizeBytes;
    }

    /**
     * Reads bytes by offset into the device memory (the device's own access, or a peer DMA).
     *
     * @param offset    first byte, from the device memory's start.
     * @param dst       destination.
     * @param dstOffset first index written.
     * @param length    bytes.
     * @throws KernelException EFAULT when the range leaves the device memory or the array.
     */
    public void read(final long offset, final byte[] dst, final int dstOffset, final int length)
    {
        check(offset, length, dst, dstOffset);
        int done = 0;
        while (done < length)
        {
            final long at = offset + done;
            final int in = (int)(at & (CHUNK_BYTES - 1));
            final int n = Math.min(length - done, CHUNK_BYTES - in);
            final byte[] chunk = chunks.get(at >>> CHUNK_SHIFT);
            if (chunk == null)
            {
                java.util.Arrays.fill(dst, dstOffset + done, dstOffset + done + n, (byte)0);
            }
            else
            {
                System.arraycopy(chunk, in, dst, dstOffset + done, n);
            }
            done += n;
        }
    }

    /**
     * Writes bytes by offset into the device memory.
     *
     * @param offset    first byte, from the device memory's start.
     * @param src       source.
     * @param srcOffset first index read.
     * @param length    bytes.
     * @throws KernelException EFAULT when the range leaves the device memory or the array.
     */
    public void write(final long offset, final byte[] src, final int srcOffset, final int length)
    {
        check(offset, length, src, srcOffset);
        int done = 0;
        while (done < length)
        {
            final long at = offset + done;
            final int in = (int)(at & (CHUNK_BYTES - 1));
            final int n = Math.min(length - done, CHUNK_BYTES - in);
            System.arraycopy(src, srcOffset + done, chunks.computeIfAbsent(at >>> CHUNK_SHIFT,
                k -> new byte[CHUNK_BYTES]), in, n);
            done += n;
        }
    }

    /**
     * Copies bytes inside the device memory (the device moving a buffer).
     *
     * @param fromOffset  first byte read.
     * @param toOffset    first byte written.
     * @param lengthBytes bytes; the ranges must not overlap.
     * @throws KernelException EFAULT when a range leaves the device memory.
     */
    public void move(final long fromOffset, final long toOffset, final long lengthBytes)
    {
        final byte[] buffer = new byte[CHUNK_BYTES];
        for (long done = 0; done < lengthBytes; done += CHUNK_BYTES)
        {
            final int n = (int)Math.min(CHUNK_BYTES, lengthBytes - done);
            read(fromOffset + done, buffer, 0, n);
            write(toOffset + done, buffer, 0, n);
        }
    }

    private void check(final long offset, final int length, final byte[] array, final int arrayOffset)
    {
        java.util.Objects.requireNonNull(array, "array");
        if (offset < 0 || length < 0 || offset > sizeBytes - length || arrayOffset < 0
            || arrayOffset > array.length - length)
        {
            throw new KernelException(Errno.EFAULT, "range +0x" + Long.toHexString(offset) + " of " + length
                + " bytes leaves the " + sizeBytes + " bytes of " + name + " or its buffer"
                + "; read or write inside the device memory and the buffer given");
        }
    }

    @Override
    public String toString()
    {
        return name + "[bus 0x" + Long.toHexString(baseAddr) + "+" + sizeBytes + "]";
    }
}
