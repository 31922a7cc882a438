package dev.rnicsim.dma;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.AdapterConfig;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.IndexPolicy;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Builds the two sides of a transfer from the real models: a {@link Host} with one process (pagetable) and a
 * device's {@link AdapterTables} (mtt), and MRs registered from pinned buffers of that process, whose pages are
 * physically scattered so that a DMA that misses a page boundary shows. Not a test.
 */
final class DmaFixture
{
    static final long KIB = 1L << 10;
    static final long MIB = 1L << 20;
    static final long PAGE = 4 * KIB;
    static final long HUGE = 2 * MIB;
    /** Every page size from 4 KiB up (mlx5-like). */
    static final long CAP_ALL = 0xfffffffffffff000L;
    /** Only 4 KiB and 2 MiB pages, so that the page size of an MR follows its backing. */
    static final long CAP_4K_2M = PAGE | HUGE;
    /** A key whose MPT index was never used by a fixture's tables. */
    static final int NEVER_ALLOCATED_KEY = MKey.make(1000, 0, MKey.DEFAULT_VARIANT_BITS);

    private DmaFixture()
    {
    }

    /**
     * @param cap         page_size_cap.
     * @param indexPolicy which free MPT index a registration takes.
     * @return the device tables of the brief: exact MTT of 2^20 entries, 1024 MPT entries with GENERATION variants,
     * a 256-line 4-way translation cache.
     */
    static AdapterConfig adapterConfig(final long cap, final IndexPolicy indexPolicy)
    {
        return new AdapterConfig(MttConfig.exact(1 << 20),
            new MptConfig(1024, MKey.DEFAULT_VARIANT_BITS, VariantPolicy.GENERATION, indexPolicy, 0), cap, 256, 4);
    }

