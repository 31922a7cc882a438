package dev.rnicsim.simnic;

/**
 * The one calibrated cost model: it turns the counts the lower modules report (pages pinned, page-table leaves
 * walked, MTT entries written, translation-cache misses, invalidations, bytes on the wire, RNR retries) into
 * simulated nanoseconds. Every constant is here, with its source or marked "assumed"; override any of them with
 * the {@code with...} methods or the canonical constructor.
 *
 * <p>Calibration, from published figures: registration with pinning costs about 16 µs fixed plus 0.25-0.4 µs per
 * 4 KiB page (UCX's mlx5 model 16000 + 0.060·N ns, i.e. ≈246 ns per 4 KiB page; libfabric issue 4738: ≈0.3 µs per page;
 * Mooncake PR 855: ≈0.4 µs per page). The per-page cost is split here between the 4 KiB page references
 * ({@link #pinPerPageNs}), the page-table leaves walked ({@link #pinPerLeafNs}) and the MTT entries written
 * ({@link #mttWritePerEntryNs}), so that 2 MiB pages come out about 2.5 times cheaper per byte (ROCm mori PR 679:
 * 2.5-2.7 times with huge pages). Deregistration costs about a quarter of registration per GB (Mooncake PR 855).
 *
 * <p>Immutable and thread safe.
 *
 * @param regFixedNs          fixed cost of one registration: system call, umem set-up, MPT write (UCX model: 16 µs).
 * @param pinPerPageNs        per 4 KiB page pinned: reference taken, DMA mapped (assumed: 95 ns of UCX's 246 ns).
 * @param pinPerLeafNs        per page-table leaf walked by the pin, 4 KiB or huge (assumed: 120 ns of the 246 ns).
 * @param mttWritePerEntryNs  per MTT entry written by the driver (assumed: 30 ns of the 246 ns).
 * @param deregFixedNs        fixed cost of one deregistration (assumed: 4 µs).
 * @param unpinPerPageNs      per 4 KiB page unpinned at deregistration (Mooncake PR 855: dereg ≈ 1/4 of reg per GB,
 *                            so ≈ 60 ns).
 * @param invalidationStallNs DMA stall while the NIC drops a key's cached translations (assumed: 2 µs; published
 *                            descriptions say "microseconds").
 * @param cacheMissNs         one translation-cache miss: a PCIe round trip to fetch the MPT or MTT entry from host
 *                            memory (assumed: 800 ns; no published figure found).
 * @param opBaseLatencyNs     base latency of one RC operation, request to completion, without payload (assumed:
 *                            2 µs).
 * @param queueCreateFixedNs  fixed cost of creating a CQ or QP, besides pinning its ring (assumed: 20 µs).
 * @param odpFaultFixedNs     fixed cost of one device page fault on an ODP MR: the fault event, the driver's work
 *                            queue, the UMR that loads the translation and the resume (assumed: 20 µs, the order of
 *                            a UMR-based registration; NP-RDMA, arXiv 2310.11062, reports its software fault path
 *                            500 times faster than ODP, which puts ODP faults with their retries far higher).
 * @param hostMinorFaultNs    one minor host page fault: a page allocated and zeroed or a copy-on-write break, taken
 *                            by a CPU's first touch, by the fault-in of {@code pin_user_pages} when a registration
 *                            pins untouched memory, and by an ODP fault's walk (1 µs: the median of 100 first-touch
 *                            faults of an anonymous 4 KiB page measured with rdtsc on Linux 6.6, Intel Core i7 11th
 *                            gen, ddumbying.vercel.app/experiments/pagefault-latency, min 575 ns, p95 4 µs; NP-RDMA's
 *                            whole minor-fault path, arXiv 2310.11062, is 3.5-5.7 µs).
 * @param hostMajorFaultNs    one major host page fault: a page read back from swap (NP-RDMA, arXiv 2310.11062: 60 µs
 *                            for a major fault).
 * @param gpuCopyFixedNs      fixed cost of one copy between GPU and host memory (cudaMemcpy call overhead: 6-7 µs,
 *                            gdrcopy README; 6.5 µs).
 * @param gpuCopyBytesPerSec  bandwidth of that copy (gdrcopy README: 6-8 GB/s host-to-device; 7 GB/s).
 * @param crossSocketP2pPermille bandwidth of NIC-GPU peer-to-peer DMA across sockets (topology SYS), in thousandths of
 *                            the link's (perftest issue 241: 32 MiB ib_write_bw ≈ 11000 MB/s GPU to GPU in SYS
 *                            locality against ≈ 23000 MB/s host to host: 478). Within a socket peer-to-peer is taken
 *                            to run at link rate (assumed).
 * @param relaxedOrderingGainPermille bandwidth gained by bulk transfers when the device applies relaxed ordering, in
 *                            thousandths of the wire time (the source document's S18: 5-10 % for bulk data; 75).
 *                            Platform-specific gains can be far larger (Linux commit 17347d5430c4: 10 to 40 on a
 *                            remote NUMA node of an ARM host, Ethernet path).
 * @param madviseCallNs       one madvise(2) call that fork support makes (MADV_DONTFORK at registration, MADV_DOFORK
 *                            at deregistration), besides the VMAs it splits or merges (helio PR 224's microbenchmark:
 *                            about 100 ns a call).
 * @param vmaSplitNs          one VMA created or removed by such a call's split or merge (200 ns: the same benchmark puts
 *                            an mmap, which creates a VMA, at about three times a madvise; the difference).
 * @param hugepagesSafeProbeNs libibverbs' page-size probe under RDMAV_HUGEPAGES_SAFE ({@code get_page_size}: madvise
 *                            with each huge page size until one succeeds), once per madvised range (rdma-core PR 767:
 *                            ibv_reg_mr 103 µs with it against 93 µs without; 10 µs).
 */
