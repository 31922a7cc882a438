package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.Errno;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Device memory ({@code ibv_alloc_dm}; mlx5 MEMIC, {@code mlx5_alloc_dm}): a range of the adapter's own memory. The
 * model gives each device {@link DeviceProfile#maxDmSizeBytes()} bytes of frames of its own (pinned pages of a
 * process of the device's), hands out ranges first fit in 4 KiB units (the allocation granule is assumed), moves
 * bytes with {@code ibv_memcpy_to_dm}/{@code _from_dm}, and lets {@code ibv_reg_dm_mr} map a range zero-based.
 *
 * <p>Not thread safe.
 */
final class SimDm implements DeviceMemory
{
    /**
     * Allocation unit: whole 4 KiB pages of the MEMIC BAR. The kernel's {@code mlx5_cmd_alloc_memic} takes
     * {@code DIV_ROUND_UP(length, PAGE_SIZE)} pages from its page bitmap (first fit, {@code
     * bitmap_find_next_zero_area}) and answers ENOMEM when no run of free pages is long enough.
     */
    static final long GRANULE_BYTES = 4096;

    /** mlx5 copies device memory in 4-byte words ({@code mlx5_access_dm}: "DM access address and length must be
     * aligned to 4 bytes"). */
    static final int COPY_WORD_BYTES = 4;

    private final SimContext context;
    private final long start;
    private final long lengthBytes;
    private final long reservedBytes;
    /** The MRs of ibv_reg_dm_mr over this memory: the kernel's {@code usecnt} of the DM. */
    private final List<SimDmMr> mrs = new ArrayList<>();
    private boolean closed;

    private SimDm(final SimContext context, final long start, final long lengthBytes, final long reservedBytes)
    {
        this.context = context;
        this.start = start;
        this.lengthBytes = lengthBytes;
        this.reservedBytes = reservedBytes;
    }

    /** The device-wide state: the frames and which ranges are taken (start → length). */
    static final class Space
    {
        private final List<PhysRun> frames;
        private final TreeMap<Long, Long> taken = new TreeMap<>();
        /** The allocations not freed yet, to free with their context. */
        private final List<SimDm> live = new ArrayList<>();

        Space(final SimDevice device)
        {
            final long size = device.profile().maxDmSizeBytes();
            final UserProcess owner = device.host().host().spawn(device.name() + "-device-memory");
            final long addr = owner.mmapAnonymous(size);
            final PinnedPages pinned = owner.pinUserPages(addr, size, true, true);
            frames = pinned.runs();
        }

        long allocate(final long bytes)
        {
            long at = 0;
            for (final Map.Entry<Long, Long> e : taken.entrySet())
            {
                if (e.getKey() - at >= bytes)
                {
                    break;
                }
                at = e.getKey() + e.getValue();
            }
            return at;
        }

        /** The whole pages holding [offset, offset + length) of the device memory, as DMA runs for the tables. */
        List<DmaRun> pageRuns(final long offset, final long length)
        {
            final long first = offset & ~(GRANULE_BYTES - 1);
            final long end = (offset + length + GRANULE_BYTES - 1) & ~(GRANULE_BYTES - 1);
            final List<DmaRun> out = new ArrayList<>();
            for (final long[] r : runs(first, end - first))
            {
                out.add(new DmaRun(r[0], r[1]));
            }
            return out;
        }

        /** The frames of [offset, offset + length) of the device memory: {physical address, bytes} each. */
        List<long[]> runs(final long offset, final long length)
        {
            final List<long[]> out = new ArrayList<>();
            long skip = offset;
            long left = length;
            for (final PhysRun r : frames)
            {
                if (left == 0)
                {
                    break;
                }
                if (skip >= r.lengthBytes())
                {
                    skip -= r.lengthBytes();
                    continue;
                }
                final long n = Math.min(r.lengthBytes() - skip, left);
                out.add(new long[] {r.physAddr() + skip, n});
                skip = 0;
                left -= n;
            }
            return out;
        }
    }

    /**
     * ibv_alloc_dm. A comp_mask other than 0 is EINVAL before the length is looked at (mlx5 {@code mlx5_alloc_dm}:
     * {@code check_comp_mask} with no bit known; rdma-core tests/test_device.py {@code test_create_dm_bad_flow});
     * log_align_req is taken and not modelled (allocations are 4 KiB granules, aligned anyway).
     *
     * @throws dev.rnicsim.verbs.VerbsException as {@link dev.rnicsim.verbs.Context#allocDm}; nothing changes on
     *                                          failure.
     */
    static SimDm allocate(final SimContext context, final dev.rnicsim.verbs.DmAttr attr)
    {
        final String verb = "ibv_alloc_dm";
        final long lengthBytes = attr.lengthBytes();
        final SimDevice device = context.device();
        final long max = device.profile().maxDmSizeBytes();
        if (max == 0)
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " (" + device.profile().driver()
                + ") has no device memory (max_dm_size 0: the provider lacks alloc_dm)"
                + "; use a device with max_dm_size above 0 (mlx5)");
        }
        if (attr.compMask() != 0)
        {
            throw Errors.invalid(verb, "comp_mask 0x" + Integer.toHexString(attr.compMask()) + ": struct "
                + "ibv_alloc_dm_attr defines no comp_mask bit, and mlx5_alloc_dm refuses every one (check_comp_mask)"
                + "; pass comp_mask 0");
        }
        if (lengthBytes <= 0 || lengthBytes > max)
        {
            throw Errors.invalid(verb, "length " + lengthBytes + " must be 1.." + max + " (max_dm_size; mlx5_alloc_dm)");
        }
        final long reserved = (lengthBytes + GRANULE_BYTES - 1) / GRANULE_BYTES * GRANULE_BYTES;
        final Space space = device.deviceMemory();
        final long at = space.allocate(reserved);
        if (at + reserved > max)
        {
            throw Errors.of(verb, Errno.ENOMEM, reserved + " bytes do not fit in the " + (max - space.taken.values()
                .stream().mapToLong(Long::longValue).sum()) + " bytes of device memory left (max_dm_size " + max
                + "); free device memory first");
        }
        space.taken.put(at, reserved);
        final SimDm dm = new SimDm(context, at, lengthBytes, reserved);
        space.live.add(dm);
        return dm;
    }

    /**
     * Frees the device memory a context still holds, as the kernel does when the context's file is closed (the
     * uverbs cleanup destroys every object of the file, the MRs over device memory before the device memory:
     * {@code uverbs_destroy_ufile_hw}). Called by {@link SimContext#close()} after its PDs, and so their MRs, closed.
     *
     * @param context the context being closed.
     */
    static void freeAll(final SimContext context)
    {
        final SimDevice device = context.device();
        // A device whose memory no allocation has set up has none to free (setting it up pins its frames).
        if (device.profile().maxDmSizeBytes() == 0 || device.deviceMemoryIfUsed() == null)
        {
            return;
        }
        for (final SimDm dm : List.copyOf(device.deviceMemory().live))
        {
            if (dm.context == context)
            {
                // MRs over it of this context's PDs: their PDs closed without them (they are in no PD's lists)
                List.copyOf(dm.mrs).forEach(SimDmMr::close);
                dm.close();
            }
        }
    }

    @Override
    public long lengthBytes()
    {
        return lengthBytes;
    }

    /** First byte of this allocation in the device's memory. */
    long start()
    {
        return start;
    }

    SimContext context()
    {
        return context;
    }

    void mrAdded(final SimDmMr mr)
    {
        mrs.add(mr);
    }

    void mrRemoved(final SimDmMr mr)
    {
        mrs.remove(mr);
    }

    private void check(final String verb, final long dmOffset, final long length)
    {
        if (closed)
        {
            throw Errors.invalid(verb, "the device memory is freed"
                + " (ibv_free_dm released it); allocate device memory again");
        }
        if (dmOffset < 0 || length < 0 || dmOffset > lengthBytes || length > lengthBytes - dmOffset)
        {
            throw Errors.of(verb, Errno.EFAULT, "range " + Long.toUnsignedString(dmOffset) + "+"
                + Long.toUnsignedString(length) + " is outside the " + lengthBytes
                + " bytes of device memory"
                + " (max_dm_size); keep the range inside the allocation");
        }
    }

    /**
     * mlx5 copies device memory in 4-byte words both ways ({@code mlx5_access_dm}, after its range check): an offset
     * or a length that is not a multiple of 4 is EINVAL (rdma-core tests/test_device.py test_dm_write_bad_flow,
     * tests/test_mr.py test_dm_bad_access).
     */
    private static void checkWords(final String verb, final long dmOffset, final long length)
    {
        if (dmOffset % COPY_WORD_BYTES != 0 || length % COPY_WORD_BYTES != 0)
        {
            throw Errors.invalid(verb, "offset " + Long.toUnsignedString(dmOffset) + " and length " + length
                + " must each be a multiple of 4 (mlx5_access_dm copies 4-byte words); copy whole words at 4-byte "
                + "aligned offsets");
        }
    }

    @Override
    public void memcpyTo(final long dmOffset, final byte[] src)
    {
        final String verb = "ibv_memcpy_to_dm";
        if (src == null)
        {
            throw Errors.of(verb, Errno.EFAULT, "src is null"
                + "; pass the bytes to copy");
        }
        check(verb, dmOffset, src.length);
        checkWords(verb, dmOffset, src.length);
        int done = 0;
        for (final long[] r : context.device().deviceMemory().runs(start + dmOffset, src.length))
        {
            context.device().host().host().physicalMemory().write(r[0], src, done, (int)r[1]);
            done += (int)r[1];
        }
    }

    @Override
    public byte[] memcpyFrom(final long dmOffset, final int length)
    {
        final String verb = "ibv_memcpy_from_dm";
        check(verb, dmOffset, length);
        checkWords(verb, dmOffset, length);
        final byte[] out = new byte[length];
        int done = 0;
        for (final long[] r : context.device().deviceMemory().runs(start + dmOffset, length))
        {
            context.device().host().host().physicalMemory().read(r[0], out, done, (int)r[1]);
            done += (int)r[1];
        }
        return out;
    }

    /** @return {@value #COPY_WORD_BYTES}: mlx5 copies whole 4-byte words at 4-byte aligned offsets. */
    @Override
    public int copyGranuleBytes()
    {
        return COPY_WORD_BYTES;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        if (!mrs.isEmpty())
        {
            // the kernel's uverbs_free_dm: ib_destroy_usecnt refuses while the DM's usecnt is not 0
            throw Errors.of("ibv_free_dm", Errno.EBUSY, mrs.size() + " MR(s) of ibv_reg_dm_mr use this device memory"
                + " (uverbs_free_dm: usecnt); deregister them first");
        }
        context.device().deviceMemory().taken.remove(start);
        context.device().deviceMemory().live.remove(this);
        closed = true;
    }

    @Override
    public String toString()
    {
        return "device memory " + lengthBytes + " bytes at offset " + start + " (" + reservedBytes + " reserved)";
    }
}
