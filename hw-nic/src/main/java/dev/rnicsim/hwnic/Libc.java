package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;

/**
 * The few libc calls the backend needs, through java.lang.foreign with errno captured on every call: {@code mmap},
 * {@code munmap}, {@code madvise} (mmap(2), madvise(2)), {@code getrlimit(RLIMIT_MEMLOCK)} (getrlimit(2)) and
 * {@code sysconf(_SC_PAGESIZE)}, and reading a C string. The constants carry their C names (Linux, glibc) and the layout check compares
 * them with the headers.
 *
 * <p>Thread safe: each call's errno is returned with its result.
 */
// Restricted java.lang.foreign methods (linking, library lookup, sizing native pointers) are this class's purpose.
@SuppressWarnings("restricted")
final class Libc
{
    /** {@code PROT_READ}. */
    static final int PROT_READ = 0x1;
    /** {@code PROT_WRITE}. */
    static final int PROT_WRITE = 0x2;
    /** {@code MAP_PRIVATE}. */
    static final int MAP_PRIVATE = 0x02;
    /** {@code MAP_ANONYMOUS}. */
    static final int MAP_ANONYMOUS = 0x20;
    /** {@code MAP_HUGETLB}. */
    static final int MAP_HUGETLB = 0x40000;
    /** {@code MAP_HUGE_SHIFT}: log2 of the huge page size goes in the flag bits from here. */
    static final int MAP_HUGE_SHIFT = 26;
    /** {@code MADV_HUGEPAGE}. */
    static final int MADV_HUGEPAGE = 14;
    /** {@code MADV_NOHUGEPAGE}. */
    static final int MADV_NOHUGEPAGE = 15;
    /** {@code RLIMIT_MEMLOCK}. */
    static final int RLIMIT_MEMLOCK = 8;
    /** {@code RLIM_INFINITY}. */
    static final long RLIM_INFINITY = -1L;
    /** {@code _SC_PAGESIZE}. */
    static final int _SC_PAGESIZE = 30;
    /** {@code MAP_FAILED}. */
    static final long MAP_FAILED = -1L;

    /** {@code struct rlimit}. */
    static final StructLayout RLIMIT = MemoryLayout.structLayout(JAVA_LONG.withName("rlim_cur"),
        JAVA_LONG.withName("rlim_max")).withName("rlimit");

    private static volatile Handles handles;

    /** The downcall handles, made on first use (a JVM that denies native access fails there, not in class init). */
    private record Handles(MethodHandle mmap, MethodHandle munmap, MethodHandle madvise, MethodHandle getrlimit,
        MethodHandle sysconf)
    {
    }

    private Libc()
    {
    }

    private static Handles handles()
    {
        Handles h = handles;
        if (h == null)
        {
            try
            {
                h = new Handles(
                    libc("mmap", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
                        JAVA_LONG)),
                    libc("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG)),
                    libc("madvise", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT)),
                    libc("getrlimit", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS)),
                    libc("sysconf", FunctionDescriptor.of(JAVA_LONG, JAVA_INT)));
            }
            catch (final IllegalCallerException e)
            {
                throw new VerbsException("dlsym", Errno.EPERM.code(), "native access is not enabled (" + e.getMessage()
                    + "): run java with --enable-native-access=ALL-UNNAMED", e);
            }
            handles = h;
        }
        return h;
    }

    private static MethodHandle libc(final String name, final FunctionDescriptor descriptor)
    {
        final Linker linker = Linker.nativeLinker();
        final MemorySegment symbol = linker.defaultLookup().find(name).orElseThrow(() ->
            new VerbsException("dlsym", Errno.ENOENT.code(), "the C library has no function " + name));
        return linker.downcallHandle(symbol, descriptor, Errnos.CAPTURE);
    }

    /**
     * {@code mmap(NULL, lengthBytes, prot, flags, -1, 0)}.
     *
     * @param lengthBytes bytes.
     * @param prot        PROT_ bits.
     * @param flags       MAP_ bits.
     * @return the address, or MAP_FAILED with errno.
     */
    static Result mmapAnonymous(final long lengthBytes, final int prot, final int flags)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment p = (MemorySegment)handles().mmap().invokeExact(state, MemorySegment.NULL, lengthBytes,
                prot, flags, -1, 0L);
            return new Result(p.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("mmap", t);
        }
    }

    /**
     * @param address     first byte, page aligned.
     * @param lengthBytes bytes.
     * @return 0, or -1 with errno.
     */
    static Result munmap(final long address, final long lengthBytes)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)handles().munmap().invokeExact(state, MemorySegment.ofAddress(address), lengthBytes);
            return new Result(rc, Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("munmap", t);
        }
    }

    /**
     * @param address     first byte, page aligned.
     * @param lengthBytes bytes.
     * @param advice      MADV_ value.
     * @return 0, or -1 with errno.
     */
    static Result madvise(final long address, final long lengthBytes, final int advice)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)handles().madvise().invokeExact(state, MemorySegment.ofAddress(address), lengthBytes,
                advice);
            return new Result(rc, Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("madvise", t);
        }
    }

    /**
     * The memlock limit, which bounds the bytes the process's MRs (and CQ and QP rings) may pin unless it holds
     * CAP_IPC_LOCK.
     *
     * @return {soft, hard} in bytes ({@link #RLIM_INFINITY} for unlimited), or null when getrlimit failed.
     */
    static long[] memlockLimitBytes()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment rl = arena.allocate(RLIMIT);
            final int rc = (int)handles().getrlimit().invokeExact(state, RLIMIT_MEMLOCK, rl);
            if (rc != 0)
            {
                return null;
            }
            return new long[] {rl.get(JAVA_LONG, 0), rl.get(JAVA_LONG, 8)};
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("getrlimit", t);
        }
    }

    /**
     * @return the base page size in bytes ({@code sysconf(_SC_PAGESIZE)}), 4096 if sysconf fails.
     */
    static long pageSizeBytes()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final long v = (long)handles().sysconf().invokeExact(state, _SC_PAGESIZE);
            return v > 0 ? v : 4096;
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("sysconf", t);
        }
    }

    /**
     * @param bytes a limit in bytes, or RLIM_INFINITY.
     * @return it as ulimit -l shows it (KiB), or "unlimited".
     */
    static String describeLimit(final long bytes)
    {
        return bytes == RLIM_INFINITY ? "unlimited" : bytes + " bytes (" + (bytes >>> 10) + " KiB)";
    }

    /**
     * @param segment memory holding a char array.
     * @param offset  where the array starts.
     * @param max     the array's length.
     * @return the text up to the first NUL (or the whole array).
     */
    static String cString(final MemorySegment segment, final long offset, final int max)
    {
        final byte[] bytes = new byte[max];
        int n = 0;
        while (n < max)
        {
            final byte b = segment.get(JAVA_BYTE, offset + n);
            if (b == 0)
            {
                break;
            }
            bytes[n++] = b;
        }
        return new String(bytes, 0, n, java.nio.charset.StandardCharsets.UTF_8);
    }
}