public record CostModel(long regFixedNs, long pinPerPageNs, long pinPerLeafNs, long mttWritePerEntryNs,
    long deregFixedNs, long unpinPerPageNs, long invalidationStallNs, long cacheMissNs, long opBaseLatencyNs,
    long queueCreateFixedNs, long odpFaultFixedNs, long hostMinorFaultNs, long hostMajorFaultNs,
    long gpuCopyFixedNs, long gpuCopyBytesPerSec, long crossSocketP2pPermille, long relaxedOrderingGainPermille,
    long madviseCallNs, long vmaSplitNs, long hugepagesSafeProbeNs)
{
    /**
     * RNR NAK timer values in ns by {@code min_rnr_timer} code (IBA Table 45 "Encoding for RNR NAK Timer Field"):
     * code 0 is 655.36 ms, codes 1-31 run from 0.01 ms to 491.52 ms.
     */
    private static final long[] RNR_TIMER_NS = {
        655_360_000L, 10_000L, 20_000L, 30_000L, 40_000L, 60_000L, 80_000L, 120_000L, 160_000L, 240_000L,
        320_000L, 480_000L, 640_000L, 960_000L, 1_280_000L, 1_920_000L, 2_560_000L, 3_840_000L, 5_120_000L,
        7_680_000L, 10_240_000L, 15_360_000L, 20_480_000L, 30_720_000L, 40_960_000L, 61_440_000L, 81_920_000L,
        122_880_000L, 163_840_000L, 245_760_000L, 327_680_000L, 491_520_000L};

    /**
     * The unit of the local ACK timeout: a requester waits {@code 4.096 µs × 2^timeout} for an acknowledgement before it
     * sends again (IBA vol. 1 9.7.6.1.3; ibv_modify_qp(3) {@code IBV_QP_TIMEOUT}; rxe {@code rxe_qp_from_attr}: "timeout
     * = 4.096 * 2 ^ attr->timeout [us]").
     */
    public static final long ACK_TIMEOUT_UNIT_NS = 4096;

    /**
     * One jiffy of a kernel built with the default tick rate (kernel/Kconfig.hz: {@code default HZ_250}), 4 ms: the
     * granularity of a software driver's retransmit timer.
     */
    public static final long DEFAULT_JIFFY_NS = 4_000_000;

    /**
     * @throws IllegalArgumentException when a constant is negative (naming it).
     */
    public CostModel
    {
        final long[] values = {regFixedNs, pinPerPageNs, pinPerLeafNs, mttWritePerEntryNs, deregFixedNs,
            unpinPerPageNs, invalidationStallNs, cacheMissNs, opBaseLatencyNs, queueCreateFixedNs, odpFaultFixedNs,
            hostMinorFaultNs, hostMajorFaultNs, gpuCopyFixedNs, gpuCopyBytesPerSec, crossSocketP2pPermille,
            relaxedOrderingGainPermille, madviseCallNs, vmaSplitNs, hugepagesSafeProbeNs};
        for (int i = 0; i < values.length; i++)
        {
            if (values[i] < 0)
            {
                throw new IllegalArgumentException("cost model constant #" + i + " is " + values[i]
                    + "; constants are nanoseconds, 0 or more");
            }
        }
    }

    /**
     * @return the calibrated defaults described in the class comment.
     */
    public static CostModel defaults()
    {
        return new CostModel(16_000, 95, 120, 30, 4_000, 60, 2_000, 800, 2_000, 20_000, 20_000, 1_000, 60_000, 6_500,
            7_000_000_000L, 478, 75, 100, 200, 10_000);
    }

    /**
     * Registration: fixed cost, pinning (per 4 KiB page and per leaf) and MTT writes.
     *
     * @param pagesPinned  4 KiB pages pinned.
     * @param leavesWalked page-table leaves (4 KiB, 2 MiB or 1 GiB) covering them.
     * @param mttEntries   MTT entries written.
     * @return simulated duration in ns.
     */
    public long registrationNs(final long pagesPinned, final long leavesWalked, final long mttEntries)
    {
        return regFixedNs + pagesPinned * pinPerPageNs + leavesWalked * pinPerLeafNs + mttEntries * mttWritePerEntryNs;
    }

    /**
     * A registration refused by the adapter after the pages were pinned (MTT or MPT full, no page size fits): the
     * fixed cost and the pin were spent, then the pages were unpinned again.
     *
     * @param pagesPinned  4 KiB pages pinned and unpinned.
     * @param leavesWalked page-table leaves covering them.
     * @return simulated duration in ns.
     */
    public long failedRegistrationNs(final long pagesPinned, final long leavesWalked)
    {
        return registrationNs(pagesPinned, leavesWalked, 0) + pagesPinned * unpinPerPageNs;
    }

    /**
     * A fast registration (REG_MR work request): the work request's base latency and the MTT entries its WQE writes;
     * no system call and no pinning (the pages were mapped beforehand).
     *
     * @param mttEntries MTT entries written.
     * @return simulated ns.
     */
    public long fastRegistrationNs(final long mttEntries)
    {
        return opBaseLatencyNs + mttEntries * mttWritePerEntryNs;
    }

    /**
     * Deregistration: fixed cost, unpinning, and the NIC's invalidation stall.
     *
     * @param pagesUnpinned 4 KiB pages unpinned.
     * @return simulated duration in ns.
     */
    public long deregistrationNs(final long pagesUnpinned)
    {
        return deregFixedNs + pagesUnpinned * unpinPerPageNs + invalidationStallNs;
    }

    /**
     * Creating a CQ or QP: fixed cost plus pinning its ring.
     *
     * @param ringPages 4 KiB pages of ring pinned.
     * @return simulated duration in ns.
     */
    public long queueCreateNs(final long ringPages)
    {
        return queueCreateFixedNs + ringPages * (pinPerPageNs + pinPerLeafNs);
    }

    /**
     * One RC operation: base latency, payload on the wire, translation-cache misses.
     *
     * @param payloadBytes bytes on the wire.
     * @param linkGbps     link rate in Gbit/s.
     * @param cacheMisses  translation-cache misses on both devices.
     * @return simulated duration in ns.
     */
    public long operationNs(final long payloadBytes, final double linkGbps, final long cacheMisses)
    {
        return opBaseLatencyNs + (long)Math.ceil(payloadBytes * 8.0 / linkGbps) + cacheMisses * cacheMissNs;
    }

    /**
     * One packet of a message: its share of {@link #operationNs} without the cache misses (counted when the message
     * ends), so that the packets of a message add up to the price of the message in one step. The first packet
     * ({@code bytesBefore} 0) carries the base latency; each packet the wire time its bytes add (IBA 9.7.1: a
     * message is cut into packets of the path MTU and each packet is serialised on the link in turn).
     *
     * @param bytesBefore  payload bytes of the message's packets before this one.
     * @param packetBytes  this packet's payload.
     * @param linkGbps     link rate in Gbit/s.
     * @return simulated ns.
     */
    public long packetNs(final long bytesBefore, final long packetBytes, final double linkGbps)
    {
        return packetNsOfWire(bytesBefore, wireNs(bytesBefore, linkGbps), wireNs(bytesBefore + packetBytes, linkGbps));
    }

    /**
     * {@link #packetNs} from the link's {@link #wireNs} of the bytes before the packet and of the bytes up to its end
     * (a message priced packet by packet knows the first from the packet before).
     *
     * @param bytesBefore  payload bytes of the message's packets before this one.
     * @param wireNsBefore {@link #wireNs} of {@code bytesBefore}.
     * @param wireNsAfter  {@link #wireNs} of {@code bytesBefore} plus this packet's payload.
     * @return simulated ns.
     */
    public long packetNsOfWire(final long bytesBefore, final long wireNsBefore, final long wireNsAfter)
    {
        final long wire = wireNsAfter - wireNsBefore;
        return bytesBefore == 0 ? opBaseLatencyNs + wire : wire;
    }

    /**
     * @param bytes    the first bytes of a message's payload.
     * @param linkGbps link rate in Gbit/s.
     * @return the ns the link takes to serialise them, rounded up: {@code ceil(bytes * 8 / linkGbps)}.
     */
    public static long wireNs(final long bytes, final double linkGbps)
    {
        return (long)Math.ceil(bytes * 8.0 / linkGbps);
    }

    /**
     * Resolving one device page fault, or one synchronous prefetch, on an ODP MR: the fixed fault cost, the host
     * faults taken while walking the page table ({@code hmm_range_fault}), a page-table walk per 4 KiB page looked at
     * and an MTT entry written per block mapped.
     *
     * @param pagesWalked    4 KiB pages the walk looked at.
     * @param minorFaults    host faults that allocated or copied a page.
     * @param majorFaults    host faults that read a page from swap.
     * @param entriesWritten MTT entries written.
     * @return simulated ns.
     */
    public long odpFaultNs(final long pagesWalked, final long minorFaults, final long majorFaults,
        final long entriesWritten)
    {
        return odpFaultFixedNs + pagesWalked * pinPerLeafNs + minorFaults * hostMinorFaultNs
            + majorFaults * hostMajorFaultNs + entriesWritten * mttWritePerEntryNs;
    }

    /**
     * Host page faults taken by CPU work or by the fault-in of a pin.
     *
     * @param minorFaults faults that allocated and zeroed (or copied) a page.
     * @param majorFaults faults that read a page back from swap.
     * @return simulated ns.
     */
    public long hostFaultsNs(final long minorFaults, final long majorFaults)
    {
        return minorFaults * hostMinorFaultNs + majorFaults * hostMajorFaultNs;
    }

    /**
     * Registering an ODP MR: the fixed cost and the MTT entries of the pages already present, which the driver maps
     * at once ({@code mlx5_ib_init_odp_mr}); nothing is pinned. Absent pages cost nothing: mlx5 creates the mkey
     * with its entries zapped ({@code MLX5_IB_UPD_XLT_ZAP}) and the snapshot walk ({@code hmm_range_fault} with
     * {@code HMM_PFN_REQ_FAULT} clear) skips empty page-table levels, so registering a large range that is not
     * present is nearly constant time.
     *
     * @param pagesWalked    present page-table leaves looked at for the snapshot.
     * @param entriesWritten MTT entries written for present pages.
     * @return simulated ns.
     */
    public long odpRegistrationNs(final long pagesWalked, final long entriesWritten)
    {
        return regFixedNs + pagesWalked * pinPerLeafNs + entriesWritten * mttWritePerEntryNs;
    }

    /**
     * An MMU-notifier invalidation of an ODP MR ({@code mlx5_ib_invalidate_range}): the UMR that zaps the entries
     * and the NIC's cache invalidation stall.
     *
     * @param entriesZapped MTT entries zapped.
     * @return simulated ns.
     */
    public long odpInvalidationNs(final long entriesZapped)
    {
        return invalidationStallNs + entriesZapped * mttWritePerEntryNs;
    }

    /**
     * The wire time relaxed ordering saves on a transfer when the device applies it.
     *
     * @param payloadBytes bytes on the wire.
     * @param linkGbps     link rate in Gbit/s.
     * @return simulated ns saved (subtracted from {@link #operationNs}).
     */
    public long relaxedOrderingSavingNs(final long payloadBytes, final double linkGbps)
    {
        return (long)Math.floor(payloadBytes * 8.0 / linkGbps * relaxedOrderingGainPermille / 1000.0);
    }

    /**
     * One packet's share of {@link #relaxedOrderingSavingNs}: the packets of a relaxed-ordering message add up to
     * exactly the saving of the message in one step.
     *
     * @param bytesBefore payload bytes of the message's packets before this one.
     * @param packetBytes this packet's payload.
     * @param linkGbps    link rate in Gbit/s.
     * @return simulated ns.
     */
    public long relaxedOrderingPacketSavingNs(final long bytesBefore, final long packetBytes, final double linkGbps)
    {
        return relaxedOrderingSavingNs(bytesBefore + packetBytes, linkGbps) - relaxedOrderingSavingNs(bytesBefore,
            linkGbps);
    }

    /**
     * A copy between GPU memory and host memory (cudaMemcpy), as a transfer bounced through host memory needs on each
     * side.
     *
     * @param bytes bytes copied.
     * @return simulated ns.
     */
    public long gpuCopyNs(final long bytes)
    {
        return gpuCopyFixedNs + (long)Math.ceil(bytes * 1e9 / gpuCopyBytesPerSec);
    }

    /**
     * The extra time of a transfer whose data crosses a NIC-GPU peer-to-peer path, beyond the same transfer from
     * host memory: none within a socket; across sockets the payload moves at {@link #crossSocketP2pPermille} of the
     * link rate.
     *
     * @param bytes    payload bytes.
     * @param linkGbps link rate in Gbit/s.
     * @param topology the GPU's path to the NIC.
     * @return simulated ns.
     */
    public long peerToPeerNs(final long bytes, final double linkGbps, final GpuTopology topology)
    {
        if (!topology.crossesSockets() || crossSocketP2pPermille == 0)
        {
            return 0;
        }
        final double wire = bytes * 8.0 / linkGbps;
        return (long)Math.ceil(wire * 1000.0 / crossSocketP2pPermille - wire);
    }

    /**
     * @param minRnrTimer the responder's {@code min_rnr_timer} code, 0-31.
     * @return the wait of one RNR retry in ns (IBA Table 45).
     * @throws IllegalArgumentException when the code is outside 0-31.
     */
    public static long rnrTimerNs(final int minRnrTimer)
    {
        if (minRnrTimer < 0 || minRnrTimer >= RNR_TIMER_NS.length)
        {
            throw new IllegalArgumentException("min_rnr_timer=" + minRnrTimer + " must be 0-31");
        }
        return RNR_TIMER_NS[minRnrTimer];
    }

    /**
     * One local ACK timeout as the requester's timer waits it.
     *
     * @param timeout            the QP's {@code timeout} code, 1-31 (0 waits for ever and is not a wait to price).
     * @param timerGranularityNs 0 for a timer that waits the IBA figure exactly (the device's), else the tick of a
     *                           software timer: rxe turns the figure into whole jiffies, rounding down, at least one
     *                           ({@code rxe_qp_from_attr}: {@code nsecs_to_jiffies(4096ULL << timeout)}, {@code j ? j :
     *                           1}).
     * @return the wait in ns.
     * @throws IllegalArgumentException when the code is outside 1-31.
     */
    public static long localAckTimeoutNs(final int timeout, final long timerGranularityNs)
    {
        if (timeout < 1 || timeout > 31)
        {
            throw new IllegalArgumentException("timeout=" + timeout + " must be 1-31 (0 waits for ever)");
        }
        final long ns = ACK_TIMEOUT_UNIT_NS << timeout;
        return timerGranularityNs <= 0 ? ns : Math.max(1, ns / timerGranularityNs) * timerGranularityNs;
    }

    /**
     * A request that no acknowledgement answers: sent, then sent again {@code retry_cnt} times, each send followed by
     * one local ACK timeout, after the last of which the requester gives up (IBV_WC_RETRY_EXC_ERR, IBA 9.7.6.1.3).
     *
     * @param timeoutWaits the local ACK timeouts waited out ({@code retry_cnt + 1}).
     * @param ackTimeoutNs one of them ({@link #localAckTimeoutNs}).
     * @return simulated ns from the first send to the completion.
     */
    public long noAckNs(final long timeoutWaits, final long ackTimeoutNs)
    {
        return opBaseLatencyNs + timeoutWaits * ackTimeoutNs;
    }

    /**
     * Fork support's madvise work around one verb (libibverbs memory.c {@code ibv_madvise_range}).
     *
     * @param madviseCalls madvise(2) calls made.
     * @param vmaChanges   VMAs created or removed by their splits and merges.
     * @param probes       page-size probes made under RDMAV_HUGEPAGES_SAFE.
     * @return simulated duration in ns.
     */
    public long forkSafetyNs(final long madviseCalls, final long vmaChanges, final long probes)
    {
        return madviseCalls * madviseCallNs + vmaChanges * vmaSplitNs + probes * hugepagesSafeProbeNs;
    }

    /**
     * @param ns fixed registration cost.
     * @return a copy with it.
     */
    public CostModel withRegFixedNs(final long ns)
    {
        return new CostModel(ns, pinPerPageNs, pinPerLeafNs, mttWritePerEntryNs, deregFixedNs, unpinPerPageNs,
            invalidationStallNs, cacheMissNs, opBaseLatencyNs, queueCreateFixedNs, odpFaultFixedNs, hostMinorFaultNs,
            hostMajorFaultNs, gpuCopyFixedNs, gpuCopyBytesPerSec, crossSocketP2pPermille,
            relaxedOrderingGainPermille, madviseCallNs, vmaSplitNs, hugepagesSafeProbeNs);
    }

    /**
     * @param ns cost of one translation-cache miss.
     * @return a copy with it.
     */
    public CostModel withCacheMissNs(final long ns)
    {
        return new CostModel(regFixedNs, pinPerPageNs, pinPerLeafNs, mttWritePerEntryNs, deregFixedNs, unpinPerPageNs,
            invalidationStallNs, ns, opBaseLatencyNs, queueCreateFixedNs, odpFaultFixedNs, hostMinorFaultNs,
            hostMajorFaultNs, gpuCopyFixedNs, gpuCopyBytesPerSec, crossSocketP2pPermille,
            relaxedOrderingGainPermille, madviseCallNs, vmaSplitNs, hugepagesSafeProbeNs);
    }

    /**
     * @param ns invalidation stall.
     * @return a copy with it.
     */
    public CostModel withInvalidationStallNs(final long ns)
    {
        return new CostModel(regFixedNs, pinPerPageNs, pinPerLeafNs, mttWritePerEntryNs, deregFixedNs, unpinPerPageNs,
            ns, cacheMissNs, opBaseLatencyNs, queueCreateFixedNs, odpFaultFixedNs, hostMinorFaultNs,
            hostMajorFaultNs, gpuCopyFixedNs, gpuCopyBytesPerSec, crossSocketP2pPermille,
            relaxedOrderingGainPermille, madviseCallNs, vmaSplitNs, hugepagesSafeProbeNs);
    }
}
