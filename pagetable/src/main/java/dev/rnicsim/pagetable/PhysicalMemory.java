package dev.rnicsim.pagetable;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The physical memory of a host: 4 KiB frames split into ZONE_NORMAL (low) and ZONE_MOVABLE (high), a buddy
 * allocator per zone, the hugetlb pools reserved at boot, a swap device, and the bytes of every frame, readable
 * and writable by physical address. Frames that were never written read as zeros and cost no memory. The zones,
 * their buddy allocators and the hugetlb pools are the {@link PageAllocator}'s; this class answers for them.
 *
 * <p>Not thread safe: one host is driven by one thread.
 */
public final class PhysicalMemory
{
    /** log2 of the frame size: 12. */
    public static final int FRAME_SHIFT = 12;
    /** Bytes in a frame: 4096. */
    public static final int FRAME_BYTES = 1 << FRAME_SHIFT;
    /** Bus address where device memory (PCIe BARs of GPUs and the like) starts: above any RAM the model holds. */
    public static final long DEVICE_MEMORY_BASE = 1L << 48;

    private final long totalFrames;
    private final FrameTable frames;
    private final PageAllocator allocator;
    private final SwapSpace swap;
    private final long zeroPfn;
    private final BusDeviceMemories deviceMemories = new BusDeviceMemories();
    /** True when the bytes a device's DMA moves live elsewhere: see {@link #bytesElsewhere(boolean)}. */
    private boolean bytesElsewhere;

    PhysicalMemory(final HostConfig config)
    {
        totalFrames = config.physicalMemoryBytes() >>> FRAME_SHIFT;
        frames = new FrameTable(totalFrames + 1);
        allocator = new PageAllocator(config, totalFrames, frames);
        swap = new SwapSpace(config.swapBytes() >>> FRAME_SHIFT);
        zeroPfn = totalFrames;
        frames.markAllocated(zeroPfn, 0, FrameTable.KIND_ZERO);
    }

    /**
     * @return the frame of the shared zero page (mm/memory.c {@code my_zero_pfn}), which read faults on untouched
     * anonymous memory map read-only. Like the kernel image it lives in, it lies outside the memory the allocators
     * manage (the frame just past {@link #totalFrames()}), so it is neither free nor used; it reads as zeros and
     * cannot be written by physical address.
     */
    public long zeroPfn()
    {
        return zeroPfn;
    }

    /**
     * @return the number of 4 KiB frames of physical memory.
     */
    public long totalFrames()
    {
        return totalFrames;
    }

    /**
     * @return the number of frames free in the buddy allocators (hugetlb pool pages are not free frames).
     */
    public long freeFrames()
    {
        return allocator.freeFrames();
    }

    /**
     * Counts the frames handed out, by walking the per-frame state: a count independent of the allocators'
     * free counters, so that {@code freeFrames() + usedFrames() == totalFrames()} checks them.
     *
     * @return frames in use by mappings, orphaned pins and the hugetlb pools (free pool pages included).
     */
    public long usedFrames()
    {
        final long[] used = new long[1];
        frames.forEachUsed(pfn -> used[0] += pfn == zeroPfn ? 0 : 1);
        return used[0] + allocator.freePoolFrames();
    }

    /**
     * @param pfn a frame number, 0 to {@code totalFrames() - 1}, or {@link #zeroPfn()}.
     * @throws KernelException EINVAL for a frame number outside the host.
     * @return the zone the frame belongs to.
     */
    public Zone zoneOf(final long pfn)
    {
        checkPfn(pfn);
        return allocator.zoneOf(pfn);
    }

    /**
     * @param zone a zone.
     * @return frames in the zone, or 0 when the host has no such zone.
     */
    public long zoneFrames(final Zone zone)
    {
        return allocator.zoneFrames(zone);
    }

    /**
     * @param zone a zone.
     * @return free frames in the zone.
     */
    public long zoneFreeFrames(final Zone zone)
    {
        return allocator.zoneFreeFrames(zone);
    }

    /**
     * The free block counts per order, as a line of /proc/buddyinfo shows them.
     *
     * @param zone a zone.
     * @return counts of free blocks for orders 0 to 18; empty when the host has no such zone.
     */
    public List<Integer> buddyInfo(final Zone zone)
    {
        return allocator.buddyInfo(zone);
    }

