package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The fixture a test starts from: two simulated hosts {@code a} and {@code b} with one device each, a process that
 * opened it, a PD and a CQ on each side, and one RC queue pair connected between them (ready to send, both QPs
 * granting every remote right; none on a profile whose driver has no RC QPs, EFA: {@link #qp} then says
 * why). Side {@link Side#A} is the requester of the helpers ({@link #write}, {@link #read},
 * {@link #send}), side {@link Side#B} the responder.
 * <pre>{@code
 * try (TestNic nic = TestNic.start()) {
 *     StrictMode strict = nic.strict();                       // checked when the nic closes
 *     long src = nic.alloc(Side.A, 64 << 10), dst = nic.alloc(Side.B, 64 << 10);
 *     MemoryRegion ms = nic.reg(Side.A, src, 64 << 10, Access.LOCAL_WRITE);
 *     MemoryRegion md = nic.reg(Side.B, dst, 64 << 10, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
 *     assertTrue(nic.write(ms, src, 4096, dst, md.rkey()).ok());
 *     nic.dereg(ms); nic.dereg(md);                            // else: LEAKED_MR when the nic closes
 * }
 * }</pre>
 * Units: addresses are process virtual addresses, lengths are in bytes, times in simulated nanoseconds. Verbs
 * errors surface as the verbs API throws them ({@link dev.rnicsim.verbs.VerbsException} with the errno,
 * {@link dev.rnicsim.verbs.PostException} for a refused post); a work request the device rejects completes with
 * an error status, which the helpers return rather than throw.
 *
 * <p>After a failed work request both QPs are in the error state, as on real hardware; the post helpers then
 * replace the pair with a new connected one before posting ({@link #reconnects()} counts it), so that a test can
 * go on. Not thread safe (nor is the simulator).
 */
public final class TestNic implements AutoCloseable
{
    /** The two ends: A (host {@code a}, the requester of the helpers) and B (host {@code b}, the responder). */
    public enum Side
    {
        /** Host {@code a}: the requester of {@link #write}, {@link #read} and {@link #send}. */
        A,
        /** Host {@code b}: the responder. */
        B;

        /**
         * @return the other side.
         */
        public Side other()
        {
            return this == A ? B : A;
        }

        /**
         * @return the suffix of this side's names in scenario scripts ({@code a} as in {@code qp_a}).
         */
        public String tag()
        {
            return this == A ? "a" : "b";
        }
    }

    /** Every remote right, which both QPs grant by default. */
    public static final Set<Access> ALL_REMOTE = Set.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    private final SimFabric fabric;
    /** Most completions of other work requests {@link #post} keeps for {@link #drain} (the oldest go first). */
    private static final int MAX_KEPT_COMPLETIONS = 1024;
    /** Completions {@link #post} polled for other work requests (queued ones), kept for {@link #drain}. */
    private final Map<Side, List<WorkCompletion>> polledMeanwhile = Map.of(Side.A, new java.util.ArrayList<>(),
        Side.B, new java.util.ArrayList<>());
    private final DeviceProfile profile;
    private final HostConfig hostConfig;
    private final long memlockBytes;
    private final Set<Access> qpAccess;
    private final Map<Side, SimDevice> devices = new EnumMap<>(Side.class);
    private final Map<Side, SimContext> contexts = new EnumMap<>(Side.class);
    private final Map<Side, ProtectionDomain> pds = new EnumMap<>(Side.class);
    private final Map<Side, CompletionQueue> cqs = new EnumMap<>(Side.class);
    private final Map<Side, QueuePair> qps = new EnumMap<>(Side.class);
    private final List<StrictMode> stricts = new ArrayList<>();
    private final List<UserProcess> children = new ArrayList<>();
    private final DmaInvariant dmaInvariant;
    private WorkCompletion lastReceive;
    private long nextWrId = 1;
    private int reconnects;
    private boolean closed;

    private TestNic(final Builder b)
    {
        fabric = new SimFabric();
        profile = b.profile;
        hostConfig = b.host.toBuilder().forkBehaviour(b.fork).build();
        memlockBytes = b.memlockBytes;
        qpAccess = b.qpAccess;
        for (final Side s : Side.values())
        {
            final SimDevice d = fabric.addHost(s.tag(), hostConfig).addDevice("sim:" + s.tag() + "/" + profile.name(),
                profile);
            devices.put(s, d);
            final UserProcess p = d.host().host().spawn("app_" + s.tag());
            p.rlimitMemlockBytes(memlockBytes);
            final SimContext c = d.open(p);
            contexts.put(s, c);
            pds.put(s, c.allocPd());
            cqs.put(s, c.createCq(256));
        }
        dmaInvariant = DmaInvariant.attach(devices.get(Side.A), devices.get(Side.B));
        connectPair();
    }

    /**
     * @return the checker of the key-retirement invariant watching both devices' DMA since the start: every chain
     * step of {@link VerbsActions} and {@link EngineActions} ends with its {@link DmaInvariant#assertHeld}.
     */
    public DmaInvariant dmaInvariant()
    {
        return dmaInvariant;
    }

    /**
     * @return a fixture of two {@code connectx5} hosts with the default host configuration (16 GiB, modern fork)
     * and RLIMIT_MEMLOCK unlimited.
     */
    public static TestNic start()
    {
        return builder().start();
    }

    /**
     * @param profile both devices' profile (see {@link DeviceProfiles}).
     * @return a fixture of two hosts with that device, otherwise as {@link #start()}.
     * @throws NullPointerException when profile is null.
     */
    public static TestNic start(final DeviceProfile profile)
    {
        return builder().profile(profile).start();
    }

    /**
     * @return a builder with the defaults of {@link #start()}.
     */
    public static Builder builder()
    {
        return new Builder();
    }

    /** Settings of a {@link TestNic}. */
    public static final class Builder
    {
        private DeviceProfile profile = DeviceProfiles.connectx5();
        private HostConfig host = HostConfig.builder().build();
        private ForkBehaviour fork = ForkBehaviour.MODERN;
        private long memlockBytes = UserProcess.RLIM_INFINITY;
        private Set<Access> qpAccess = ALL_REMOTE;

        private Builder()
        {
        }

        /**
         * @param value both devices' profile; default {@code connectx5}.
         * @return this.
         */
        public Builder profile(final DeviceProfile value)
        {
            profile = Objects.requireNonNull(value, "profile");
            return this;
        }

        /**
         * @param name a built-in profile ({@link DeviceProfiles#builtIn()}: connectx3 ... connectx7, bluefield2/3,
         *             rxe, e810, e810-iwarp, siw, efa, efa-gen1, efa-gen3, bnxt_re, hns, qedr, erdma, mana, cxgb4,
         *             hfi1, generic).
         * @return this.
         * @throws IllegalArgumentException for another name.
         */
        public Builder profile(final String name)
        {
            final DeviceProfile p = DeviceProfiles.builtIn().get(Objects.requireNonNull(name, "name"));
            if (p == null)
            {
                throw new IllegalArgumentException("no built-in profile '" + name + "'; known: "
                    + DeviceProfiles.builtIn().keySet());
            }
            return profile(p);
        }

        /**
         * @param value both hosts' configuration (RAM, hugetlb pools, THP mode, ...); its fork behaviour is replaced
         *              by {@link #forkBehaviour}.
         * @return this.
         */
        public Builder host(final HostConfig value)
        {
            host = Objects.requireNonNull(value, "host");
            return this;
        }

        /**
         * @param value what fork does to pinned pages: MODERN (copies them for the child, the default) or LEGACY
         *              (shares them copy-on-write: the parent's next write moves its page away from the MR).
         * @return this.
         */
        public Builder forkBehaviour(final ForkBehaviour value)
        {
            fork = Objects.requireNonNull(value, "fork");
            return this;
        }

        /**
         * @param bytes RLIMIT_MEMLOCK of both processes in bytes, or {@link UserProcess#RLIM_INFINITY} (the
         *              default, so that tests fail for what they test, not for the 8 MiB default limit).
         * @return this.
         * @throws IllegalArgumentException for a negative value other than RLIM_INFINITY.
         */
        public Builder memlockBytes(final long bytes)
        {
            if (bytes < 0 && bytes != UserProcess.RLIM_INFINITY)
            {
                throw new IllegalArgumentException("memlockBytes=" + bytes + " must be 0 or more, or RLIM_INFINITY");
            }
            memlockBytes = bytes;
            return this;
        }

        /**
         * @param rights what each QP lets its peer do ({@code qp_access_flags}); default every remote right.
         * @return this.
         */
        public Builder qpAccess(final Set<Access> rights)
        {
            qpAccess = Set.copyOf(Objects.requireNonNull(rights, "rights"));
            return this;
        }

        /**
         * @return the fixture, connected.
         * @throws dev.rnicsim.verbs.VerbsException when the devices refuse the setup (a profile without the
         *                                          resources for a PD, a CQ of 256 entries or an RC QP).
         */
        public TestNic start()
        {
            return new TestNic(this);
        }
    }

    // ------------------------------------------------------------------ the objects

    /**
     * @return the fabric: its clock ({@code fabric().clock().nowNs()}) and cost model.
     */
    public SimFabric fabric()
    {
        return fabric;
    }

    /**
     * @return the devices' profile.
     */
    public DeviceProfile profile()
    {
        return profile;
    }

    /**
     * @param side a side.
     * @return its device.
     */
    public SimDevice device(final Side side)
    {
        return devices.get(side);
    }

    /**
     * @param side a side.
     * @return its context (the device opened by its process).
     */
    public SimContext context(final Side side)
    {
        return contexts.get(side);
    }

    /**
     * @param side a side.
     * @return its process.
     */
    public UserProcess process(final Side side)
    {
        return contexts.get(side).process();
    }

    /**
     * @param side a side.
     * @return its process's memory as the verbs API sees it (allocate, free, read, write, onUnmap hooks).
     */
    public HostMemory memory(final Side side)
    {
        return contexts.get(side).memory();
    }

    /**
     * @param side a side.
     * @return its protection domain.
     */
    public ProtectionDomain pd(final Side side)
    {
        return pds.get(side);
    }

    /**
     * @param side a side.
     * @return its completion queue (send and receive completions of its QP).
     */
    public CompletionQueue cq(final Side side)
    {
        return cqs.get(side);
    }

    /**
     * @param side a side.
     * @return its QP now (a new one after each {@link #reconnect()}).
     * @throws IllegalStateException when the profile's driver has no RC QPs (EFA), so the fixture has none.
     */
    public QueuePair qp(final Side side)
    {
        final QueuePair qp = qps.get(side);
        if (qp == null)
        {
            final dev.rnicsim.simnic.DriverTraits t = profile.traits();
            throw new IllegalStateException("no QP on profile " + profile.name() + ": the " + t.driver()
                + " driver's create_qp accepts " + t.qpTypes() + " QPs only, an RC QP is EOPNOTSUPP (" + t.source()
                + "), and this fixture connects RC QPs; registrations work, work requests need a profile with RC QPs"
                + " (connectx5, rxe, ...)");
        }
        return qp;
    }

    /**
     * @return how many times the QP pair was replaced after an error.
     */
    public int reconnects()
    {
        return reconnects;
    }

    /**
     * @return the receive completion of the last {@link #send}, or null.
     */
    public WorkCompletion lastReceive()
    {
        return lastReceive;
    }

    // ------------------------------------------------------------------ memory

    /**
     * Maps anonymous memory in 4 KiB pages ({@code mmap} + MADV_NOHUGEPAGE).
     *
     * @param side        whose process.
     * @param lengthBytes bytes, more than 0 (rounded up to 4 KiB).
     * @return the address of its first byte.
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM, EINVAL as {@link HostMemory#allocate}.
     */
    public long alloc(final Side side, final long lengthBytes)
    {
        return alloc(side, lengthBytes, Backing.BASE_PAGES);
    }

    /**
     * @param side        whose process.
     * @param lengthBytes bytes, more than 0 (rounded up to the backing's page).
     * @param backing     what backs it (hugetlb pages need a pool: {@link Builder#host}).
     * @return the address of its first byte.
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM, EINVAL as {@link HostMemory#allocate}.
     */
    public long alloc(final Side side, final long lengthBytes, final Backing backing)
    {
        check();
        return memory(side).allocate(lengthBytes, backing);
    }

    /**
     * {@code munmap}: the process's unmap hooks run first (a registration cache's invalidation); pages still
     * pinned by an MR stay allocated to it, so the MR keeps reaching them.
     *
     * @param side        whose process.
     * @param address     first byte, 4 KiB aligned.
     * @param lengthBytes bytes (rounded up to the page).
     * @throws dev.rnicsim.verbs.VerbsException EINVAL for an unaligned range.
     */
    public void munmap(final Side side, final long address, final long lengthBytes)
    {
        check();
        memory(side).free(address, lengthBytes);
    }

    /**
     * Maps fresh 4 KiB pages at a fixed address ({@code mmap(address, ..., MAP_FIXED_NOREPLACE)} +
     * MADV_NOHUGEPAGE), as an allocator that hands out a freed address again does.
     *
     * @param side        whose process.
     * @param address     first byte, 4 KiB aligned.
     * @param lengthBytes bytes (rounded up to 4 KiB).
     * @return the address (the same).
     * @throws dev.rnicsim.verbs.VerbsException EEXIST when part of the range is mapped, EINVAL for an unaligned
     *                                          address, EPERM below vm.mmap_min_addr, ENOMEM when vm.max_map_count
     *                                          would be passed.
     */
    public long mmapFixed(final Side side, final long address, final long lengthBytes)
    {
        check();
        final UserProcess p = process(side);
        try
        {
            final long at = p.mmap(address, lengthBytes, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS,
                MapFlag.FIXED_NOREPLACE));
            p.madvise(at, (lengthBytes + 4095) & ~4095L, Madvice.NOHUGEPAGE);
            return at;
        }
        catch (final KernelException e)
        {
            throw new dev.rnicsim.verbs.VerbsException("mmap", e.errno().value(), e.detail(), e);
        }
    }

    /**
     * munmap, then mmap of fresh pages at the same address: free and malloc giving the buffer back, the case in
     * which a registration cache without memory hooks hands out an MR over the old pages.
     *
     * @param side        whose process.
     * @param address     first byte, 4 KiB aligned.
     * @param lengthBytes bytes.
     * @return the address (the same).
     * @throws dev.rnicsim.verbs.VerbsException as {@link #munmap} and {@link #mmapFixed}.
     */
    public long remap(final Side side, final long address, final long lengthBytes)
    {
        munmap(side, address, lengthBytes);
        return mmapFixed(side, address, lengthBytes);
    }

    /**
     * A CPU store (faults pages in; after a fork on a LEGACY host, a write to a shared page copies it).
     *
     * @param side    whose process.
     * @param address first byte.
     * @param data    bytes.
     * @throws dev.rnicsim.verbs.VerbsException EFAULT when not mapped writable.
     */
    public void cpuWrite(final Side side, final long address, final byte[] data)
    {
        check();
        memory(side).write(address, data);
    }

    /**
     * A CPU load.
     *
     * @param side        whose process.
     * @param address     first byte.
     * @param lengthBytes bytes.
     * @return the bytes the process sees there.
     * @throws dev.rnicsim.verbs.VerbsException EFAULT when not mapped readable.
     */
    public byte[] cpuRead(final Side side, final long address, final int lengthBytes)
    {
        check();
        return memory(side).read(address, lengthBytes);
    }

    /**
     * fork(2) of a side's process, copy-on-write as the builder's {@link Builder#forkBehaviour} says. The child
     * opens no device; it exits when this fixture closes, or earlier by {@link UserProcess#exit()}.
     *
     * @param side whose process.
     * @return the child.
     * @throws dev.rnicsim.verbs.VerbsException ENOMEM when memory runs out copying pinned pages.
     */
    public UserProcess fork(final Side side)
    {
        check();
        try
        {
            final UserProcess child = process(side).fork("child_" + side.tag() + (children.size() + 1));
            children.add(child);
            return child;
        }
        catch (final KernelException e)
        {
            throw new dev.rnicsim.verbs.VerbsException("fork", e.errno().value(), e.detail(), e);
        }
    }

    /**
     * Moves the simulated clock on (what the application does between verbs).
     *
     * @param durationNs nanoseconds, 0 or more.
     * @throws IllegalArgumentException for a negative duration.
     */
    public void advanceClock(final long durationNs)
    {
        if (durationNs < 0)
        {
            throw new IllegalArgumentException("durationNs=" + durationNs + " must be 0 or more");
        }
        fabric.clock().advance(durationNs);
    }

    // ------------------------------------------------------------------ registration

    /**
     * {@code ibv_reg_mr}.
     *
     * @param side        whose PD.
     * @param address     first byte.
     * @param lengthBytes bytes, at least 1.
     * @param access      rights (none: local read only).
     * @return the MR.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL (REMOTE_WRITE/ATOMIC without LOCAL_WRITE, length 0, ...),
     *                                          EFAULT (not mapped), ENOMEM (RLIMIT_MEMLOCK, MTT), as the device says.
     */
    public MemoryRegion reg(final Side side, final long address, final long lengthBytes, final Set<Access> access)
    {
        check();
        return pd(side).regMr(address, lengthBytes, access);
    }

    /**
     * @param side        whose PD.
     * @param address     first byte.
     * @param lengthBytes bytes, at least 1.
     * @param access      rights.
     * @return the MR.
     * @throws dev.rnicsim.verbs.VerbsException as {@link #reg(Side, long, long, Set)}.
     */
    public MemoryRegion reg(final Side side, final long address, final long lengthBytes, final Access... access)
    {
        final EnumSet<Access> set = EnumSet.noneOf(Access.class);
        set.addAll(List.of(access));
        return reg(side, address, lengthBytes, set);
    }

    /**
     * {@code ibv_dereg_mr}; idempotent.
     *
     * @param mr the MR.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL while a memory window is bound to it.
     */
    public void dereg(final MemoryRegion mr)
    {
        mr.close();
    }

    // ------------------------------------------------------------------ work requests

    /**
     * @param wc a completion (or null when none came).
     * @return wc, when it is a success.
     * @throws AssertionError naming the status, the mlx5 syndrome and the diagnosis (which check failed, the key's
     * MPT index and what it holds now, the lines or calls involved) when it is not.
     */
    public static WorkCompletion assertOk(final WorkCompletion wc)
    {
        if (wc == null)
        {
            throw new AssertionError("expected IBV_WC_SUCCESS, but no completion came");
        }
        if (!wc.ok())
        {
            throw new AssertionError("expected IBV_WC_SUCCESS for wr_id " + wc.wrId() + ", got " + wc.status().cName()
                + " (vendor_err 0x" + Integer.toHexString(wc.vendorErr()) + ")" + (wc.diagnosis() == null ? ""
                : ": " + wc.diagnosis().text().replace("\n", "\n  ")));
        }
        return wc;
    }

    /**
     * RDMA WRITE from side A to side B, waiting for its completion.
     *
     * @param local       an MR of side A holding the data.
     * @param localAddr   first byte to send (an address of the MR; an offset for a ZERO_BASED MR).
     * @param lengthBytes bytes, 0 to 2^32-1.
     * @param remoteAddr  the target address on side B.
     * @param rkey        the target's rkey.
     * @return the completion (its status says whether the device accepted it).
     * @throws dev.rnicsim.verbs.PostException when the post itself is refused.
     */
    public WorkCompletion write(final MemoryRegion local, final long localAddr, final long lengthBytes,
        final long remoteAddr, final int rkey)
    {
        return post(Side.A, SendWr.write(nextWrId(), List.of(new Sge(localAddr, lengthBytes, local.lkey())),
            remoteAddr, rkey));
    }

    /**
     * RDMA READ by side A of side B's memory, waiting for its completion.
     *
     * @param local       an MR of side A with LOCAL_WRITE, receiving the data.
     * @param localAddr   where the data goes.
     * @param lengthBytes bytes.
     * @param remoteAddr  the source address on side B.
     * @param rkey        its rkey.
     * @return the completion.
     * @throws dev.rnicsim.verbs.PostException when the post itself is refused.
     */
    public WorkCompletion read(final MemoryRegion local, final long localAddr, final long lengthBytes,
        final long remoteAddr, final int rkey)
    {
        return post(Side.A, SendWr.read(nextWrId(), List.of(new Sge(localAddr, lengthBytes, local.lkey())),
            remoteAddr, rkey));
    }

    /**
     * SEND from side A into a receive posted on side B first; the receive's completion is then
     * {@link #lastReceive()}.
     *
     * @param local       an MR of side A holding the data.
     * @param localAddr   first byte to send.
     * @param lengthBytes bytes.
     * @param recv        an MR of side B with LOCAL_WRITE.
     * @param recvAddr    where the data goes.
     * @param recvLength  bytes the receive offers.
     * @return the sender's completion.
     * @throws dev.rnicsim.verbs.PostException when a post is refused.
     */
    public WorkCompletion send(final MemoryRegion local, final long localAddr, final long lengthBytes,
        final MemoryRegion recv, final long recvAddr, final long recvLength)
    {
        ensureConnected();
        final long recvId = nextWrId();
        qp(Side.B).postRecv(RecvWr.of(recvId, new Sge(recvAddr, recvLength, recv.lkey())));
        final WorkCompletion wc = post(Side.A, SendWr.send(nextWrId(), List.of(new Sge(localAddr, lengthBytes,
            local.lkey()))));
        lastReceive = null;
        for (final WorkCompletion c : cq(Side.B).poll(256))
        {
            if (c.wrId() == recvId)
            {
                lastReceive = c;
            }
        }
        return wc;
    }

    /**
     * Posts any work request on a side's QP and waits for its completion (a new pair first if the QPs are in
     * the error state). Work requests execute when posted; one that waits (a SEND before the peer posted a
     * receive) has no completion yet. Other completions polled from the side's CQ meanwhile are dropped.
     *
     * @param side the requester.
     * @param wr   the work request.
     * @return its completion, or null when it has none (unsignaled and successful, or still waiting).
     * @throws dev.rnicsim.verbs.PostException when the post is refused.
     */
    public WorkCompletion post(final Side side, final SendWr wr)
    {
        check();
        ensureConnected();
        qp(side).postSend(wr);
        WorkCompletion found = null;
        for (final WorkCompletion c : cq(side).poll(256))
        {
            if (c.wrId() == wr.wrId() && c.qpNum() == qp(side).qpNum())
            {
                found = c;
            }
            else
            {
                final List<WorkCompletion> kept = polledMeanwhile.get(side);
                if (kept.size() >= MAX_KEPT_COMPLETIONS)
                {
                    kept.remove(0);
                }
                kept.add(c);
            }
        }
        return found;
    }

    /**
     * RDMA WRITE from side A to side B, queued: the call returns once the WQE is on the send queue; the packets move
     * on {@link #progress} or when a CQ is polled (docs/async.md). A new QP pair is connected first if the QPs left
     * RTS, which drops what the old pair had queued.
     *
     * @param local       an MR of side A holding the data.
     * @param localAddr   first byte to send.
     * @param lengthBytes bytes.
     * @param remoteAddr  the target address on side B.
     * @param rkey        the target's rkey.
     * @return the work request's id.
     * @throws dev.rnicsim.verbs.PostException when the post itself is refused.
     */
    public long queueWrite(final MemoryRegion local, final long localAddr, final long lengthBytes,
        final long remoteAddr, final int rkey)
    {
        check();
        ensureConnected();
        final long id = nextWrId();
        qp(Side.A).postSend(SendWr.write(id, List.of(new Sge(localAddr, lengthBytes, local.lkey())), remoteAddr,
            rkey));
        return id;
    }

    /**
     * exit(2) of the youngest child forked by {@link #fork} that still runs: its copy-on-write pages go back.
     *
     * @return true when a child exited, false when none was running.
     */
    public boolean exitChild()
    {
        check();
        for (int i = children.size() - 1; i >= 0; i--)
        {
            final UserProcess child = children.get(i);
            if (!child.exited())
            {
                child.exit();
                return true;
            }
        }
        return false;
    }

    /**
     * Lets the devices work: moves up to {@code maxPackets} packets of the work requests in flight.
     *
     * @param maxPackets most packets.
     * @return the packets moved.
     */
    public int progress(final int maxPackets)
    {
        check();
        return fabric.progress(maxPackets);
    }

    /**
     * Lets the devices finish everything in flight and takes a side's completions.
     *
     * @param side whose CQ.
     * @return its completions, oldest first.
     */
    public List<WorkCompletion> drain(final Side side)
    {
        check();
        fabric.progressAll();
        final List<WorkCompletion> out = new java.util.ArrayList<>(polledMeanwhile.get(side));
        polledMeanwhile.get(side).clear();
        out.addAll(cq(side).poll(Integer.MAX_VALUE));
        return out;
    }

    /**
     * @return a new work-request id (ids the helpers use count from 1).
     */
    public long nextWrId()
    {
        return nextWrId++;
    }

    /**
     * Replaces the QP pair with a new connected one when either QP left RTS (after a failed work request).
     */
    public void ensureConnected()
    {
        check();
        if (qp(Side.A).state() != QpState.RTS || qp(Side.B).state() != QpState.RTS)
        {
            reconnect();
        }
    }

    /**
     * Destroys both QPs and connects a new pair (completions waiting in the CQs are dropped).
     */
    public void reconnect()
    {
        check();
        qp(Side.A);
        for (final Side s : Side.values())
        {
            qps.get(s).close();
            cqs.get(s).poll(Integer.MAX_VALUE);
        }
        reconnects++;
        connectPair();
    }

    private void connectPair()
    {
        if (!profile.traits().acceptsQpType(dev.rnicsim.verbs.QpType.RC))
        {
            return;
        }
        for (final Side s : Side.values())
        {
            // default capacities, cut to the device's max_sge (EFA has 2, a generic device 1)
            final int sge = Math.min(dev.rnicsim.verbs.QpCap.defaults().maxSendSge(), profile.attributes().maxSge());
            final dev.rnicsim.verbs.QpCap d = dev.rnicsim.verbs.QpCap.defaults();
            qps.put(s, pds.get(s).createQp(new QpInitAttr(cqs.get(s), cqs.get(s), dev.rnicsim.verbs.QpType.RC,
                new dev.rnicsim.verbs.QpCap(d.maxSendWr(), d.maxRecvWr(), sge, sge, d.maxInlineDataBytes()), false)));
        }
        qps.get(Side.A).connect(qps.get(Side.B).address(), qpAccess);
        qps.get(Side.B).connect(qps.get(Side.A).address(), qpAccess);
    }

    // ------------------------------------------------------------------ strict mode and life cycle

    /**
     * Strict mode on both devices (a remote access is observed on the requester's device and checked against the
     * responder's registrations, so both are watched). {@link #close()} closes the contexts first, so that MRs
     * still registered then are reported as LEAKED_MR, and then closes every strict mode this method returned,
     * throwing their violations: let the fixture close it rather than closing it first (closing it detaches it,
     * and a leak would then go unseen).
     *
     * @return a new strict mode, watching from now on.
     */
    public StrictMode strict()
    {
        check();
        final StrictMode s = StrictMode.attach(devices.get(Side.A), devices.get(Side.B));
        stricts.add(s);
        return s;
    }

    /**
     * The lines of a scenario script that build the same fixture (hosts {@code a} and {@code b}, devices
     * {@code nic_a} and {@code nic_b}, contexts {@code app_a} and {@code app_b}, {@code pd_a}, {@code cq_a},
     * {@code qp_a}, ...): the names the actions of {@link VerbsActions} print.
     *
     * @return the script text, one statement a line.
     */
    public String script()
    {
        final StringBuilder sb = new StringBuilder();
        final String memlock = memlockBytes == UserProcess.RLIM_INFINITY ? "unlimited" : Long.toString(memlockBytes);
        for (final Side s : Side.values())
        {
            sb.append("host ").append(s.tag()).append(" memlock=").append(memlock).append(" fork=")
                .append(hostConfig.forkBehaviour().name().toLowerCase(java.util.Locale.ROOT)).append('\n');
        }
        for (final Side s : Side.values())
        {
            sb.append("device nic_").append(s.tag()).append(' ').append(s.tag()).append(" profile=")
                .append(profile.name()).append('\n');
        }
        for (final String verb : List.of("open app_%s nic_%s", "pd pd_%s app_%s", "cq cq_%s app_%s 256",
            "qp qp_%s pd_%s cq_%s"))
        {
            for (final Side s : Side.values())
            {
                sb.append(verb.replace("%s", s.tag())).append('\n');
            }
        }
        sb.append("connect qp_a qp_b access=").append(VerbsActions.accessWords(qpAccess)).append('\n');
        return sb.toString();
    }

    /**
     * Closes both contexts (which deregisters what they still hold: strict mode reports those MRs as LEAKED_MR),
     * ends the forked children, then closes the strict modes {@link #strict()} returned; idempotent.
     *
     * @throws AssertionError listing every violation of those strict modes, when there is one.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        for (final Side s : List.of(Side.B, Side.A))
        {
            try
            {
                contexts.get(s).close();
            }
            catch (final RuntimeException e)
            {
                failure = failure == null ? e : suppress(failure, e);
            }
        }
        for (final UserProcess child : children)
        {
            child.exit();
        }
        AssertionError violations = null;
        for (final StrictMode s : stricts)
        {
            try
            {
                s.close();
            }
            catch (final AssertionError e)
            {
                if (violations == null)
                {
                    violations = e;
                }
                else
                {
                    violations.addSuppressed(e);
                }
            }
        }
        if (violations != null)
        {
            if (failure != null)
            {
                violations.addSuppressed(failure);
            }
            throw violations;
        }
        if (failure != null)
        {
            throw failure;
        }
    }

    /**
     * @return true once {@link #close()} ran.
     */
    public boolean isClosed()
    {
        return closed;
    }

    private static RuntimeException suppress(final RuntimeException first, final RuntimeException next)
    {
        first.addSuppressed(next);
        return first;
    }

    private void check()
    {
        if (closed)
        {
            throw new IllegalStateException("the TestNic is closed");
        }
    }

    @Override
    public String toString()
    {
        return "TestNic[" + profile.name() + ", fork=" + hostConfig.forkBehaviour() + ", qp_a=0x"
            + Integer.toHexString(qp(Side.A).qpNum()) + ", reconnects=" + reconnects + "]";
    }
}
