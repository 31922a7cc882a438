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
 * @param faults   the driver that resolves device page faults on this side's on-demand-paging MRs (null: none).
 * @param ordering how this side's device places writes into memory (null: strictly in order, at once).
 */
public record DmaPort(AdapterTables tables, PhysicalMemory memory, int qpn, PageFaultHandler faults,
    WriteOrdering ordering)
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
        this(tables, memory, qpn, null, null);
    }

    /**
     * A port with no QP.
     *
     * @param tables the device's tables.
     * @param memory the host's physical memory.
     */
    public DmaPort(final AdapterTables tables, final PhysicalMemory memory)
    {
        this(tables, memory, -1, null, null);
    }

    /**
     * @param qpNum a QP number.
     * @return this port seen through that QP.
     */
    public DmaPort through(final int qpNum)
    {
        return new DmaPort(tables, memory, qpNum, faults, ordering);
    }

    /**
     * @param handler the page-fault handler.
     * @return this port with that handler.
     */
    public DmaPort withFaults(final PageFaultHandler handler)
    {
        return new DmaPort(tables, memory, qpn, handler, ordering);
    }

    /**
     * @param writeOrdering how the device places writes.
     * @return this port with that ordering.
     */
    public DmaPort withOrdering(final WriteOrdering writeOrdering)
    {
        return new DmaPort(tables, memory, qpn, faults, writeOrdering);
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
