package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.IbvStructs.CONTEXT_ABI_COMPAT;
import static dev.rnicsim.hwnic.IbvStructs.IBV_CONTEXT;
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
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * rdma-core's {@code libibverbs.so.1} through java.lang.foreign: the library loaded with
 * {@link SymbolLookup#libraryLookup(String, Arena)} (never unloaded), one downcall handle per exported function,
 * and the inline verbs of {@code <infiniband/verbs.h>} done as verbs.h does them, by calling the function pointer
 * read from the context's ops table ({@code struct ibv_context_ops}) or from the extended table below the context
 * ({@code struct verbs_context}): libibverbs exports no symbol for {@code ibv_post_send}, {@code ibv_post_recv},
 * {@code ibv_poll_cq}, {@code ibv_alloc_mw}, {@code ibv_dealloc_mw}, {@code ibv_bind_mw},
 * {@code ibv_query_device_ex}, {@code ibv_query_port} (a macro over the extended table) or {@code ibv_advise_mr}.
 *
 * <p>Every handle is linked with {@code captureCallState("errno")} and every wrapper returns the value with the
 * errno captured right after that call ({@link Result}); the callers follow the three conventions of libibverbs:
 * NULL with errno set (ibv_open_device, ibv_alloc_pd, ibv_reg_mr_iova2, ibv_create_cq, ibv_create_qp,
 * ibv_alloc_mw), the errno as the return value (ibv_dealloc_pd, ibv_dereg_mr, ibv_modify_qp, ibv_post_send,
 * ibv_bind_mw, ...), a negative return (ibv_poll_cq, ibv_rereg_mr's IBV_REREG_MR_ERR_* codes with errno set).
 *
 * <p>Thread safe: libibverbs allows concurrent calls on different objects (libibverbs(7)); the wrappers keep no
 * state of their own.
 */
// Restricted java.lang.foreign methods (linking, library lookup, sizing native pointers) are this class's purpose.
@SuppressWarnings("restricted")
final class Libibverbs
{
    /** The library's soname. */
    static final String DEFAULT_LIBRARY = "libibverbs.so.1";
    /** System property naming another library file to load instead (a path or a soname). */
    static final String LIBRARY_PROPERTY = "rnicsim.libibverbs";
    /** {@code __VERBS_ABI_IS_EXTENDED}: {@code abi_compat} of a context whose {@code struct verbs_context} exists. */
    static final long VERBS_ABI_IS_EXTENDED = -1L;

    private static final Linker LINKER = Linker.nativeLinker();

    // Handles for function pointers read from the ops tables (address first, then the errno state, then the args).
    private final MethodHandle postSendPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        ADDRESS));
    private final MethodHandle postRecvPtr = postSendPtr;
    private final MethodHandle pollCqPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
        ADDRESS));
    private final MethodHandle bindMwPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        ADDRESS));
    private final MethodHandle allocMwPtr = pointerHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
    private final MethodHandle deallocMwPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private final MethodHandle queryDeviceExPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        ADDRESS, JAVA_LONG));
    private final MethodHandle queryPortPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE,
        ADDRESS, JAVA_LONG));
    private final MethodHandle adviseMrPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
        JAVA_INT, ADDRESS, JAVA_INT));

    private static volatile Object system;

    private final String libraryName;
    private final MethodHandle getDeviceList;
    private final MethodHandle freeDeviceList;
    private final MethodHandle getDeviceName;
    private final MethodHandle openDevice;
    private final MethodHandle closeDevice;
    private final MethodHandle queryDevice;
    private final MethodHandle queryPortCompat;
    private final MethodHandle queryGid;
    /** {@code _ibv_query_gid_ex} (IBVERBS_1.11): returns the errno itself; null in an older libibverbs. */
    private final MethodHandle queryGidEx;
    private final MethodHandle allocPd;
    private final MethodHandle deallocPd;
    private final MethodHandle regMrIova2;
    /** {@code ibv_reg_dmabuf_mr} (IBVERBS_1.12, rdma-core 34); null when the library predates it. */
    private final MethodHandle regDmabufMr;
    private final MethodHandle deregMr;
    private final MethodHandle reregMr;
    private final MethodHandle createCq;
    private final MethodHandle destroyCq;
    private final MethodHandle createQp;
    private final MethodHandle destroyQp;
    private final MethodHandle modifyQp;
    private final MethodHandle queryQp;

    private Libibverbs(final String libraryName, final SymbolLookup lookup)
    {
        this.libraryName = libraryName;
        getDeviceList = handle(lookup, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS));
        freeDeviceList = handle(lookup, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
        getDeviceName = handle(lookup, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
        openDevice = handle(lookup, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS));
        closeDevice = handle(lookup, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        queryDevice = handle(lookup, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        queryPortCompat = handle(lookup, "ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE,
            ADDRESS));
        queryGid = handle(lookup, "ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT,
            ADDRESS));
        queryGidEx = lookup.find("_ibv_query_gid_ex").map(a -> LINKER.downcallHandle(a, FunctionDescriptor.of(
            JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG))).orElse(null);
        allocPd = handle(lookup, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
        deallocPd = handle(lookup, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        regMrIova2 = handle(lookup, "ibv_reg_mr_iova2", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG,
            JAVA_LONG, JAVA_INT));
        regDmabufMr = lookup.find("ibv_reg_dmabuf_mr").map(a -> LINKER.downcallHandle(a, FunctionDescriptor.of(
            ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT), Errnos.CAPTURE)).orElse(null);
        deregMr = handle(lookup, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        reregMr = handle(lookup, "ibv_rereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, ADDRESS,
            JAVA_LONG, JAVA_INT));
        createCq = handle(lookup, "ibv_create_cq", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS,
            ADDRESS, JAVA_INT));
        destroyCq = handle(lookup, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createQp = handle(lookup, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        destroyQp = handle(lookup, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        modifyQp = handle(lookup, "ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        queryQp = handle(lookup, "ibv_query_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT,
            ADDRESS));
    }

    /**
     * Loads a libibverbs and binds every function the backend uses.
     *
     * @param libraryName a soname ({@code libibverbs.so.1}) or a path, as dlopen(3) takes it.
     * @return the binding.
     * @throws VerbsException ENOENT naming the packages to install when the library cannot be loaded, or the
     *                        rdma-core version needed when a function is missing.
     */
    static Libibverbs load(final String libraryName)
    {
        final SymbolLookup lookup;
        try
        {
            // Arena.global(): the library stays loaded; providers' code must never be unmapped under live objects.
            lookup = SymbolLookup.libraryLookup(libraryName, Arena.global());
        }
        catch (final IllegalArgumentException e)
        {
            throw new VerbsException("dlopen", Errno.ENOENT.code(), libraryName + " could not be loaded ("
                + e.getMessage() + "): rdma-core's verbs library is not installed. Install it: 'apt-get install "
                + "libibverbs1 ibverbs-providers' on Debian and Ubuntu, 'dnf install rdma-core libibverbs' on RHEL and "
                + "Fedora (package libibverbs, built from rdma-core)", e);
        }
        catch (final IllegalCallerException e)
        {
            throw nativeAccessDenied(e);
        }
        try
        {
            return new Libibverbs(libraryName, lookup);
        }
        catch (final IllegalCallerException e)
        {
            throw nativeAccessDenied(e);
        }
    }

    private static VerbsException nativeAccessDenied(final IllegalCallerException e)
    {
        return new VerbsException("dlopen", Errno.EPERM.code(), "native access is not enabled for the rdma-core "
            + "backend (" + e.getMessage() + "): run java with --enable-native-access=ALL-UNNAMED", e);
    }

    /**
     * The process's binding: {@link #DEFAULT_LIBRARY}, or the file named by the {@value #LIBRARY_PROPERTY} system
     * property, loaded on first use; a failure is remembered and thrown again.
     *
     * @return the binding.
     * @throws VerbsException as {@link #load(String)}.
     */
    static Libibverbs system()
    {
        Object s = system;
        if (s == null)
        {
            synchronized (Libibverbs.class)
            {
                s = system;
                if (s == null)
                {
                    try
                    {
                        s = load(System.getProperty(LIBRARY_PROPERTY, DEFAULT_LIBRARY));
                    }
                    catch (final VerbsException e)
                    {
                        s = e;
                    }
                    system = s;
                }
            }
        }
        if (s instanceof VerbsException e)
        {
            // A fresh exception per call (with the first as cause), with the same errno and detail.
            throw new VerbsException(e.verb(), e.errno(), e.detail(), e);
        }
        return (Libibverbs)s;
    }

    private MethodHandle handle(final SymbolLookup lookup, final String symbol, final FunctionDescriptor descriptor)
    {
        final MemorySegment address = lookup.find(symbol).orElseThrow(() -> new VerbsException("dlsym",
            Errno.ENOENT.code(), libraryName + " has no function " + symbol + ": rdma-core 25 or newer is needed "
                + "(ibv_reg_mr_iova2 appeared with IBVERBS_1.8); upgrade libibverbs1 / rdma-core"));
        return LINKER.downcallHandle(address, descriptor, Errnos.CAPTURE);
    }

    private static MethodHandle pointerHandle(final FunctionDescriptor descriptor)
    {
        return LINKER.downcallHandle(descriptor, Errnos.CAPTURE);
    }

    /**
     * @return the library name this binding was loaded from.
     */
    String libraryName()
    {
        return libraryName;
    }

    // ------------------------------------------------------------------ device list

    /**
     * What ibv_get_device_list returned.
     *
     * @param list  the NULL-terminated array (NULL on failure); free it with {@link #freeDeviceList}.
     * @param count entries.
     * @param errno errno when list is NULL.
     */
    record DeviceList(MemorySegment list, int count, int errno)
    {
        /**
         * @param i index, 0 to count - 1.
         * @return the {@code struct ibv_device *} at that index.
         */
        MemorySegment device(final int i)
        {
            return list.getAtIndex(ADDRESS, i).reinterpret(IbvStructs.IBV_DEVICE.byteSize());
        }
    }

    /**
     * {@code ibv_get_device_list(&num)}.
     *
     * @return the list, or a NULL list with the errno (ENOSYS: the kernel has no RDMA support).
     */
    DeviceList getDeviceList()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment num = arena.allocate(JAVA_INT);
            final MemorySegment list = (MemorySegment)getDeviceList.invokeExact(state, num);
            final int errno = Errnos.read(state);
            final int count = num.get(JAVA_INT, 0);
            if (list.address() == 0)
            {
                return new DeviceList(MemorySegment.NULL, 0, errno);
            }
            return new DeviceList(list.reinterpret(ADDRESS.byteSize() * (count + 1L)), count, errno);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_get_device_list", t);
        }
    }

    /**
     * {@code ibv_free_device_list}.
     *
     * @param list what {@link #getDeviceList()} returned (NULL is ignored).
     */
    void freeDeviceList(final DeviceList list)
    {
        if (list.list().address() == 0)
        {
            return;
        }
        try (Arena arena = Arena.ofConfined())
        {
            freeDeviceList.invokeExact(Errnos.state(arena), list.list());
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_free_device_list", t);
        }
    }

    /**
     * @param device a {@code struct ibv_device *}.
     * @return its name ({@code ibv_get_device_name}), e.g. {@code mlx5_0}.
     */
    String deviceName(final MemorySegment device)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment name = (MemorySegment)getDeviceName.invokeExact(Errnos.state(arena), device);
            return name.address() == 0 ? "" : cString(name.reinterpret(IbvStructs.IBV_SYSFS_NAME_MAX), 0,
                IbvStructs.IBV_SYSFS_NAME_MAX);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_get_device_name", t);
        }
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

    // ------------------------------------------------------------------ device

    /**
     * @param device a {@code struct ibv_device *} of a live list.
     * @return {@code ibv_open_device}: the context address, or 0 with errno.
     */
    Result openDevice(final MemorySegment device)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment ctx = (MemorySegment)openDevice.invokeExact(state, device);
            return new Result(ctx.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_open_device", t);
        }
    }

    /**
     * @param ctx a context.
     * @return {@code ibv_close_device}: 0, or -1 with errno.
     */
    Result closeDevice(final MemorySegment ctx)
    {
        return intCall("ibv_close_device", closeDevice, ctx);
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

    /** {@code sizeof(struct ibv_gid_entry)}: the GID, then gid_index, port_num, gid_type and ndev_ifindex. */
    private static final long GID_ENTRY_BYTES = 32;

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
     * {@code verbs_get_ctx_op(ctx, op)}: the function pointer of the extended table at {@code opOffset}, or NULL
     * when the context has no extended table, the table is too old to have that member, or the member is NULL.
     */
    private static MemorySegment extendedOp(final MemorySegment ctx, final long opOffset)
    {
        if (ctx.get(ADDRESS, CONTEXT_ABI_COMPAT).address() != VERBS_ABI_IS_EXTENDED)
        {
            return MemorySegment.NULL;
        }
        final MemorySegment vctx = MemorySegment.ofAddress(ctx.address() - IbvStructs.VERBS_CONTEXT_CONTEXT)
            .reinterpret(VERBS_CONTEXT.byteSize());
        final long sz = vctx.get(JAVA_LONG, IbvStructs.VERBS_CONTEXT_SZ);
        if (Long.compareUnsigned(sz, VERBS_CONTEXT.byteSize() - opOffset) < 0)
        {
            return MemorySegment.NULL;
        }
        return vctx.get(ADDRESS, opOffset);
    }

    // ------------------------------------------------------------------ PD, MR, MW

    /**
     * @param ctx a context.
     * @return {@code ibv_alloc_pd}: the PD address, or 0 with errno.
     */
    Result allocPd(final MemorySegment ctx)
    {
        return pointerCall("ibv_alloc_pd", allocPd, ctx);
    }

    /**
     * @param pd a PD.
     * @return {@code ibv_dealloc_pd}: 0 or the errno.
     */
    Result deallocPd(final MemorySegment pd)
    {
        return intCall("ibv_dealloc_pd", deallocPd, pd);
    }

    /**
     * {@code ibv_reg_mr_iova2} (ibv_reg_mr(3)); the {@code ibv_reg_mr} and {@code ibv_reg_mr_iova} macros of
     * verbs.h end here too.
     *
     * @param pd          a PD.
     * @param addr        first byte.
     * @param lengthBytes bytes.
     * @param iova        the address keys use.
     * @param access      ibv_access_flags bits.
     * @return the MR address, or 0 with errno.
     */
    Result regMr(final MemorySegment pd, final long addr, final long lengthBytes, final long iova, final int access)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment mr = (MemorySegment)regMrIova2.invokeExact(state, pd, MemorySegment.ofAddress(addr),
                lengthBytes, iova, access);
            return new Result(mr.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_reg_mr_iova2", t);
        }
    }

    /**
     * {@code ibv_reg_dmabuf_mr} (ibv_reg_mr(3)).
     *
     * @param pd          the PD.
     * @param offset      first byte inside the dma-buf.
     * @param lengthBytes bytes.
     * @param iova        the address accesses use.
     * @param fd          the dma-buf's file descriptor.
     * @param access      IBV_ACCESS_* bits.
     * @return the MR pointer (NULL on failure) and errno; EOPNOTSUPP without calling when the library lacks the
     * function.
     */
    Result regDmabufMr(final MemorySegment pd, final long offset, final long lengthBytes, final long iova,
        final int fd, final int access)
    {
        if (regDmabufMr == null)
        {
            return new Result(0, Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment mr = (MemorySegment)regDmabufMr.invokeExact(state, pd, offset, lengthBytes, iova, fd,
                access);
            return new Result(mr.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_reg_dmabuf_mr", t);
        }
    }

    /**
     * @param mr an MR.
     * @return {@code ibv_dereg_mr}: 0 or the errno.
     */
    Result deregMr(final MemorySegment mr)
    {
        return intCall("ibv_dereg_mr", deregMr, mr);
    }

    /**
     * {@code ibv_rereg_mr} (ibv_rereg_mr(3)).
     *
     * @param mr          the MR.
     * @param flags       IBV_REREG_MR_CHANGE_* bits.
     * @param pd          the new PD (or NULL).
     * @param addr        the new first byte.
     * @param lengthBytes the new length.
     * @param access      the new access bits.
     * @return 0, or an IBV_REREG_MR_ERR_* code with errno.
     */
    Result reregMr(final MemorySegment mr, final int flags, final MemorySegment pd, final long addr,
        final long lengthBytes, final int access)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)reregMr.invokeExact(state, mr, flags, pd, MemorySegment.ofAddress(addr), lengthBytes,
                access);
            return new Result(rc, Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_rereg_mr", t);
        }
    }

    /**
     * {@code ibv_alloc_mw} as verbs.h inlines it: EOPNOTSUPP when the provider has no {@code alloc_mw}, else the
     * call through the ops table.
     *
     * @param ctx  the PD's context.
     * @param pd   a PD.
     * @param type IBV_MW_TYPE_1 or _2.
     * @return the MW address, or 0 with errno.
     */
    Result allocMw(final MemorySegment ctx, final MemorySegment pd, final int type)
    {
        final MemorySegment fn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_ALLOC_MW);
        if (fn.address() == 0)
        {
            return new Result(0, Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment mw = (MemorySegment)allocMwPtr.invokeExact(fn, state, pd, type);
            return new Result(mw.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_alloc_mw", t);
        }
    }

    /**
     * @param ctx the window's context.
     * @param mw  a window.
     * @return {@code ibv_dealloc_mw} (inline: ops.dealloc_mw): 0 or the errno.
     */
    Result deallocMw(final MemorySegment ctx, final MemorySegment mw)
    {
        final MemorySegment fn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_DEALLOC_MW);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)deallocMwPtr.invokeExact(fn, state, mw);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_dealloc_mw", t);
        }
    }

    /**
     * The call of {@code ibv_bind_mw} through ops.bind_mw; the caller makes the inline function's checks first.
     *
     * @param ctx    the window's context.
     * @param qp     the QP that posts the bind.
     * @param mw     a type 1 window.
     * @param mwBind a {@code struct ibv_mw_bind}.
     * @return 0 or the errno.
     */
    Result bindMw(final MemorySegment ctx, final MemorySegment qp, final MemorySegment mw, final MemorySegment mwBind)
    {
        final MemorySegment fn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_BIND_MW);
        if (fn.address() == 0)
        {
            return new Result(Errno.EOPNOTSUPP.code(), Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)bindMwPtr.invokeExact(fn, state, qp, mw, mwBind);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_bind_mw", t);
        }
    }

    /**
     * {@code ibv_advise_mr} (ibv_advise_mr(3)) as verbs.h inlines it: EOPNOTSUPP when the context's extended table
     * has no {@code advise_mr}.
     *
     * @param ctx    the PD's context.
     * @param pd     a PD.
     * @param advice IBV_ADVISE_MR_ADVICE_*.
     * @param flags  IBV_ADVISE_MR_FLAG_FLUSH or 0.
     * @param sgList {@code struct ibv_sge} array.
     * @param numSge entries.
     * @return 0 or the errno.
     */
    Result adviseMr(final MemorySegment ctx, final MemorySegment pd, final int advice, final int flags,
        final MemorySegment sgList, final int numSge)
    {
        final MemorySegment fn = extendedOp(ctx, IbvStructs.VERBS_CONTEXT_ADVISE_MR);
        if (fn.address() == 0)
        {
            return new Result(Errno.EOPNOTSUPP.code(), Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)adviseMrPtr.invokeExact(fn, state, pd, advice, flags, sgList, numSge);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_advise_mr", t);
        }
    }

    // ------------------------------------------------------------------ CQ, QP

    /**
     * @param ctx a context.
     * @param cqe minimum entries.
     * @return {@code ibv_create_cq(ctx, cqe, NULL, NULL, 0)}: the CQ address, or 0 with errno.
     */
    Result createCq(final MemorySegment ctx, final int cqe)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment cq = (MemorySegment)createCq.invokeExact(state, ctx, cqe, MemorySegment.NULL,
                MemorySegment.NULL, 0);
            return new Result(cq.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_create_cq", t);
        }
    }

    /**
     * @param cq a CQ.
     * @return {@code ibv_destroy_cq}: 0 or the errno.
     */
    Result destroyCq(final MemorySegment cq)
    {
        return intCall("ibv_destroy_cq", destroyCq, cq);
    }

    /**
     * @param pd       a PD.
     * @param initAttr a {@code struct ibv_qp_init_attr}; the provider writes the actual capacities back.
     * @return {@code ibv_create_qp}: the QP address, or 0 with errno.
     */
    Result createQp(final MemorySegment pd, final MemorySegment initAttr)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment qp = (MemorySegment)createQp.invokeExact(state, pd, initAttr);
            return new Result(qp.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_create_qp", t);
        }
    }

    /**
     * @param qp a QP.
     * @return {@code ibv_destroy_qp}: 0 or the errno.
     */
    Result destroyQp(final MemorySegment qp)
    {
        return intCall("ibv_destroy_qp", destroyQp, qp);
    }

    /**
     * @param qp   a QP.
     * @param attr a {@code struct ibv_qp_attr}.
     * @param mask IBV_QP_* bits naming the valid members.
     * @return {@code ibv_modify_qp}: 0 or the errno.
     */
    Result modifyQp(final MemorySegment qp, final MemorySegment attr, final int mask)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)modifyQp.invokeExact(state, qp, attr, mask);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_modify_qp", t);
        }
    }

    /**
     * @param qp       a QP.
     * @param attr     a {@code struct ibv_qp_attr} to fill.
     * @param mask     the members wanted.
     * @param initAttr a {@code struct ibv_qp_init_attr} to fill.
     * @return {@code ibv_query_qp}: 0 or the errno.
     */
    Result queryQp(final MemorySegment qp, final MemorySegment attr, final int mask, final MemorySegment initAttr)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)queryQp.invokeExact(state, qp, attr, mask, initAttr);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_query_qp", t);
        }
    }

    /**
     * {@code ibv_post_send}: {@code qp->context->ops.post_send(qp, wr, bad_wr)}.
     *
     * @param postSend the function pointer, read from the context's ops table.
     * @param state    a capture-state segment.
     * @param qp       the QP.
     * @param wr       the first work request.
     * @param badWr    a pointer-sized slot for bad_wr.
     * @return 0 or the errno.
     */
    int postSend(final MemorySegment postSend, final MemorySegment state, final MemorySegment qp,
        final MemorySegment wr, final MemorySegment badWr)
    {
        try
        {
            return (int)postSendPtr.invokeExact(postSend, state, qp, wr, badWr);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_post_send", t);
        }
    }

    /**
     * {@code ibv_post_recv}: {@code qp->context->ops.post_recv(qp, wr, bad_wr)}.
     *
     * @param postRecv the function pointer.
     * @param state    a capture-state segment.
     * @param qp       the QP.
     * @param wr       the first work request.
     * @param badWr    a pointer-sized slot for bad_wr.
     * @return 0 or the errno.
     */
    int postRecv(final MemorySegment postRecv, final MemorySegment state, final MemorySegment qp,
        final MemorySegment wr, final MemorySegment badWr)
    {
        try
        {
            return (int)postRecvPtr.invokeExact(postRecv, state, qp, wr, badWr);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_post_recv", t);
        }
    }

    /**
     * {@code ibv_poll_cq}: {@code cq->context->ops.poll_cq(cq, num_entries, wc)}.
     *
     * @param pollCq     the function pointer.
     * @param state      a capture-state segment.
     * @param cq         the CQ.
     * @param numEntries most completions.
     * @param wc         room for that many {@code struct ibv_wc}.
     * @return completions taken, or a negative value on error.
     */
    int pollCq(final MemorySegment pollCq, final MemorySegment state, final MemorySegment cq,
        final int numEntries, final MemorySegment wc)
    {
        try
        {
            return (int)pollCqPtr.invokeExact(pollCq, state, cq, numEntries, wc);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_poll_cq", t);
        }
    }

    /**
     * @param ctx a context segment of any size.
     * @return the context as an {@code IBV_CONTEXT.byteSize()} segment.
     */
    static MemorySegment context(final long ctx)
    {
        return MemorySegment.ofAddress(ctx).reinterpret(IBV_CONTEXT.byteSize());
    }

    private static Result intCall(final String verb, final MethodHandle handle, final MemorySegment arg)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)handle.invokeExact(state, arg);
            // These return 0 or the errno (some older providers return -1 and set errno).
            return new Result(rc, rc > 0 ? rc : Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }

    private static Result pointerCall(final String verb, final MethodHandle handle, final MemorySegment arg)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment p = (MemorySegment)handle.invokeExact(state, arg);
            return new Result(p.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }
}
