package dev.rnicsim.dma;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.PhysicalMemory;
import java.util.Objects;

/**
 * One side of a transfer: a device's translation and protection tables and the physical memory of the host it sits
 * in, which its DMA reads and writes.
 *
 * @param tables the device's MTT, MPT and translation cache.
 * @param memory the host's physical memory.
 */
public record DmaPort(AdapterTables tables, PhysicalMemory memory)
{
    /**
     * @throws NullPointerException when an argument is null.
     */
    public DmaPort
    {
        Objects.requireNonNull(tables, "tables");
        Objects.requireNonNull(memory, "memory");
    }
}
