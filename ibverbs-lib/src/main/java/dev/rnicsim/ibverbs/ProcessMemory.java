package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The real memory of the real processes: the bytes an RDMA WRITE, READ or SEND moves, copied between two processes
 * with {@code process_vm_readv(2)} and {@code process_vm_writev(2)} (as the NIC's DMA needs nothing from either
 * program), and their mappings from {@code /proc/PID/maps}.
 *
 * <p>Not thread safe: one instance serves the fabric's single model thread; its scratch buffer is reused.
 */
final class ProcessMemory implements AutoCloseable
{
    /** One {@code struct iovec}: base, length. */
    private static final long IOVEC_BYTES = 16;
    private static final int MAX_IOV = 1024;
    private static final MethodHandle READV;
    private static final MethodHandle WRITEV;
    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    static
    {
        final Linker linker = Linker.nativeLinker();
        final FunctionDescriptor fd = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG);
        // errno tells EFAULT (a range no longer mapped) from EPERM/ESRCH (no access to the process, or it exited)
        final Linker.Option errno = Linker.Option.captureCallState("errno");
        READV = linker.downcallHandle(linker.defaultLookup().find("process_vm_readv").orElseThrow(), fd, errno);
        WRITEV = linker.downcallHandle(linker.defaultLookup().find("process_vm_writev").orElseThrow(), fd, errno);
    }

    /** A range of a process's address space. */
    record Range(long addr, long lengthBytes)
    {
        /** @return true for a range of a null MR ({@link #DISCARD_BASE}). */
        boolean discards()
        {
            return addr >= DISCARD_BASE;
        }
    }

    /**
     * Where the ranges of a null MR ({@code ibv_alloc_null_mr}) start: above every user-space address of x86-64 and
     * arm64, so that an offset into one stays one. Gathering one gives zeros, scattering to one drops the bytes, as
     * the device's dump-fill mkey does.
     */
    static final long DISCARD_BASE = 1L << 62;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment localIov = arena.allocate(IOVEC_BYTES, 8);
    private final MemorySegment remoteIov = arena.allocate(IOVEC_BYTES * MAX_IOV, 8);
    private final MemorySegment callState = arena.allocate(CALL_STATE);
    private MemorySegment scratch = arena.allocate(1 << 20, 4096);
    private int lastErrno;

    /**
     * @return the errno of the last copy that moved fewer bytes than asked (0 when it moved them all).
     */
    int lastErrno()
    {
        return lastErrno;
    }

    /**
     * @param lengthBytes bytes needed.
     * @return the scratch buffer, at least that long.
     */
    MemorySegment scratch(final long lengthBytes)
    {
        if (scratch.byteSize() < lengthBytes)
        {
            long n = scratch.byteSize();
            while (n < lengthBytes)
            {
                n *= 2;
            }
            scratch = arena.allocate(n, 4096);
        }
        return scratch;
    }

    /**
     * Gathers ranges of a process into the scratch buffer.
     *
     * @param pid    the process.
     * @param ranges its ranges, in order.
     * @return bytes read (less than their sum when a range is not mapped, or the process has gone).
     */
    long gather(final int pid, final List<Range> ranges)
    {
        return transfer(READV, pid, ranges, scratch(total(ranges)));
    }

    /**
     * Scatters the first bytes of the scratch buffer to ranges of a process.
     *
     * @param pid    the process.
     * @param ranges its ranges, in order.
     * @return bytes written.
     */
    long scatter(final int pid, final List<Range> ranges)
    {
        return transfer(WRITEV, pid, ranges, scratch(total(ranges)));
    }

    private long transfer(final MethodHandle call, final int pid, final List<Range> ranges, final MemorySegment local)
    {
        for (final Range r : ranges)
        {
            if (r.discards())
            {
                return transferDiscarding(call, pid, ranges, local);
            }
        }
        lastErrno = 0;
        long done = 0;
        int i = 0;
        while (i < ranges.size())
        {
            final int n = Math.min(MAX_IOV, ranges.size() - i);
            long batch = 0;
            for (int k = 0; k < n; k++)
            {
                final Range r = ranges.get(i + k);
                remoteIov.set(ValueLayout.JAVA_LONG, k * IOVEC_BYTES, r.addr());
                remoteIov.set(ValueLayout.JAVA_LONG, k * IOVEC_BYTES + 8, r.lengthBytes());
                batch += r.lengthBytes();
            }
            localIov.set(ValueLayout.ADDRESS, 0, local.asSlice(done));
            localIov.set(ValueLayout.JAVA_LONG, 8, batch);
            final long moved;
            try
            {
                moved = (long) call.invokeExact(callState, pid, localIov, 1L, remoteIov, (long) n, 0L);
            }
            catch (final Throwable t)
            {
                throw new IllegalStateException("process_vm_readv/writev could not be called", t);
            }
            if (moved < 0)
            {
                lastErrno = (int) ERRNO.get(callState, 0L);
                return done;
            }
            done += moved;
            if (moved < batch)
            {
                lastErrno = 14; // EFAULT: the kernel stops at the first range it cannot reach
                return done;
            }
            i += n;
        }
        return done;
    }

    /** A transfer with ranges of a null MR: range by range, zeros for those gathered, nothing for those scattered. */
    private long transferDiscarding(final MethodHandle call, final int pid, final List<Range> ranges,
        final MemorySegment local)
    {
        lastErrno = 0;
        long done = 0;
        for (final Range r : ranges)
        {
            if (r.discards())
            {
                if (call == READV)
                {
                    local.asSlice(done, r.lengthBytes()).fill((byte) 0);
                }
                done += r.lengthBytes();
                continue;
            }
            final long moved = transfer(call, pid, List.of(r), local.asSlice(done));
            done += moved;
            if (moved < r.lengthBytes())
            {
                return done;
            }
        }
        return done;
    }

    static long total(final List<Range> ranges)
    {
        long t = 0;
        for (final Range r : ranges)
        {
            t += r.lengthBytes();
        }
        return t;
    }

    /** A line of {@code /proc/PID/maps}. */
    record Mapping(long start, long end, boolean read, boolean write, String name)
    {
    }

    /**
     * @param pid a process.
     * @return its mappings, from {@code /proc/PID/maps}, in address order.
     * @throws IOException when the file cannot be read (the process has gone).
     */
    static List<Mapping> maps(final int pid) throws IOException
    {
        final List<Mapping> out = new ArrayList<>();
        for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/maps")))
        {
            final String[] f = line.split("\\s+", 6);
            final int dash = f[0].indexOf('-');
            out.add(new Mapping(Long.parseUnsignedLong(f[0].substring(0, dash), 16),
                Long.parseUnsignedLong(f[0].substring(dash + 1), 16), f[1].charAt(0) == 'r', f[1].charAt(1) == 'w',
                f.length > 5 ? f[5].trim() : ""));
        }
        return out;
    }

    /**
     * @param pid a process.
     * @return the mappings of {@code /proc/PID/smaps} whose VmFlags hold {@code nr} (VM_NORESERVE: mapped with
     *         MAP_NORESERVE, not accounted by the overcommit check; proc(5)), in address order.
     * @throws IOException when the file cannot be read (the process has gone).
     */
    static List<Mapping> noReserve(final int pid) throws IOException
    {
        final List<Mapping> out = new ArrayList<>();
        long start = 0;
        long end = 0;
        for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/smaps")))
        {
            final int dash = line.indexOf('-');
            final int space = line.indexOf(' ');
            if (dash > 0 && space > dash && line.substring(0, dash).chars().allMatch(c -> Character.digit(c, 16) >= 0))
            {
                start = Long.parseUnsignedLong(line.substring(0, dash), 16);
                end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
            }
            else if (line.startsWith("VmFlags:") && List.of(line.substring(8).trim().split("\\s+")).contains("nr"))
            {
                out.add(new Mapping(start, end, true, true, ""));
            }
        }
        return out;
    }

    @Override
    public void close()
    {
        arena.close();
    }

    /** The ranges past their first {@code bytes} (a datagram's GRH, say), in order. */
    static List<Range> skip(final List<Range> ranges, final long bytes)
    {
        final List<Range> out = new ArrayList<>(ranges.size());
        long left = bytes;
        for (final Range r : ranges)
        {
            if (left >= r.lengthBytes())
            {
                left -= r.lengthBytes();
                continue;
            }
            out.add(new Range(r.addr() + left, r.lengthBytes() - left));
            left = 0;
        }
        return out;
    }

    /** The first {@code len} bytes of the ranges, in order. */
    static List<Range> clip(final List<Range> ranges, final long len)
    {
        final List<Range> out = new ArrayList<>(ranges.size());
        long left = len;
        for (final Range r : ranges)
        {
            if (left <= 0)
            {
                break;
            }
            final long n = Math.min(left, r.lengthBytes());
            out.add(new Range(r.addr(), n));
            left -= n;
        }
        return out;
    }
}
