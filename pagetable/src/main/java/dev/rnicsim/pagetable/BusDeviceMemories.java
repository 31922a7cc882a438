package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.List;

/**
 * The memories of PCIe devices other than the NIC (GPUs' VRAM) on a host's bus, each at bus addresses of its own from
 * {@link PhysicalMemory#DEVICE_MEMORY_BASE} up, every one starting on a 1 GiB boundary, as a BAR is placed at an
 * address aligned to its size.
 *
 * <p>Not thread safe: part of one {@link PhysicalMemory}.
 */
final class BusDeviceMemories
{
    /** Each device's bus range starts on a boundary of this many bytes. */
    private static final long BAR_ALIGN_BYTES = 1L << 30;

    private final List<DeviceMemory> memories = new ArrayList<>();
    private long nextBase = PhysicalMemory.DEVICE_MEMORY_BASE;

    /** {@link PhysicalMemory#attachDeviceMemory}. */
    DeviceMemory attach(final String name, final long sizeBytes)
    {
        if (sizeBytes <= 0)
        {
            throw new KernelException(Errno.EINVAL, "device memory of " + sizeBytes + " bytes"
                + ": the size must be positive; give a size of one byte or more");
        }
        final DeviceMemory d = new DeviceMemory(name, nextBase, sizeBytes);
        nextBase += (sizeBytes + BAR_ALIGN_BYTES - 1) & -BAR_ALIGN_BYTES;
        memories.add(d);
        return d;
    }

    /** {@link PhysicalMemory#deviceMemoryAt}. */
    DeviceMemory at(final long busAddr)
    {
        if (busAddr < PhysicalMemory.DEVICE_MEMORY_BASE)
        {
            return null;
        }
        for (final DeviceMemory d : memories)
        {
            if (d.contains(busAddr))
            {
                return d;
            }
        }
        return null;
    }

    /**
     * @return the device memory holding all of {@code [busAddr, busAddr + length)}.
     * @throws KernelException EFAULT when no device memory holds it whole.
     */
    DeviceMemory holding(final long busAddr, final int length)
    {
        final DeviceMemory d = at(busAddr);
        if (d == null || (length > 0 && !d.contains(busAddr + length - 1)))
        {
            throw new KernelException(Errno.EFAULT, "bus range 0x" + Long.toHexString(busAddr) + "+" + length
                + " is in no device memory (or crosses its end)"
                + "; give a bus address inside one device memory");
        }
        return d;
    }
}
