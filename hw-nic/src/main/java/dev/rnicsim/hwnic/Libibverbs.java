package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.intCall;
import static dev.rnicsim.hwnic.Downcalls.pointerCall;
import static dev.rnicsim.hwnic.Downcalls.pointerHandle;
import static dev.rnicsim.hwnic.IbvStructs.IBV_CONTEXT;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * rdma-core's {@code libibverbs.so.1} through java.lang.foreign: the library loaded with
 * {@link SymbolLookup#libraryLookup(String, Arena)} (never unloaded), one downcall handle per exported function,
 * and the inline verbs of {@code <infiniband/verbs.h>} done as verbs.h does them, by calling the function pointer
 * read from the context's ops table ({@code struct ibv_context_ops}) or from the extended table below the context
 * ({@code struct verbs_context}): libibverbs exports no symbol for {@code ibv_post_send}, {@code ibv_post_recv} or
 * {@code ibv_poll_cq}.
 *
 * <p>This class binds the device list, contexts, PDs, CQs and QPs; the other verb families have their own classes,
 * loaded from the same library: {@link #queries()} ({@link DeviceQueryVerbs}: device, port, GID and P_Key queries),
 * {@link #registration()} ({@link RegistrationVerbs}: MRs, windows, advise), {@link #addressHandles()}
 * ({@link AddressHandleVerbs}: UD address handles), {@link #srqs()} ({@link SrqVerbs}: shared receive queues) and
 * {@link #extendedQps()} ({@link ExtendedQpVerbs}: {@code ibv_create_qp_ex}) and {@link #xrcs()} ({@link XrcVerbs}: XRC
 * domains, XRC SRQs and SRQ numbers).
 *
 * <p>Every handle is linked with {@code captureCallState("errno")} and every wrapper returns the value with the
 * errno captured right after that call ({@link Result}); the callers follow the three conventions of libibverbs:
 * NULL with errno set (ibv_open_device, ibv_alloc_pd, ibv_reg_mr_iova2, ibv_create_cq, ibv_create_qp,
 * ibv_alloc_mw, ibv_create_ah, ibv_create_srq), the errno as the return value (ibv_dealloc_pd, ibv_dereg_mr,
 * ibv_modify_qp, ibv_post_send, ibv_bind_mw, ...), a negative return (ibv_poll_cq, ibv_rereg_mr's
 * IBV_REREG_MR_ERR_* codes with errno set).
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

    // Handles for function pointers read from the ops tables (address first, then the errno state, then the args).
    private final MethodHandle postSendPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        ADDRESS));
    private final MethodHandle postRecvPtr = postSendPtr;
    private final MethodHandle pollCqPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
        ADDRESS));

    private static volatile Object system;

    private final String libraryName;
    private final DeviceQueryVerbs queries;
    private final RegistrationVerbs registration;
    private final AddressHandleVerbs addressHandles;
    private final SrqVerbs srqs;
    private final ForkVerbs forks;
    private final ExtendedQpVerbs extendedQps = new ExtendedQpVerbs();
    private final XrcVerbs xrcs = new XrcVerbs();
    private final MethodHandle getDeviceList;
    private final MethodHandle freeDeviceList;
    private final MethodHandle getDeviceName;
    private final MethodHandle openDevice;
    private final MethodHandle closeDevice;
    private final MethodHandle allocPd;
    private final MethodHandle deallocPd;
    private final MethodHandle createCq;
    private final MethodHandle destroyCq;
    private final MethodHandle resizeCq;
    private final MethodHandle createQp;
    private final MethodHandle destroyQp;
    private final MethodHandle modifyQp;
    private final MethodHandle queryQp;

    private Libibverbs(final String libraryName, final SymbolLookup lookup)
    {
        this.libraryName = libraryName;
        queries = new DeviceQueryVerbs(libraryName, lookup);
        registration = new RegistrationVerbs(libraryName, lookup);
        addressHandles = new AddressHandleVerbs(libraryName, lookup);
        srqs = new SrqVerbs(libraryName, lookup);
        forks = new ForkVerbs(libraryName, lookup);
        getDeviceList = handle(lookup, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS));
        freeDeviceList = handle(lookup, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
        getDeviceName = handle(lookup, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
        openDevice = handle(lookup, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS));
        closeDevice = handle(lookup, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        allocPd = handle(lookup, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
        deallocPd = handle(lookup, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createCq = handle(lookup, "ibv_create_cq", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS,
            ADDRESS, JAVA_INT));
        destroyCq = handle(lookup, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        resizeCq = handle(lookup, "ibv_resize_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        createQp = handle(lookup, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        destroyQp = handle(lookup, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        modifyQp = handle(lookup, "ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        queryQp = handle(lookup, "ibv_query_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT,
            ADDRESS));
    }

    private MethodHandle handle(final SymbolLookup lookup, final String symbol, final FunctionDescriptor descriptor)
    {
        return Downcalls.handle(lookup, libraryName, symbol, descriptor);
    }

    /**
     * @return the device, port, GID and P_Key queries.
     */
    DeviceQueryVerbs queries()
    {
        return queries;
    }

    /**
     * @return ibv_fork_init and ibv_is_fork_initialized.
     */
    ForkVerbs forks()
    {
        return forks;
    }

    /**
     * @return the MR, window and advise verbs.
     */
    RegistrationVerbs registration()
    {
        return registration;
    }

    /**
     * @return ibv_create_ah and ibv_destroy_ah.
     */
    AddressHandleVerbs addressHandles()
    {
        return addressHandles;
    }

    /**
     * @return the shared receive queue verbs.
     */
    SrqVerbs srqs()
    {
        return srqs;
    }

    /**
     * @return ibv_create_qp_ex through the extended table.
     */
    ExtendedQpVerbs extendedQps()
    {
        return extendedQps;
    }

    /**
     * @return the XRC verbs through the extended table (ibv_get_srq_num, ibv_open_xrcd, ibv_close_xrcd,
     *     ibv_create_srq_ex).
     */
    XrcVerbs xrcs()
    {
        return xrcs;
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
            return name.address() == 0 ? "" : Libc.cString(name.reinterpret(IbvStructs.IBV_SYSFS_NAME_MAX), 0,
                IbvStructs.IBV_SYSFS_NAME_MAX);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_get_device_name", t);
        }
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
     * @param cq  a CQ.
     * @param cqe the least number of entries wanted.
     * @return {@code ibv_resize_cq}: 0 or the errno (the provider writes the granted size into the CQ's cqe).
     */
    Result resizeCq(final MemorySegment cq, final int cqe)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)resizeCq.invokeExact(state, cq, cqe);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_resize_cq", t);
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
}
