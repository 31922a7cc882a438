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
 * @param qpn    the QP the transfer goes through on this side (-1: none), which a type 2 memory window must be
 *               bound to.
 * @param faults the driver that resolves device page faults on this side's on-demand-paging MRs (null: none).
 */
public record DmaPort(AdapterTables tables, PhysicalMemory memory, int qpn, PageFaultHandler faults)
{
    /**
     * A port with no page-fault handler.
     *
     * @param tables the device's tables.
     * @param memory the host's physical memory.
     * @param qpn    the QP (-1: none).
     */
    public DmaPort(final AdapterTables tables, final PhysicalMemory memory, final int qpn)
    {
        this(tables, memory, qpn, null);
    }

    /**
     * A port with no QP.
     *
     * @param tables the device's tables.
     * @param memory the host's physical memory.
     */
    public DmaPort(final AdapterTables tables, final PhysicalMemory memory)
    {
        this(tables, memory, -1, null);
    }

    /**
     * @param qpNum a QP number.
     * @return this port seen through that QP.
     */
    public DmaPort through(final int qpNum)
    {
        return new DmaPort(tables, memory, qpNum, faults);
    }

    /**
     * @param handler the page-fault handler.
     * @return this port with that handler.
     */
    public DmaPort withFaults(final PageFaultHandler handler)
    {
        return new DmaPort(tables, memory, qpn, handler);
    }

    /**
     * @throws NullPointerException when tables or memory is null.
     */
    public DmaPort
    {
        Objects.requireNonNull(tables, "tables");
        Objects.requireNonNull(memory, "memory");
    }
}