    /**
     * @param length bytes.
     * @param seed   seed.
     * @return deterministic pseudo-random bytes.
     */
    static byte[] pattern(final int length, final long seed)
    {
        final byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    /**
     * @param length bytes.
     * @param value  the byte.
     * @return {@code length} copies of {@code value}.
     */
    static byte[] filled(final int length, final int value)
    {
        final byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte)value);
        return bytes;
    }

    /**
     * @param value a long.
     * @return its 8 bytes, little-endian.
     */
    static byte[] littleEndian(final long value)
    {
        final byte[] b = new byte[Long.BYTES];
        for (int i = 0; i < Long.BYTES; i++)
        {
            b[i] = (byte)(value >>> (8 * i));
        }
        return b;
    }

    /**
     * @param b 8 bytes, little-endian.
     * @return the long.
     */
    static long fromLittleEndian(final byte[] b)
    {
        long v = 0;
        for (int i = Long.BYTES - 1; i >= 0; i--)
        {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }

    /**
     * One host, one process in it, one device on it.
     *
     * @param host    the host.
     * @param process the process whose buffers are registered.
     * @param tables  the device's tables.
     * @param port    the device's DMA port (tables and the host's physical memory).
     */
    record Side(Host host, UserProcess process, AdapterTables tables, DmaPort port)
    {
        /**
         * @param thp         the host's THP mode.
         * @param cap         the device's page_size_cap.
         * @param indexPolicy the device's MPT index policy.
         * @return a host of 64 MiB with a process that may pin without limit, and a device.
         */
        static Side create(final ThpMode thp, final long cap, final IndexPolicy indexPolicy)
        {
            final Host host = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).thpMode(thp).build());
            final UserProcess process = host.spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            final AdapterTables tables = new AdapterTables(adapterConfig(cap, indexPolicy));
            return new Side(host, process, tables, new DmaPort(tables, host.physicalMemory()));
        }

        /**
         * @param thp the host's THP mode.
         * @param cap the device's page_size_cap.
         * @return a side with cyclic MPT index allocation.
         */
        static Side create(final ThpMode thp, final long cap)
        {
            return create(thp, cap, IndexPolicy.CYCLIC);
        }

        /**
         * Maps a buffer whose 4 KiB pages get every other frame: each of its pages is faulted in just before a page
         * of a filler mapping, so that no two of its pages are physically contiguous and a DMA that runs past a page
         * end without translating again lands in the filler's frame.
         *
         * @param length bytes, rounded up to 4 KiB.
         * @return the buffer's first byte.
         */
        long mmapScattered(final long length)
        {
            final long va = process.mmapAnonymous(length);
            final long filler = process.mmapAnonymous(length);
            for (long off = 0; off < length; off += PAGE)
            {
                process.touch(va + off, 1, true);
                process.touch(filler + off, 1, true);
            }
            return va;
        }

        /**
         * Maps 4 MiB of 2 MiB transparent huge pages (the host's THP mode must be ALWAYS) whose two huge pages are
         * not physically contiguous: a filler huge page is faulted in between them.
         *
         * @return the first byte, 2 MiB aligned.
         */
        long mmapScatteredHuge()
        {
            final long va = process.mmapAnonymous(2 * HUGE);
            final long filler = process.mmapAnonymous(2 * HUGE);
            process.touch(va, HUGE, true);
            process.touch(filler, HUGE, true);
            process.touch(va + HUGE, HUGE, true);
            assertThat(process.translate(va + HUGE)).isNotEqualTo(process.translate(va) + HUGE);
            return va;
        }

        /**
         * Maps a scattered buffer, fills it with {@code contents}, pins and registers it with iova == address.
         *
         * @param contents the buffer's bytes (its length is the MR length).
         * @param pd       protection domain.
         * @param access   MR access bits.
         * @return the MR.
         */
        Mr register(final byte[] contents, final int pd, final int access)
        {
            final long va = mmapScattered(contents.length);
            process.write(va, contents);
            return register(va, contents.length, pd, access, va);
        }

        /**
         * Pins {@code [va, va + length)} for writing, long-term, and registers it.
         *
         * @param va     first byte.
         * @param length bytes.
         * @param pd     protection domain.
         * @param access MR access bits.
         * @param iova   the address the MR is accessed by.
         * @return the MR.
         */
        Mr register(final long va, final long length, final int pd, final int access, final long iova)
        {
            return register(va, length, pd, access, iova, true);
        }

        /**
         * Pins {@code [va, va + length)} long-term and registers it.
         *
         * @param va     first byte.
         * @param length bytes.
         * @param pd     protection domain.
         * @param access MR access bits.
         * @param iova   the address the MR is accessed by.
         * @param write  FOLL_WRITE (a long-term read pin of untouched memory gets fresh zeroed pages).
         * @return the MR.
         */
        Mr register(final long va, final long length, final int pd, final int access, final long iova,
            final boolean write)
        {
            final PinnedPages pin = process.pinUserPages(va, length, write, true);
            final List<DmaRun> runs = dmaRuns(pin);
            final RegisteredMr mr = tables.register(pd, runs, va, length, iova, access);
            return new Mr(this, va, length, iova, pd, access, runs, mr);
        }

        /**
         * Registers the same buffer again (a new MPT entry over the same runs).
         *
         * @param old an MR of this side.
         * @return the new MR.
         */
        Mr reregister(final Mr old)
        {
            final RegisteredMr mr = tables.register(old.pd(), old.runs(), old.va(), old.length(), old.iova(),
                old.access());
            return new Mr(this, old.va(), old.length(), old.iova(), old.pd(), old.access(), old.runs(), mr);
        }

        private static List<DmaRun> dmaRuns(final PinnedPages pin)
        {
            final List<DmaRun> runs = new ArrayList<>();
            for (final PhysRun r : pin.runs())
            {
                runs.add(new DmaRun(r.physAddr(), r.lengthBytes()));
            }
            return runs;
        }
    }

    /**
     * A registered buffer of one side's process.
     *
     * @param side       the side.
     * @param va         first byte's virtual address.
     * @param length     bytes.
     * @param iova       the MR's iova.
     * @param pd         protection domain.
     * @param access     access bits.
     * @param runs       the DMA runs it was registered with.
     * @param registered what the tables hold.
     */
    record Mr(Side side, long va, long length, long iova, int pd, int access, List<DmaRun> runs,
        RegisteredMr registered)
    {
        /**
         * @return lkey == rkey.
         */
        int key()
        {
            return registered.key();
        }

        /**
         * @param offset bytes from the first byte.
         * @return the iova of that byte.
         */
        long at(final long offset)
        {
            return iova + offset;
        }

        /**
         * @param offset bytes from the first byte.
         * @param len    bytes.
         * @return a segment with this MR's key.
         */
        Segment sge(final long offset, final long len)
        {
            return new Segment(iova + offset, len, key());
        }

        /**
         * @return the buffer's bytes as the process reads them now.
         */
        byte[] bytes()
        {
            return side.process().read(va, (int)length);
        }

        /**
         * @param offset bytes from the first byte.
         * @param len    bytes.
         * @return those bytes as the process reads them now.
         */
        byte[] bytes(final long offset, final int len)
        {
            return side.process().read(va + offset, len);
        }

        /**
         * @param offset bytes from the first byte.
         * @param data   bytes the process stores there.
         */
        void store(final long offset, final byte[] data)
        {
            side.process().write(va + offset, data);
        }
    }

    /**
     * The contents of some MRs at one moment, to show that a failed operation changed none of them.
     */
    static final class Snapshot
    {
        private final List<Mr> mrs;
        private final List<byte[]> contents = new ArrayList<>();

        Snapshot(final Mr... mrs)
        {
            this.mrs = List.of(mrs);
            for (final Mr mr : mrs)
            {
                contents.add(mr.bytes());
            }
        }

        void assertUnchanged()
        {
            for (int i = 0; i < mrs.size(); i++)
            {
                assertThat(Arrays.mismatch(mrs.get(i).bytes(), contents.get(i)))
                    .as("first byte of MR %d that changed (-1: none)", i).isEqualTo(-1);
            }
        }
    }
}
