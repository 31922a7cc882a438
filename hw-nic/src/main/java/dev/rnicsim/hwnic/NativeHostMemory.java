package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.VerbsException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The process's own memory for buffers to register on real hardware: anonymous private mappings made with
 * {@code mmap} through java.lang.foreign (mmap(2)), page aligned, with {@code MAP_HUGETLB} and the page-size bits
 * for the hugetlb backings and {@code madvise(MADV_HUGEPAGE / MADV_NOHUGEPAGE)} for the others. Nothing here is
 * GC-managed or arena memory: a mapping lives until {@link #free} unmaps it, so memory registered with a NIC is
 * never freed behind its back.
 *
 * <p>Reads and writes go through {@link MemorySegment}s over the mapping, and only over memory this object mapped:
 * an address outside its mappings is refused with EFAULT (a CPU access there could crash the JVM), and so is
 * {@link #free} of a range it did not map (EINVAL), which could unmap the JVM's own memory.
 *
 * <p>Thread safe: every method is synchronized.
 */
// Restricted java.lang.foreign methods (linking, library lookup, sizing native pointers) are this class's purpose.
@SuppressWarnings("restricted")
public final class NativeHostMemory implements HostMemory
{
    /** 2 MiB. */
    static final long HUGE_2M = 2L << 20;
    /** 1 GiB. */
    static final long HUGE_1G = 1L << 30;

    /** The process-wide instance, created on first use (not in class initialisation, which must not fail). */
    private static final class Shared
    {
        static final NativeHostMemory INSTANCE = new NativeHostMemory();
    }

    private final long basePageBytes = Libc.pageSizeBytes();
    private final TreeMap<Long, Mapping> mappings = new TreeMap<>();
    private final List<BiConsumer<Long, Long>> hooks = new ArrayList<>();

    /**
     * A live mapping.
     *
     * @param address     first byte.
     * @param lengthBytes its length, a multiple of its page size.
     * @param pageBytes   its page size.
     */
    record Mapping(long address, long lengthBytes, long pageBytes)
    {
        long end()
        {
            return address + lengthBytes;
        }
    }

    /**
     * A memory of its own (mappings made through another instance are not readable through this one).
     */
    public NativeHostMemory()
    {
    }

    /**
     * @return the instance every {@link RdmaContext} of this process hands out.
     */
    public static NativeHostMemory shared()
    {
        return Shared.INSTANCE;
    }

    /**
     * {@code mmap(NULL, length, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS[|MAP_HUGETLB|size], -1, 0)}.
     * TRANSPARENT_HUGE_PAGES maps a 2 MiB-aligned range (trimming the rest) advised MADV_HUGEPAGE; BASE_PAGES
     * advises MADV_NOHUGEPAGE. The advice is best effort: a kernel without transparent huge pages refuses it and
     * the mapping stays.
     *
     * @param lengthBytes bytes, more than 0; rounded up to the backing's page size.
     * @param backing     what backs it.
     * @return the address of the first byte.
     * @throws VerbsException EINVAL for a length of 0 or one that overflows when rounded; ENOMEM naming the hugetlb
     *                        pool (vm.nr_hugepages and free pages) when MAP_HUGETLB finds too few pages, or the
     *                        address space when plain mmap fails; the errno of mmap otherwise.
     */
    @Override
    public synchronized long allocate(final long lengthBytes, final Backing backing)
    {
        if (backing == null)
        {
            throw new VerbsException("mmap", Errno.EINVAL.code(), "backing is null");
        }
        final long page = pageBytes(backing);
        if (lengthBytes <= 0 || lengthBytes > Long.MAX_VALUE - page - HUGE_2M)
        {
            throw new VerbsException("mmap", Errno.EINVAL.code(), "length=" + lengthBytes + " must be from 1 to "
                + (Long.MAX_VALUE - page - HUGE_2M));
        }
        final long length = (lengthBytes + page - 1) & -page;
        final int prot = Libc.PROT_READ | Libc.PROT_WRITE;
        final int flags = Libc.MAP_PRIVATE | Libc.MAP_ANONYMOUS;
        final long address = switch (backing)
        {
            case BASE_PAGES -> advise(map(length, prot, flags, backing), length, Libc.MADV_NOHUGEPAGE);
            case TRANSPARENT_HUGE_PAGES -> advise(alignedTo2M(length, prot, flags), length, Libc.MADV_HUGEPAGE);
            case HUGETLB_2M -> map(length, prot, flags | Libc.MAP_HUGETLB | (21 << Libc.MAP_HUGE_SHIFT), backing);
            case HUGETLB_1G -> map(length, prot, flags | Libc.MAP_HUGETLB | (30 << Libc.MAP_HUGE_SHIFT), backing);
        };
        mappings.put(address, new Mapping(address, length, page));
        return address;
    }

    private long pageBytes(final Backing backing)
    {
        return switch (backing)
        {
            case BASE_PAGES, TRANSPARENT_HUGE_PAGES -> basePageBytes;
            case HUGETLB_2M -> HUGE_2M;
            case HUGETLB_1G -> HUGE_1G;
        };
    }

    private static long map(final long length, final int prot, final int flags, final Backing backing)
    {
        final Errnos.Result r = Libc.mmapAnonymous(length, prot, flags);
        if (r.value() == Libc.MAP_FAILED)
        {
            throw new VerbsException("mmap", r.errno(), "length=" + length + " backing=" + backing + ": "
                + mmapFailure(r.errno(), length, backing));
        }
        return r.value();
    }

    /** Maps length + 2 MiB and unmaps the head and tail around the first 2 MiB boundary. */
    private static long alignedTo2M(final long length, final int prot, final int flags)
    {
        final long raw = map(length + HUGE_2M, prot, flags, Backing.TRANSPARENT_HUGE_PAGES);
        final long aligned = (raw + HUGE_2M - 1) & -HUGE_2M;
        if (aligned > raw)
        {
            Libc.munmap(raw, aligned - raw);
        }
        final long tail = raw + length + HUGE_2M - (aligned + length);
        if (tail > 0)
        {
            Libc.munmap(aligned + length, tail);
        }
        return aligned;
    }

    private static long advise(final long address, final long length, final int advice)
    {
        // Best effort: EINVAL when the kernel has no transparent huge pages; the mapping is usable either way.
        Libc.madvise(address, length, advice);
        return address;
    }

    private static String mmapFailure(final int errno, final long length, final Backing backing)
    {
        if (errno != Errno.ENOMEM.code() && errno != Errno.EINVAL.code())
        {
            return "mmap failed";
        }
        if (backing == Backing.HUGETLB_2M || backing == Backing.HUGETLB_1G)
        {
            final long page = backing == Backing.HUGETLB_2M ? HUGE_2M : HUGE_1G;
            final String dir = "/sys/kernel/mm/hugepages/hugepages-" + (page >>> 10) + "kB";
            final String total = read(dir + "/nr_hugepages");
            final String free = read(dir + "/free_hugepages");
            if (total == null)
            {
                return "the kernel offers no " + (page >>> 20) + " MiB huge pages (" + dir + " does not exist)";
            }
            return "the hugetlb pool of " + (page >>> 20) + " MiB pages has " + free + " free of " + total
                + " (need " + length / page + "); reserve more with " + (page == HUGE_2M
                    ? "'sysctl vm.nr_hugepages=N'" : "'echo N > " + dir + "/nr_hugepages'") + " or with hugepagesz="
                + (page == HUGE_2M ? "2M" : "1G") + " hugepages=N on the kernel command line";
        }
        return errno == Errno.ENOMEM.code() ? "out of address space or vm.max_map_count mappings" : "mmap refused "
            + "the arguments";
    }

    private static String read(final String file)
    {
        try
        {
            return Files.readString(Path.of(file)).strip();
        }
        catch (final IOException | SecurityException e)
        {
            return null;
        }
    }

    /**
     * {@code munmap} of a range this object mapped, after telling the {@link #onUnmap} hooks. Pages pinned by an
     * MR stay with the device until the MR is deregistered.
     *
     * @param address     first byte, aligned to the mapping's page size.
     * @param lengthBytes bytes; rounded up to the mapping's page size.
     * @throws VerbsException EINVAL when the range is not inside one mapping made here or is not aligned; the errno
     *                        of munmap otherwise.
     */
    @Override
    public synchronized void free(final long address, final long lengthBytes)
    {
        final Map.Entry<Long, Mapping> e = mappings.floorEntry(address);
        final Mapping m = e == null ? null : e.getValue();
        if (m == null || address >= m.end())
        {
            throw new VerbsException("munmap", Errno.EINVAL.code(), "0x" + Long.toHexString(address) + " is not in "
                + "memory this HostMemory mapped");
        }
        final long length = lengthBytes > m.end() - address ? Long.MAX_VALUE
            : (lengthBytes + m.pageBytes() - 1) & -m.pageBytes();
        if ((address & (m.pageBytes() - 1)) != 0 || lengthBytes <= 0 || length > m.end() - address)
        {
            throw new VerbsException("munmap", Errno.EINVAL.code(), "address=0x" + Long.toHexString(address)
                + " length=" + lengthBytes + ": must be aligned to " + m.pageBytes() + " bytes and lie inside the"
                + " mapping [0x" + Long.toHexString(m.address()) + ", 0x" + Long.toHexString(m.end()) + ")");
        }
        RuntimeException hookFailure = null;
        for (final BiConsumer<Long, Long> hook : List.copyOf(hooks))
        {
            try
            {
                hook.accept(address, length);
            }
            catch (final RuntimeException ex)
            {
                // A hook must not stop the unmap (a real munmap cannot be vetoed); its failure is reported after.
                hookFailure = hookFailure == null ? ex : hookFailure;
            }
        }
        final Errnos.Result r = Libc.munmap(address, length);
        if (r.value() != 0)
        {
            throw new VerbsException("munmap", r.errno(), "address=0x" + Long.toHexString(address) + " length="
                + length);
        }
        mappings.remove(m.address());
        if (address > m.address())
        {
            mappings.put(m.address(), new Mapping(m.address(), address - m.address(), m.pageBytes()));
        }
        if (address + length < m.end())
        {
            mappings.put(address + length, new Mapping(address + length, m.end() - address - length, m.pageBytes()));
        }
        if (hookFailure != null)
        {
            throw new VerbsException("munmap", Errno.EIO.code(), "the range was unmapped, but an unmap hook failed: "
                + hookFailure, hookFailure);
        }
    }

    /**
     * Hooks run before every {@link #free} of this memory (the only way its mappings go away).
     *
     * @param hook receives the first address and the length in bytes of each range about to be unmapped.
     */
    @Override
    public synchronized void onUnmap(final BiConsumer<Long, Long> hook)
    {
        hooks.add(java.util.Objects.requireNonNull(hook, "hook"));
    }

    @Override
    public synchronized void write(final long address, final byte[] data)
    {
        if (data == null)
        {
            throw new VerbsException("write", Errno.EFAULT.code(), "data is null");
        }
        MemorySegment.copy(data, 0, segment("write", address, data.length), JAVA_BYTE, 0, data.length);
    }

    @Override
    public synchronized byte[] read(final long address, final int lengthBytes)
    {
        if (lengthBytes < 0)
        {
            throw new VerbsException("read", Errno.EINVAL.code(), "length=" + lengthBytes + " is negative");
        }
        return segment("read", address, lengthBytes).toArray(JAVA_BYTE);
    }

    /**
     * @param address     first byte.
     * @param lengthBytes bytes.
     * @return a segment over {@code [address, address + lengthBytes)}, which must lie in mappings made here.
     * @throws VerbsException EFAULT otherwise.
     */
    synchronized MemorySegment segment(final long address, final long lengthBytes)
    {
        return segment("access", address, lengthBytes);
    }

    private MemorySegment segment(final String verb, final long address, final long lengthBytes)
    {
        if (!mapped(address, lengthBytes))
        {
            throw new VerbsException(verb, Errno.EFAULT.code(), "[0x" + Long.toHexString(address) + ", +"
                + lengthBytes + ") is not (all) in memory this HostMemory mapped");
        }
        return MemorySegment.ofAddress(address).reinterpret(lengthBytes);
    }

    /** True when the range lies in mappings made here (several adjacent ones may cover it). */
    private boolean mapped(final long address, final long lengthBytes)
    {
        if (lengthBytes == 0)
        {
            return true;
        }
        long at = address;
        final long end = address + lengthBytes;
        if (end < address)
        {
            return false;
        }
        while (at < end)
        {
            final Map.Entry<Long, Mapping> e = mappings.floorEntry(at);
            if (e == null || at >= e.getValue().end())
            {
                return false;
            }
            at = e.getValue().end();
        }
        return true;
    }

    /**
     * @return the bytes mapped through this object and not freed.
     */
    public synchronized long mappedBytes()
    {
        long total = 0;
        for (final Mapping m : mappings.values())
        {
            total += m.lengthBytes();
        }
        return total;
    }
}
