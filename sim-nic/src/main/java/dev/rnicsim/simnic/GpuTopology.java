package dev.rnicsim.simnic;

/**
 * How a GPU's PCIe path reaches the NIC of its host, with the names of {@code nvidia-smi topo -m}'s legend.
 * Peer-to-peer DMA between the NIC and GPU memory crosses it.
 *
 * <p>Immutable and thread safe.
 */
public enum GpuTopology
{
    /** At most one PCIe bridge between them (the same switch). */
    PIX,
    /** Several PCIe bridges, no host bridge. */
    PXB,
    /** Through a PCIe host bridge (the CPU's root complex). */
    PHB,
    /** Between host bridges of one NUMA node. */
    NODE,
    /** Across NUMA nodes, over the SMP interconnect between sockets (QPI/UPI, Infinity Fabric). */
    SYS;

    /**
     * @return true when peer-to-peer traffic must cross the link between sockets.
     */
    public boolean crossesSockets()
    {
        return this == SYS;
    }
}
