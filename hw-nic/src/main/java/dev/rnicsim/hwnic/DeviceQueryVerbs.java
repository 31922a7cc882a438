package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.extendedOp;
import static dev.rnicsim.hwnic.Downcalls.handle;
import static dev.rnicsim.hwnic.Downcalls.pointerHandle;
import static dev.rnicsim.hwnic.IbvStructs.IBV_DEVICE_ATTR;
import static dev.rnicsim.hwnic.IbvStructs.IBV_DEVICE_ATTR_EX;
import static dev.rnicsim.hwnic.IbvStructs.IBV_PORT_ATTR;
import static dev.rnicsim.hwnic.IbvStructs.IBV_QUERY_DEVICE_EX_INPUT;
import static dev.rnicsim.hwnic.IbvStructs.VERBS_CONTEXT;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The device queries of libibverbs: {@code ibv_query_device_ex} (inline over the extended table, falling back to
 * {@code ibv_query_device}), {@code ibv_query_port} (a verbs.h macro over the extended table), {@code ibv_query_gid}
 * and {@code ibv_query_gid_ex}, {@code ibv_query_pkey} and {@code ibv_query_gid_table}. Conventions as
 * {@link Libibverbs}.
 *
 * <p>Thread safe: the wrappers keep no state of their own.
 */
// Linking the two functions that return their errno, without errno capture.
@SuppressWarnings("restricted")
final class DeviceQueryVerbs
{
    /** {@code sizeof(struct ibv_gid_entry)}: the GID, then gid_index, port_num, gid_type and ndev_ifindex. */
    static final long GID_ENTRY_BYTES = 32;
    /** Offset of {@code gid_index} in {@code struct ibv_gid_entry}. */
    static final long GID_ENTRY_GID_INDEX = 16;
    /** Offset of {@code port_num} in {@code struct ibv_gid_entry}. */
    static final long GID_ENTRY_PORT_NUM = 20;

