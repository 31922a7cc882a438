package dev.rnicsim.dma;

import dev.rnicsim.pagetable.PhysicalMemory;

/**
 * Told each time a device's DMA places a chunk of a write into memory, in the order the memory sees them: what a CPU
 * polling that memory could observe between two chunks.
 */
@FunctionalInterface
public interface PlacementListener
{
    /**
     * @param memory      the memory written.
     * @param physAddr    first physical address written.
     * @param lengthBytes bytes written.
     */
    void placed(PhysicalMemory memory, long physAddr, int lengthBytes);
}
