package dev.rnicsim.simnic;

import java.util.HashMap;
import java.util.Map;

/**
 * What a device knows of its keys beside the MPT: which live object a key names, the ODP and GPU MRs its page-fault
 * handler resolves, and where a ZERO_BASED key's offsets start. Models the driver's key lookups: mlx5's
 * {@code odp_mkeys} xarray, which {@code pagefault_single_data_segment} (odp.c) searches for the mkey of a fault, and
 * rxe's MR and MW pools ({@code rxe_pool_get_index}, rxe_pool.c), which the responder searches for a key's object.
 *
 * <p>Not thread safe.
 */
final class DeviceKeys
{
    private final SimDevice device;
    private final Map<Integer, Long> zeroBasedOffsets = new HashMap<>();
    /** Live ODP MRs by lkey, for the page-fault handler. */
    private final Map<Integer, SimOdpMr> odpMrs = new HashMap<>();
    /** Live MRs over GPU memory by lkey: dynamic dma-buf MRs fault like ODP MRs. */
    private final Map<Integer, SimPeerMr> peerMrs = new HashMap<>();
    private long remoteFaultNs;

    DeviceKeys(final SimDevice device)
    {
        this.device = device;
    }

    /**
     * @param key an lkey or rkey.
     * @return the live MR of this device with that lkey (or, when none, that rkey), or null.
     */
    SimMr memoryRegion(final int key)
    {
        SimMr byRkey = null;
        for (final SimContext c : device.contexts())
        {
            for (final SimPd pd : c.pdsView())
            {
                for (final SimMr mr : pd.memoryRegions())
                {
                    if (mr.lkey() == key)
                    {
                        return mr;
                    }
                    if (mr.rkey() == key && byRkey == null)
                    {
                        byRkey = mr;
                    }
                }
            }
        }
        return byRkey;
    }

    /** The live window whose current key is {@code key}, or null. */
    SimMw window(final int key)
    {
        for (final SimContext c : device.contexts())
        {
            for (final SimPd pd : c.pdsView())
            {
                for (final SimMw mw : pd.windowsView())
                {
                    if (mw.tableKey() == key)
                    {
                        return mw;
                    }
                }
            }
        }
        return null;
    }

    /** The live fast-registration MR whose current key is {@code key}, or null. */
    SimFastRegMr fastReg(final int key)
    {
        for (final SimContext c : device.contexts())
        {
            for (final SimPd pd : c.pdsView())
            {
                for (final SimFastRegMr mr : pd.fastRegsView())
                {
                    if (mr.key() == key)
                    {
                        return mr;
                    }
                }
            }
        }
        return null;
    }

    /**
     * The DMA engine's page-fault upcall: routes the fault to the ODP MR the key names (or the dynamic dma-buf MR
     * whose {@code move_notify} zapped it), as mlx5's {@code pagefault_single_data_segment} finds the mkey in
     * {@code odp_mkeys}.
     *
     * @return null when resolved, or why the fault cannot be.
     */
    String pageFault(final int key, final long iova, final long lengthBytes, final boolean write,
        final boolean remote, final int odpOperation)
    {
        final SimOdpMr mr = odpMrs.get(key);
        if (mr == null)
        {
            final SimPeerMr peerMr = peerMrs.get(key);
            return peerMr != null ? peerMr.resolve(remote)
                : "key 0x" + Integer.toHexString(key) + " names no ODP MR of " + device.name();
        }
        return mr.resolve(iova, lengthBytes, write, remote, odpOperation);
    }

    /** A new MR over GPU memory: its faults (dynamic dma-buf) come here. */
    void peerRegistered(final SimPeerMr mr)
    {
        peerMrs.put(mr.lkey(), mr);
    }

    /** A deregistered MR over GPU memory. */
    void peerDeregistered(final SimPeerMr mr)
    {
        peerMrs.remove(mr.lkey());
    }

    /**
     * @param key an lkey or rkey.
     * @return the live MR over GPU memory with that key, or null.
     */
    SimPeerMr peerMemoryRegion(final int key)
    {
        return peerMrs.get(key);
    }

    /** True when a live MR of this device is over GPU memory (so a key may lead to a GPU). */
    boolean hasPeerMemory()
    {
        return !peerMrs.isEmpty();
    }

    /** A new ODP MR: its faults come here. */
    void odpRegistered(final SimOdpMr mr)
    {
        odpMrs.put(mr.lkey(), mr);
    }

    /** A deregistered ODP MR. */
    void odpDeregistered(final SimOdpMr mr)
    {
        odpMrs.remove(mr.lkey());
    }

    /**
     * @param key an lkey or rkey.
     * @return the live ODP MR with that key, or null.
     */
    SimOdpMr odpMemoryRegion(final int key)
    {
        return odpMrs.get(key);
    }

    /** Adds the time a responder-side fault of the current request took to resolve. */
    void addRemoteFaultNs(final long ns)
    {
        remoteFaultNs += ns;
    }

    /**
     * @return simulated ns the responder-side page faults of the current request took to resolve (the driver
     * resolves every faulting segment before the responder resumes: what the requester's RNR retries must cover);
     * resets the sum.
     */
    long takeRemoteFaultNs()
    {
        final long ns = remoteFaultNs;
        remoteFaultNs = 0;
        return ns;
    }

    /**
     * A ZERO_BASED key: addresses presented with it are offsets from the MR start, whose first byte sits
     * {@code pageOffset} bytes into its page.
     */
    void zeroBased(final int key, final long pageOffset)
    {
        zeroBasedOffsets.put(key, pageOffset);
    }

    /** The key is no longer ZERO_BASED (deregistered, invalidated or given a new translation). */
    void forgetZeroBased(final int key)
    {
        zeroBasedOffsets.remove(key);
    }

    /**
     * The address the tables know for an address presented with a key: for a ZERO_BASED MR, an offset from the MR
     * start becomes the offset plus the buffer's offset in its first page (the iova the MR was registered with).
     */
    long keyAddress(final int key, final long addr)
    {
        if (zeroBasedOffsets.isEmpty())
        {
            return addr;
        }
        final Long offset = zeroBasedOffsets.get(key);
        return offset == null ? addr : addr + offset;
    }

    /** @return how many ODP MRs are live on the device. */
    int odpLive()
    {
        return odpMrs.size();
    }
}