    private final MethodHandle queryDeviceExPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        ADDRESS, JAVA_LONG));
    private final MethodHandle queryPortPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE,
        ADDRESS, JAVA_LONG));
    private final MethodHandle queryDevice;
    private final MethodHandle queryPortCompat;
    private final MethodHandle queryGid;
    /** {@code _ibv_query_gid_ex} (IBVERBS_1.11): returns the errno itself; null in an older libibverbs. */
    private final MethodHandle queryGidEx;
    /** {@code _ibv_query_gid_table} (IBVERBS_1.11): a count or a negative errno; null in an older libibverbs. */
    private final MethodHandle queryGidTable;
    private final MethodHandle queryPkey;

    DeviceQueryVerbs(final String libraryName, final SymbolLookup lookup)
    {
        queryDevice = handle(lookup, libraryName, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS,
            ADDRESS));
        queryPortCompat = handle(lookup, libraryName, "ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS,
            JAVA_BYTE, ADDRESS));
        queryGid = handle(lookup, libraryName, "ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE,
            JAVA_INT, ADDRESS));
        // Both return the errno (or a negative one) themselves and never set errno: linked without capture.
        queryGidEx = lookup.find("_ibv_query_gid_ex").map(a -> java.lang.foreign.Linker.nativeLinker()
            .downcallHandle(a, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_LONG))).orElse(null);
        queryGidTable = lookup.find("_ibv_query_gid_table").map(a -> java.lang.foreign.Linker.nativeLinker()
            .downcallHandle(a, FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG)))
            .orElse(null);
        queryPkey = handle(lookup, libraryName, "ibv_query_pkey", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE,
            JAVA_INT, ADDRESS));
    }

    /**
     * {@code ibv_query_device_ex} as verbs.h does it: the provider's {@code query_device_ex} from the extended
     * table when it has one (given the size of our {@code struct ibv_device_attr_ex}, so that a newer provider
     * fills no more than we have), else, or when it answers EOPNOTSUPP or ENOSYS, {@code ibv_query_device} into
     * {@code orig_attr} with the rest zeroed.
     *
     * @param ctx    a context, {@code IBV_CONTEXT.byteSize()} long.
     * @param attrEx a zeroed {@code struct ibv_device_attr_ex}.
     * @return 0 or the errno (also in {@link Result#errno()}).
     */
    Result queryDeviceEx(final MemorySegment ctx, final MemorySegment attrEx)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment fn = extendedOp(ctx, IbvStructs.VERBS_CONTEXT_QUERY_DEVICE_EX);
            if (fn.address() != 0)
            {
                final MemorySegment input = arena.allocate(IBV_QUERY_DEVICE_EX_INPUT);
                final int rc = (int)queryDeviceExPtr.invokeExact(fn, state, ctx, input, attrEx,
                    IBV_DEVICE_ATTR_EX.byteSize());
                if (rc != Errno.EOPNOTSUPP.code() && rc != Errno.ENOSYS.code())
                {
                    return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
                }
            }
            attrEx.fill((byte)0);
            final int rc = (int)queryDevice.invokeExact(state, ctx, attrEx.asSlice(0, IBV_DEVICE_ATTR.byteSize()));
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_query_device_ex", t);
        }
    }

    /**
     * {@code ibv_query_port} as the verbs.h macro does it: the extended table's {@code query_port} with our struct
     * size when it exists, else the exported compat function.
     *
     * @param ctx      a context.
     * @param port     port number (from 1).
     * @param portAttr a zeroed {@code struct ibv_port_attr}.
     * @return 0 or the errno.
     */
    Result queryPort(final MemorySegment ctx, final int port, final MemorySegment portAttr)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment fn = extendedOp(ctx, IbvStructs.offset(VERBS_CONTEXT, "query_port"));
            final int rc = fn.address() != 0
                ? (int)queryPortPtr.invokeExact(fn, state, ctx, (byte)port, portAttr, IBV_PORT_ATTR.byteSize())
                : (int)queryPortCompat.invokeExact(state, ctx, (byte)port, portAttr);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_query_port", t);
        }
    }

    /**
     * @param ctx   a context.
     * @param port  port number.
     * @param index GID table index.
     * @param gid   16 bytes to fill.
     * @return {@code ibv_query_gid_ex} where libibverbs has it (ENODATA for an empty entry), else
     * {@code ibv_query_gid}: 0, or -1 with errno.
     */
    Result queryGid(final MemorySegment ctx, final int port, final int index, final MemorySegment gid)
    {
        try (Arena arena = Arena.ofConfined())
        {
            if (queryGidEx != null)
            {
                // ibv_query_gid answers an empty entry with a zero GID and success; ibv_query_gid_ex(3) says ENODATA,
                // which is what Context.queryGid promises.
                final MemorySegment entry = arena.allocate(GID_ENTRY_BYTES, 8);
                final int err = (int)queryGidEx.invokeExact(ctx, port, index, entry, 0, GID_ENTRY_BYTES);
                if (err == 0)
                {
                    MemorySegment.copy(entry, 0, gid, 0, 16);
                }
                return new Result(err == 0 ? 0 : -1, err);
            }
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)queryGid.invokeExact(state, ctx, (byte)port, index, gid);
            return new Result(rc, Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_query_gid", t);
        }
    }

    /**
     * {@code ibv_query_pkey} (ibv_query_pkey(3)): one entry of a port's P_Key table, which rdma-core's libibverbs
     * reads from sysfs ({@code ports/PORT/pkeys/INDEX}).
     *
     * @param ctx   a context.
     * @param port  port number (from 1).
     * @param index P_Key table index.
     * @param pkey  2 bytes to fill, network order.
     * @return 0, or -1 with errno (ENOENT for an index or port with no entry, as the sysfs open fails).
     */
    Result queryPkey(final MemorySegment ctx, final int port, final int index, final MemorySegment pkey)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)queryPkey.invokeExact(state, ctx, (byte)port, index, pkey);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_query_pkey", t);
        }
    }

    /**
     * {@code ibv_query_gid_table} (ibv_query_gid_table(3)), which verbs.h inlines as
     * {@code _ibv_query_gid_table(ctx, entries, max_entries, 0, sizeof(struct ibv_gid_entry))}.
     *
     * @param ctx        a context.
     * @param entries    room for maxEntries {@code struct ibv_gid_entry} ({@link #GID_ENTRY_BYTES} each).
     * @param maxEntries entries the buffer holds.
     * @return the number of valid entries written, or the errno as a negative number (EINVAL for a buffer too small,
     *     EOPNOTSUPP when the library predates the function, without calling it).
     */
    long queryGidTable(final MemorySegment ctx, final MemorySegment entries, final long maxEntries)
    {
        if (queryGidTable == null)
        {
            return -Errno.EOPNOTSUPP.code();
        }
        try
        {
            return (long)queryGidTable.invokeExact(ctx, entries, maxEntries, 0, GID_ENTRY_BYTES);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_query_gid_table", t);
        }
    }
}