    /**
     * @param pfn a frame number, 0 to {@code totalFrames() - 1}, or {@link #zeroPfn()}.
     * @throws KernelException EINVAL for a frame number outside the host.
     * @return the folio's pin count (on its head frame): the number of 4 KiB pins held on the folio.
     */
    public int pinCount(final long pfn)
    {
        checkPfn(pfn);
        return frames.pinCount(frames.head(pfn));
    }

    /**
     * @param pfn a frame number, 0 to {@code totalFrames() - 1}, or {@link #zeroPfn()}.
     * @throws KernelException EINVAL for a frame number outside the host.
     * @return how many page-table entries map this frame.
     */
    public int mapCount(final long pfn)
    {
        checkPfn(pfn);
        return frames.mapCount(pfn);
    }

    /**
     * @param pfn a frame number, 0 to {@code totalFrames() - 1}, or {@link #zeroPfn()}.
     * @throws KernelException EINVAL for a frame number outside the host.
     * @return the page size of the folio the frame belongs to (4 KiB for a free frame).
     */
    public PageSize folioSize(final long pfn)
    {
        checkPfn(pfn);
        final PageSize size = PageSize.ofOrder(frames.order(pfn));
        return size != null ? size : PageSize.SIZE_4K;
    }

    /**
     * @param pfn a frame number, 0 to {@code totalFrames() - 1}, or {@link #zeroPfn()}.
     * @throws KernelException EINVAL for a frame number outside the host.
     * @return true when the frame is handed out (mapped, pinned or in a hugetlb mapping).
     */
    public boolean isAllocated(final long pfn)
    {
        checkPfn(pfn);
        return frames.kind(pfn) != FrameTable.KIND_FREE;
    }

