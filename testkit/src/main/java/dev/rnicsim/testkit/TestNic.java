package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
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
 *
 * <p>The fixture's parts: {@link FixtureSides} (each side's host, device, process, context, PD and CQ, and the hosts'
 * memory and clock), {@link QpPair} (the connected QPs), {@link PostHelpers} (posting and polling),
 * {@link StrictModes} and {@link FixtureScript}.
 */
public final class TestNic extends FixtureSides implements AutoCloseable
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

    /** Entries of each side's CQ. */
    static final int CQ_ENTRIES = 256;

    private final Set<Access> qpAccess;
    private final DmaInvariant dmaInvariant;
    private final StrictModes stricts;
    private final QpPair pair;
    private final PostHelpers posting;

    private TestNic(final Builder b)
    {
        super(b.profile, b.host.toBuilder().forkBehaviour(b.fork).build(), b.memlockBytes, CQ_ENTRIES);
        qpAccess = b.qpAccess;
        dmaInvariant = DmaInvariant.attach(device(Side.A), device(Side.B));
        stricts = new StrictModes(device(Side.A), device(Side.B));
        pair = new QpPair(b.profile, qpAccess, pdsBySide(), cqsBySide());
        posting = new PostHelpers(fabric(), pair, cqsBySide());
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

    /**
     * @param side a side.
     * @return its QP now (a new one after each {@link #reconnect()}).
     * @throws IllegalStateException when the profile's driver has no RC QPs (EFA), so the fixture has none.
     */
    public QueuePair qp(final Side side)
    {
        return pair.qp(side);
    }

    /**
     * @return how many times the QP pair was replaced after an error.
     */
    public int reconnects()
    {
        return pair.reconnects();
    }

    /**
     * @return the receive completion of the last {@link #send}, or null.
     */
    public WorkCompletion lastReceive()
    {
        return posting.lastReceive();
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
        check();
        return posting.send(local, localAddr, lengthBytes, recv, recvAddr, recvLength);
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
        return posting.post(side, wr);
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
        return posting.queueWrite(local, localAddr, lengthBytes, remoteAddr, rkey);
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
        return fabric().progress(maxPackets);
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
        return posting.drain(side);
    }

    /**
     * @return a new work-request id (ids the helpers use count from 1).
     */
    public long nextWrId()
    {
        return posting.nextWrId();
    }

    /**
     * Replaces the QP pair with a new connected one when either QP left RTS (after a failed work request).
     */
    public void ensureConnected()
    {
        check();
        pair.ensureConnected();
    }

    /**
     * Destroys both QPs and connects a new pair (completions waiting in the CQs are dropped).
     */
    public void reconnect()
    {
        check();
        pair.reconnect();
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
        return stricts.attach();
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
        return FixtureScript.of(profile(), hostConfig(), memlockBytes(), qpAccess);
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
        if (isClosed())
        {
            return;
        }
        stricts.closeAll(closeSides());
    }

    @Override
    public String toString()
    {
        return "TestNic[" + profile().name() + ", fork=" + hostConfig().forkBehaviour() + ", qp_a=0x"
            + Integer.toHexString(qp(Side.A).qpNum()) + ", reconnects=" + pair.reconnects() + "]";
    }
}