    /**
     * Whether a range reads as zeros because none of its frames was ever written: {@link #read} gives zeros for such
     * frames without a copy, so a caller that expects zeros (a check of a model's untouched pages) learns the same as
     * from reading them, without moving 4 KiB a page. Makes the checks {@link #read} makes.
     *
     * @param physAddr first physical address.
     * @param length   bytes of the range.
     * @return true when every frame of the range is in RAM and was never written (or DMA bytes live elsewhere:
     * {@link #bytesElsewhere(boolean)}); false when some may hold other bytes (device memory included): read them.
     * @throws KernelException EFAULT when the range leaves physical memory or touches a free frame, as {@link #read}.
     */
    public boolean readsAsNeverWritten(final long physAddr, final int length)
    {
        if (physAddr >= DEVICE_MEMORY_BASE)
        {
            deviceMemory(physAddr, length);
            return false;
        }
        checkPhysRange(physAddr, length);
        if (bytesElsewhere)
        {
            return true;
        }
        for (long pfn = physAddr >>> FRAME_SHIFT; length > 0 && pfn <= (physAddr + length - 1) >>> FRAME_SHIFT; pfn++)
        {
            if (frames.hasData(pfn))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Sets whether the bytes a device's DMA moves in this host's RAM live elsewhere. In that mode {@link #read},
     * {@link #write} and {@link #copy} make every check they make otherwise (the range inside RAM, no free frame, no
     * write to the shared zero page: the same errors for the same addresses) but move no byte: a read gives zeros and a
     * write is dropped. It is for a model whose real bytes are moved by someone else after the model's verdict:
     * {@code rnicsim exec}'s fabric server checks, counts and prices every packet with the model, and moves the bytes
     * between the real processes with {@code process_vm_readv}/{@code process_vm_writev}; a copy inside the model
     * would serve no one there. The CPU's own accesses (a process's loads and stores through its page table) and
     * device memory ({@link #attachDeviceMemory}) keep their bytes.
     *
     * @param elsewhere true to move no DMA bytes from now on; false (the default) to keep them.
     */
    public void bytesElsewhere(final boolean elsewhere)
    {
        this.bytesElsewhere = elsewhere;
    }

    /**
     * @return true when a device's DMA reads give zeros and its writes are dropped after their checks ({@link
     * #bytesElsewhere(boolean)}).
     */
    public boolean bytesElsewhere()
    {
        return bytesElsewhere;
    }

    /**
     * Makes the checks a device's DMA read or write of a range makes ({@link #read}, {@link #write}) and moves no
     * byte: for a caller that knows the memory keeps no DMA bytes ({@link #bytesElsewhere(boolean)}) and so has no
     * bytes to give or take.
     *
     * @param physAddr    first physical address.
     * @param lengthBytes bytes of the access.
     * @param write       true for a write (the shared zero page is refused), false for a read.
     * @throws KernelException EFAULT as {@link #read} or {@link #write} would throw it.
     */
    public void checkDma(final long physAddr, final int lengthBytes, final boolean write)
    {
        if (physAddr >= DEVICE_MEMORY_BASE)
        {
            deviceMemory(physAddr, lengthBytes);
            return;
        }
        checkPhysRange(physAddr, lengthBytes);
        if (write)
        {
            checkNotZeroPage(physAddr, lengthBytes);
        }
    }

    /**
     * Reads bytes by physical address, as a device's DMA read would.
     *
     * @param physAddr  first physical address.
     * @param dst       destination array.
     * @param dstOffset first index written in {@code dst}.
     * @param length    bytes to read.
     * @throws KernelException EFAULT when the range leaves physical memory, touches a free frame, or does not fit
     *                         the array.
     */
    public void read(final long physAddr, final byte[] dst, final int dstOffset, final int length)
    {
        if (physAddr >= DEVICE_MEMORY_BASE)
        {
            final DeviceMemory d = deviceMemory(physAddr, length);
            d.read(physAddr - d.baseAddr(), dst, dstOffset, length);
            return;
        }
        checkBuffer(dst, dstOffset, length);
        checkPhysRange(physAddr, length);
        if (bytesElsewhere)
        {
            Arrays.fill(dst, dstOffset, dstOffset + length, (byte)0);
            return;
        }
        long addr = physAddr;
        int done = 0;
        while (done < length)
        {
            final long pfn = addr >>> FRAME_SHIFT;
            final int inFrame = (int)(addr & (FRAME_BYTES - 1));
            final int chunk = Math.min(length - done, FRAME_BYTES - inFrame);
            frames.readFrame(pfn, inFrame, dst, dstOffset + done, chunk);
            done += chunk;
            addr += chunk;
        }
    }

    /**
     * Writes bytes by physical address, as a device's DMA write would.
     *
     * @param physAddr  first physical address.
     * @param src       source array.
     * @param srcOffset first index read in {@code src}.
     * @param length    bytes to write.
     * @throws KernelException EFAULT when the range leaves physical memory, touches a free frame or the shared zero
     *                         page, or does not fit the array.
     */
    public void write(final long physAddr, final byte[] src, final int srcOffset, final int length)
    {
        if (physAddr >= DEVICE_MEMORY_BASE)
        {
            final DeviceMemory d = deviceMemory(physAddr, length);
            d.write(physAddr - d.baseAddr(), src, srcOffset, length);
            return;
        }
        checkBuffer(src, srcOffset, length);
        checkPhysRange(physAddr, length);
        checkNotZeroPage(physAddr, length);
        if (bytesElsewhere)
        {
            return;
        }
        long addr = physAddr;
        int done = 0;
        while (done < length)
        {
            final long pfn = addr >>> FRAME_SHIFT;
            final int inFrame = (int)(addr & (FRAME_BYTES - 1));
            final int chunk = Math.min(length - done, FRAME_BYTES - inFrame);
            frames.writeFrame(pfn, inFrame, src, srcOffset + done, chunk);
            done += chunk;
            addr += chunk;
        }
    }

    /**
     * Copies bytes by physical address, possibly between two hosts, as a NIC's DMA moves a message: no CPU cache,
     * no page table. Frames that hold bytes and lie back to back on both sides are copied in one bulk copy, the others
     * frame by frame; never through a bounce buffer.
     *
     * @param src         memory read.
     * @param srcAddr     first physical address read.
     * @param dst         memory written (may be {@code src}; overlapping ranges are not supported).
     * @param dstAddr     first physical address written.
     * @param lengthBytes bytes to copy, 0 to 2^31-1.
     * @throws KernelException EFAULT when a range leaves physical memory, touches a free frame, or the destination
     *                         covers the shared zero page.
     */
    public static void copy(final PhysicalMemory src, final long srcAddr, final PhysicalMemory dst, final long dstAddr,
        final int lengthBytes)
    {
        // A run inside one frame on each side (a packet within an MR page): the checks of copyChecked and the copy,
        // each frame looked up once; anything else (or a check that would fail) takes the general path.
        final long srcPfn = srcAddr >>> FRAME_SHIFT;
        final long dstPfn = dstAddr >>> FRAME_SHIFT;
        if (lengthBytes > 0 && srcAddr >= 0 && dstAddr >= 0 && srcPfn <= src.totalFrames && dstPfn <= dst.totalFrames
            && srcPfn == (srcAddr + lengthBytes - 1) >>> FRAME_SHIFT
            && dstPfn == (dstAddr + lengthBytes - 1) >>> FRAME_SHIFT
            && dstPfn != dst.zeroPfn && FrameCopies.copyInFrame(src.frames, srcPfn, (int)(srcAddr & (FRAME_BYTES - 1)),
            dst.frames, dstPfn, (int)(dstAddr & (FRAME_BYTES - 1)), lengthBytes))
        {
            return;
        }
        copyChecked(src, srcAddr, dst, dstAddr, lengthBytes);
    }

    /** {@link #copy} of any run: device memory, several frames, frames without bytes, and every check's error. */
    private static void copyChecked(final PhysicalMemory src, final long srcAddr, final PhysicalMemory dst,
        final long dstAddr, final int lengthBytes)
    {
        if (srcAddr >= DEVICE_MEMORY_BASE || dstAddr >= DEVICE_MEMORY_BASE)
        {
            // Peer to peer: one side is device memory, reached by bus address through its BAR.
            final byte[] buffer = new byte[Math.min(lengthBytes, 1 << 16)];
            for (int done = 0; done < lengthBytes; done += buffer.length)
            {
                final int n = Math.min(buffer.length, lengthBytes - done);
                src.read(srcAddr + done, buffer, 0, n);
                dst.write(dstAddr + done, buffer, 0, n);
            }
            return;
        }
        src.checkPhysRange(srcAddr, lengthBytes);
        dst.checkPhysRange(dstAddr, lengthBytes);
        if (lengthBytes > 0 && dst.zeroPfn >= dstAddr >>> FRAME_SHIFT
            && dst.zeroPfn <= (dstAddr + lengthBytes - 1) >>> FRAME_SHIFT)
        {
            throw new KernelException(Errno.EFAULT, "physical range 0x" + Long.toHexString(dstAddr) + "+"
                + lengthBytes + " covers the shared zero page, which is read-only"
                + "; never write to the shared zero page (touch the page for write first to get a private frame)");
        }
        if (dst.bytesElsewhere)
        {
            return;
        }
        if (src.bytesElsewhere)
        {
            // the source reads as zeros: write them, checked as any write
            dst.write(dstAddr, new byte[lengthBytes], 0, lengthBytes);
            return;
        }
        long s = srcAddr;
        long d = dstAddr;
        int done = 0;
        while (done < lengthBytes)
        {
            // Frames with data that lie back to back on both sides move in one bulk copy; others frame by frame.
            final int run = FrameCopies.copyRun(src.frames, s, dst.frames, d, lengthBytes - done);
            if (run > 0)
            {
                done += run;
                s += run;
                d += run;
                continue;
            }
            final int sIn = (int)(s & (FRAME_BYTES - 1));
            final int dIn = (int)(d & (FRAME_BYTES - 1));
            final int chunk = Math.min(lengthBytes - done, FRAME_BYTES - Math.max(sIn, dIn));
            FrameCopies.copyBytes(src.frames, s >>> FRAME_SHIFT, sIn, dst.frames, d >>> FRAME_SHIFT, dIn, chunk);
            done += chunk;
            s += chunk;
            d += chunk;
        }
    }

    private void checkNotZeroPage(final long physAddr, final int length)
    {
        if (length > 0 && zeroPfn >= physAddr >>> FRAME_SHIFT && zeroPfn <= (physAddr + length - 1) >>> FRAME_SHIFT)
        {
            throw new KernelException(Errno.EFAULT, "physical range 0x" + Long.toHexString(physAddr) + "+" + length
                + " covers the shared zero page, which is read-only"
                + "; never write to the shared zero page (touch the page for write first to get a private frame)");
        }
    }

    private void checkBuffer(final byte[] buffer, final int offset, final int length)
    {
        Objects.requireNonNull(buffer, "buffer");
        if (offset < 0 || length < 0 || offset > buffer.length - length)
        {
            throw new KernelException(Errno.EFAULT, "buffer of " + buffer.length + " bytes cannot hold " + length
                + " bytes at offset " + offset
                + "; give a buffer at least offset + length bytes long");
        }
    }

    /**
     * @throws KernelException EINVAL when {@code pfn} is not a frame of this host.
     */
    private void checkPfn(final long pfn)
    {
        if (pfn < 0 || pfn > totalFrames)
        {
            throw new KernelException(Errno.EINVAL, "pfn " + pfn + " is outside [0, " + totalFrames
                + "] (the frames of the host and the shared zero page)"
                + "; give a frame number in that range");
        }
    }

    private void checkPhysRange(final long physAddr, final int length)
    {
        if (physAddr < 0 || length < 0 || physAddr > ((totalFrames + 1) << FRAME_SHIFT) - length)
        {
            throw new KernelException(Errno.EFAULT, "physical range 0x" + Long.toHexString(physAddr) + "+" + length
                + " leaves physical memory of " + (totalFrames << FRAME_SHIFT) + " bytes"
                + "; keep the range inside the host's RAM");
        }
        for (long pfn = physAddr >>> FRAME_SHIFT; length > 0 && pfn <= (physAddr + length - 1) >>> FRAME_SHIFT; pfn++)
        {
            if (frames.kind(pfn) == FrameTable.KIND_FREE)
            {
                throw new KernelException(Errno.EFAULT, "physical frame 0x" + Long.toHexString(pfn)
                    + " is free: no owner, so a DMA there would corrupt whoever gets it next"
                    + "; DMA only to frames a live pin holds");
            }
        }
    }

    /**
     * Attaches memory of a PCIe device (a GPU's VRAM) to this host's bus: its bytes get bus addresses from
     * {@link #DEVICE_MEMORY_BASE} up, which {@link #read}, {@link #write} and {@link #copy} accept like RAM.
     *
     * @param name      the device's name.
     * @param sizeBytes bytes of device memory, more than 0.
     * @return the device memory.
     * @throws KernelException EINVAL for a size of 0 or less.
     */
    public DeviceMemory attachDeviceMemory(final String name, final long sizeBytes)
    {
        return deviceMemories.attach(name, sizeBytes);
    }

    /**
     * @param busAddr a bus address.
     * @return the device memory holding it, or null (RAM or nothing).
     */
    public DeviceMemory deviceMemoryAt(final long busAddr)
    {
        return deviceMemories.at(busAddr);
    }

    private DeviceMemory deviceMemory(final long busAddr, final int length)
    {
        return deviceMemories.holding(busAddr, length);
    }

    // ---- package-private: the allocator interface used by the address spaces ----

    FrameTable frames()
    {
        return frames;
    }

    SwapSpace swap()
    {
        return swap;
    }

    /** @return the pool of that size; an empty one when the host reserved no page of it. */
    HugetlbPool pool(final PageSize size)
    {
        return allocator.pool(size);
    }

    /** @return the pools the host has, smallest page size first. */
    Collection<HugetlbPool> pools()
    {
        return allocator.pools();
    }

    /**
     * Takes a folio from the buddy allocators, MOVABLE first when allowed (GFP_HIGHUSER_MOVABLE), then NORMAL.
     *
     * @return the head frame, or -1 when no zone allowed has a free block of that order.
     */
    long allocateFolio(final int order, final boolean allowMovable, final byte kind)
    {
        return allocator.allocateFolio(order, allowMovable, kind);
    }

    /** Takes the highest free folio of a zone above {@code abovePfn}, for compaction; -1 when none. */
    long allocateHighestIn(final Zone zone, final long abovePfn, final byte kind)
    {
        return allocator.allocateHighestIn(zone, abovePfn, kind, 0);
    }

    /** As {@link #allocateHighestIn(Zone, long, byte)}, a folio of {@code order} (a base page of a 16 or 64 KiB
     * host). */
    long allocateHighestIn(final Zone zone, final long abovePfn, final byte kind, final int order)
    {
        return allocator.allocateHighestIn(zone, abovePfn, kind, order);
    }

    /** Takes a page from a hugetlb pool and marks its frames; -1 when the pool is empty. */
    long takeHugetlbPage(final PageSize size)
    {
        return allocator.takeHugetlbPage(size);
    }

    /** Returns a folio: hugetlb folios go back to their pool, others to the buddy allocator of their zone. */
    void freeFolio(final long head)
    {
        allocator.freeFolio(head);
    }
}
