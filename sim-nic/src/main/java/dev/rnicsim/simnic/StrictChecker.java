package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.StrictKeyLedger.Issued;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The checks of strict mode, shared by the testkit's {@code StrictMode} (as test failures with stack traces) and the
 * scripts' {@code strict on} (as warning lines naming script lines). Watches devices through {@link DeviceObserver}
 * and records a {@link StrictWarning} for each hazard of {@link StrictWarning.Kind}:
 * <ul>
 *   <li>STALE_LKEY / STALE_RKEY: a work request names a deregistered key (the device answers LOC_PROT_ERR or
 *       REM_ACCESS_ERR; the warning says which MR, registered and deregistered where);</li>
 *   <li>STALE_KEY_REUSED: a key issued again to a new MR after its first MR was deregistered is used: a holder of
 *       the old key now reaches the new MR (mlx5's mkey cache re-issues keys; an 8-bit variant wraps after 256
 *       reuses; {@link StrictKeyLedger} keeps the chain);</li>
 *   <li>STALE_MAPPING: a DMA reached frames that no longer back the MR's addresses in its process (munmap and mmap
 *       again, COW after fork, a page moved): a pinned MR keeps its old frames (UCX's memory hooks exist for
 *       this);</li>
 *   <li>LEAKED_MR: MRs still registered when their context closes or process exits;</li>
 *   <li>UNUSED_MR: an MR no DMA reached before it was deregistered, its context closed or {@link #finish()};</li>
 *   <li>HOT_REGISTRATION: more registrations per simulated second than allowed over the last {@link #HOT_WINDOW};</li>
 *   <li>FLAG_BEFORE_DATA: a {@link FlagWatch} saw its flag before the data written with it had all landed;</li>
 *   <li>KEY_RETIRED_IN_FLIGHT: a key was retired (dereg, dealloc_mw, LOCAL_INV, a rebind or unbind) while a message
 *       using it was in flight ({@link DeviceObserver#retiredInFlight}): what happens then is the driver's (mlx5
 *       NAKs the next packet and the target keeps partial data; rxe's dereg waits for the message), and the program
 *       raced its own work requests either way.</li>
 * </ul>
 * Checks cost nothing while no checker is attached (the data path calls observers only when there are some). Not
 * thread safe (nor is the simulator).
 */
public final class StrictChecker
{
    /** Registrations over which the rate is measured. */
    public static final int HOT_WINDOW = 100;

    /** A flag watch and where it was started. */
    private record Watched(FlagWatch watch, String what, String line)
    {
    }

    private final boolean captureStacks;
    private final List<SimDevice> devices = new ArrayList<>();
    private final List<StrictWarning> warnings = new ArrayList<>();
    private final StrictKeyLedger ledger = new StrictKeyLedger();
    private final Map<SimDevice, Deque<Long>> recent = new IdentityHashMap<>();
    private final Map<SimDevice, Observer> observers = new IdentityHashMap<>();
    private final List<Watched> watches = new ArrayList<>();
    private final Set<StrictWarning.Kind> enabled = EnumSet.allOf(StrictWarning.Kind.class);
    private long maxRegistrationsPerSecond = Long.MAX_VALUE;

    /**
     * @param captureStacks true to record the stack of every registration and deregistration (for test reports);
     *                      false to name only {@link SimFabric#origin()} lines (scripts).
     */
    public StrictChecker(final boolean captureStacks)
    {
        this.captureStacks = captureStacks;
    }

    /**
     * @param device a device to watch from now on (again a no-op when watched already). Attach every device a
     *               workload uses: a work request is observed on the requester's device and its remote side checked
     *               against what the responder's device issued.
     * @return this.
     */
    public StrictChecker attach(final SimDevice device)
    {
        if (!observers.containsKey(device))
        {
            final Observer o = new Observer(device);
            observers.put(device, o);
            devices.add(device);
            ledger.attach(device);
            recent.put(device, new ArrayDeque<>());
            device.addObserver(o);
        }
        return this;
    }

    /**
     * @param device a device.
     * @return true when it is watched.
     */
    public boolean watches(final SimDevice device)
    {
        return observers.containsKey(device);
    }

    /**
     * Stops watching every device (what was recorded stays).
     */
    public void detachAll()
    {
        for (final SimDevice d : devices)
        {
            d.removeObserver(observers.get(d));
        }
        observers.clear();
        devices.clear();
    }

    /**
     * @param perSecond the most registrations per simulated second on one device, measured over {@value #HOT_WINDOW}
     *                  registrations, before a HOT_REGISTRATION.
     * @return this.
     * @throws IllegalArgumentException when perSecond is below 1.
     */
    public StrictChecker maxRegistrationsPerSecond(final long perSecond)
    {
        if (perSecond < 1)
        {
            throw new IllegalArgumentException("perSecond=" + perSecond + " must be 1 or more");
        }
        maxRegistrationsPerSecond = perSecond;
        return this;
    }

    /**
     * @param kinds kinds no longer recorded.
     * @return this.
     */
    public StrictChecker disable(final StrictWarning.Kind... kinds)
    {
        enabled.removeAll(List.of(kinds));
        return this;
    }

    /**
     * @param kinds kinds recorded again.
     * @return this.
     */
    public StrictChecker enable(final StrictWarning.Kind... kinds)
    {
        enabled.addAll(List.of(kinds));
        return this;
    }

    /**
     * @param watch a CPU polling a flag; after every transfer the checker asks it whether it saw the flag before
     *              the data landed.
     * @param what  what to call it in the warning, e.g. {@code watch w1}.
     */
    public void watch(final FlagWatch watch, final String what)
    {
        watches.add(new Watched(watch, what, devices.isEmpty() ? null : devices.get(0).fabric().origin()));
    }

    /**
     * @return the warnings so far, in the order they happened.
     */
    public List<StrictWarning> warnings()
    {
        return List.copyOf(warnings);
    }

    /**
     * Forgets the warnings so far (the watch goes on).
     */
    public void clear()
    {
        warnings.clear();
    }

    /**
     * The end of a run: every MR still registered that no DMA reached is an UNUSED_MR.
     */
    public void finish()
    {
        for (final Issued i : ledger.untouchedLive())
        {
            unused(i.mr, i, "when the run ended", null);
        }
    }

    private void warn(final StrictWarning.Kind kind, final String message, final List<String> lines,
        final Throwable registered, final Throwable released)
    {
        if (enabled.contains(kind))
        {
            final List<String> named = new ArrayList<>();
            for (final String l : lines)
            {
                if (l != null && !named.contains(l))
                {
                    named.add(l);
                }
            }
            warnings.add(new StrictWarning(kind, message, named, registered, released));
        }
    }

    private Throwable stack(final String what)
    {
        return captureStacks ? new Throwable(what) : null;
    }

    static String at(final String line)
    {
        return line == null ? "" : " at " + line;
    }

    private void unused(final SimMr mr, final Issued i, final String when, final String line)
    {
        warn(StrictWarning.Kind.UNUSED_MR, "MR lkey " + hex(mr.lkey()) + " of " + mr.lengthBytes()
            + " bytes at 0x" + Long.toHexString(mr.addr()) + " registered" + at(i == null ? null : i.registeredLine)
            + " saw no DMA " + when + ": its pinning and MTT entries bought nothing (register what the NIC will "
            + "reach, or drop the registration)", List.of(i == null || i.registeredLine == null ? ""
            : i.registeredLine, line == null ? "" : line).stream().filter(s -> !s.isEmpty()).toList(),
            i == null ? null : i.registeredAt, null);
    }

    /** The observer of one device. */
    private final class Observer implements DeviceObserver
    {
        private final SimDevice device;

        Observer(final SimDevice device)
        {
            this.device = device;
        }

        private String line()
        {
            return device.fabric().origin();
        }

        @Override
        public void registered(final SimMr mr)
        {
            rate(ledger.registered(device, mr, line(), stack("registered")));
        }

        private void rate(final Issued i)
        {
            final Deque<Long> times = recent.get(device);
            final long now = device.fabric().clock().nowNs();
            times.addLast(now);
            if (times.size() > HOT_WINDOW)
            {
                times.removeFirst();
            }
            if (times.size() == HOT_WINDOW && maxRegistrationsPerSecond != Long.MAX_VALUE)
            {
                final long spanNs = Math.max(1, now - times.peekFirst());
                final double rate = (HOT_WINDOW - 1) * 1e9 / spanNs;
                if (rate > maxRegistrationsPerSecond)
                {
                    warn(StrictWarning.Kind.HOT_REGISTRATION, String.format(Locale.ROOT, "%d registrations on %s "
                        + "in %.1f us of simulated time: %.0f per second > the %d allowed (register once, outside "
                        + "the request path: a pool or a cache, S26)", HOT_WINDOW, device.name(), spanNs / 1e3, rate,
                        maxRegistrationsPerSecond), i.registeredLine == null ? List.of() : List.of(i.registeredLine),
                        i.registeredAt, null);
                    times.clear();
                }
            }
        }

        @Override
        public void reregistered(final SimMr mr, final int oldLkey)
        {
            ledger.reregistered(device, mr, oldLkey, line(), stack("re-registered"));
        }

        @Override
        public void deregistered(final SimMr mr)
        {
            final String line = line();
            final Issued i = ledger.deregistered(device, mr, line, stack("deregistered"));
            if (!ledger.untouch(mr))
            {
                unused(mr, i, "before it was deregistered" + at(line), line);
            }
        }

        @Override
        public void closing(final SimContext context)
        {
            for (final SimPd pd : context.protectionDomains())
            {
                for (final SimMr mr : pd.memoryRegions())
                {
                    final Issued i = ledger.live(mr);
                    final List<String> lines = new ArrayList<>();
                    if (i != null && i.registeredLine != null)
                    {
                        lines.add(i.registeredLine);
                    }
                    if (line() != null)
                    {
                        lines.add(line());
                    }
                    warn(StrictWarning.Kind.LEAKED_MR, "MR lkey " + hex(mr.lkey()) + " of " + mr.lengthBytes()
                        + " bytes at 0x" + Long.toHexString(mr.addr()) + " of process " + context.process().pid()
                        + (i == null || i.registeredLine == null ? "" : " (registered at " + i.registeredLine + ")")
                        + " is still registered when its "
                        + "context on " + device.name() + " closes" + at(line()) + " (its " + mr.pin().lengthBytes()
                        + " pinned bytes leak until then: S28); deregister it when done", lines,
                        i == null ? null : i.registeredAt, null);
                }
                final List<MemoryRegion> unpinned = new ArrayList<>(pd.odpMemoryRegions());
                unpinned.addAll(pd.peerMemoryRegions());
                for (final MemoryRegion mr : unpinned)
                {
                    warn(StrictWarning.Kind.LEAKED_MR, mr + " of process " + context.process().pid()
                        + " is still registered when its context on " + device.name() + " closes" + at(line())
                        + " (its MPT and MTT entries, and for GPU memory its BAR1 room, leak until then: S28)",
                        line() == null ? List.of() : List.of(line()), null, null);
                }
            }
        }

        @Override
        public void retiredInFlight(final String retirement, final int key, final InflightMessage message)
        {
            final SendWr wr = message.wr();
            final boolean remote = message.responderDevice() == device && key >>> 8 == message.rkey() >>> 8;
            if (message.packetsPlaced() > 0)
            {
                // The packets placed so far were DMA from the gather list and into the target: no MR of theirs was
                // unused, whichever key is retired.
                firstPacketPlaced(message);
                final SimMr mr = device.memoryRegion(key);
                if (mr != null)
                {
                    ledger.touch(mr);
                }
            }
            final String effect = !remote ? "its next packet fails with a local protection error at the requester"
                : device.profile().follows(ProviderRule.RESPONDER_HOLDS_KEY_REFERENCE) ? "the responder holds a "
                + "reference on the key (rxe check_rkey), so the retirement waits until the message is done"
                : "the responder NAKs its next packet (IBV_WC_REM_ACCESS_ERR) and the target keeps the packets "
                + "placed so far";
            warn(StrictWarning.Kind.KEY_RETIRED_IN_FLIGHT, retirement + at(line()) + " retired "
                + (remote ? "rkey " : "lkey ") + hex(key) + " on " + device.name() + " while " + wr.opcode()
                + " wr_id " + Long.toUnsignedString(wr.wrId()) + (message.postSite() == null ? "" : " (posted at " + message.postSite()
                + ")") + " of QP 0x" + Integer.toHexString(message.requester().qpNum()) + " on "
                + message.requester().simDevice().name() + " was in flight through it (" + message.packetsPlaced()
                + " of " + message.packetCount() + " packets placed): " + effect + "; retire a key only after every "
                + "work request using it has completed (poll its completion first)", lines(message.postSite(),
                line()), null, stack("retired"));
        }

        @Override
        public void failed(final SimQp qp, final SendWr wr, final DmaResult result)
        {
            final KeyCheck check = result.keyCheck();
            if (check != KeyCheck.NO_SUCH_INDEX && check != KeyCheck.VARIANT_MISMATCH)
            {
                return;
            }
            final String posted = qp.requester.postSite(wr);
            // Under a manual engine the work request fails at a later line than the one that posted it.
            final String where = posted == null || posted.equals(line()) ? at(line()) : " posted at " + posted;
            if (result.requester() == DmaStatus.REM_ACCESS_ERR && wr.opcode().isRdma())
            {
                final SimDevice peer = qp.remoteDevice();
                final Issued i = peer == null ? null : ledger.issued(peer, wr.rkey());
                if (i != null && i.released())
                {
                    warn(StrictWarning.Kind.STALE_RKEY, wr.opcode() + " wr_id " + Long.toUnsignedString(wr.wrId()) + where
                        + " used rkey " + hex(wr.rkey()) + " of an MR of " + i.mr.lengthBytes() + " bytes at 0x"
                        + Long.toHexString(i.mr.addr()) + " on " + peer.name() + " that was deregistered"
                        + StrictKeyLedger.history(i) + ": revoke rkeys at the "
                        + "peer before deregistering", lines(i.registeredLine, i.releasedLine, posted, line()),
                        i.registeredAt, i.releasedAt);
                }
                return;
            }
            for (int s = 0; s < wr.sgList().size(); s++)
            {
                final Sge sge = wr.sgList().get(s);
                final Issued i = ledger.issued(device, sge.lkey());
                if (i != null && i.released() && device.memoryRegion(sge.lkey()) == null)
                {
                    warn(StrictWarning.Kind.STALE_LKEY, wr.opcode() + " wr_id " + Long.toUnsignedString(wr.wrId()) + where + " sge[" + s
                        + "] used lkey " + hex(sge.lkey()) + " of an MR of " + i.mr.lengthBytes()
                        + " bytes at 0x" + Long.toHexString(i.mr.addr()) + " of process "
                        + i.mr.pin().process().pid() + " on " + device.name() + " that was deregistered"
                        + StrictKeyLedger.history(i) + ": use the lkey of a live MR (re-register, or "
                        + "keep the MR until its last work request completes)",
                        lines(i.registeredLine, i.releasedLine, posted, line()), i.registeredAt, i.releasedAt);
                }
            }
        }

        @Override
        public void transferred(final SimQp qp, final SendWr wr, final SimQp peer, final RecvWr recv)
        {
            final WrOpcode op = wr.opcode();
            long left = op.isAtomic() || op == WrOpcode.ATOMIC_WRITE ? Long.BYTES : wr.totalBytes();
            for (final Sge s : wr.sgList())
            {
                check(device, s.lkey(), s.addr(), op.isAtomic() ? Long.BYTES : s.lengthBytes(), wr, "local");
            }
            if ((op.isRdma() || op.isAtomic()) && left > 0)
            {
                check(peer.simDevice(), wr.rkey(), wr.remoteAddr(), left, wr, "remote");
            }
            if (recv != null)
            {
                // A UD receive buffer takes the 40-byte GRH before the payload (ibv_post_recv(3), IBA 9.8.3).
                left += qp.type == QpType.UD ? Datagrams.GRH_BYTES : 0;
                for (final Sge s : recv.sgList())
                {
                    if (left <= 0)
                    {
                        break;
                    }
                    final long n = Math.min(left, s.lengthBytes());
                    check(peer.simDevice(), s.lkey(), s.addr(), n, wr, "receive");
                    left -= n;
                }
            }
            flags(wr);
        }

        private void flags(final SendWr wr)
        {
            for (final java.util.Iterator<Watched> it = watches.iterator(); it.hasNext();)
            {
                final Watched w = it.next();
                if (w.watch().torn())
                {
                    it.remove();
                    warn(StrictWarning.Kind.FLAG_BEFORE_DATA, w.what() + at(w.line()) + " saw its flag set after "
                        + w.watch().placementsBeforeFlag() + " placed chunk(s) and read data that had not all landed "
                        + "(" + wr.opcode() + " wr_id " + Long.toUnsignedString(wr.wrId()) + at(line()) + "): with relaxed ordering a later "
                        + "write may land first; wait for the completion (or write the flag in a separate, fenced "
                        + "work request) before reading the data", lines(w.line(), line()), null, null);
                }
            }
        }

        @Override
        public void firstPacketPlaced(final InflightMessage message)
        {
            final SendWr wr = message.wr();
            final SimDevice requesterDevice = message.requester().simDevice();
            for (final Sge s : wr.sgList())
            {
                touch(requesterDevice, s.lkey());
            }
            if (wr.opcode().isRdma() || wr.opcode().isAtomic())
            {
                touch(message.responderDevice(), message.rkey());
            }
        }

        /** Counts DMA through a key of owner: the MR it names, or the MR its memory window is bound to. */
        private void touch(final SimDevice owner, final int key)
        {
            final SimMr mr = owner.memoryRegion(key);
            if (mr != null && (mr.lkey() == key || mr.rkey() == key))
            {
                ledger.touch(mr);
                return;
            }
            final SimMw mw = owner.memoryWindow(key);
            if (mw != null && mw.boundMr() != null)
            {
                ledger.touch(mw.boundMr());
            }
        }

        private void check(final SimDevice owner, final int key, final long addr, final long length,
            final SendWr wr, final String side)
        {
            if (length <= 0)
            {
                return;
            }
            SimMr mr = owner.memoryRegion(key);
            long mrAddr = addr;
            if (mr == null || mr.lkey() != key && mr.rkey() != key)
            {
                final SimMw mw = owner.memoryWindow(key);
                if (mw == null || mw.boundMr() == null)
                {
                    return;
                }
                mr = mw.boundMr();
                mrAddr = mw.access().contains(Access.ZERO_BASED) ? mw.addr() + addr : addr;
            }
            ledger.touch(mr);
            final Issued i = ledger.issued(owner, key);
            if (i != null && i.mr == mr && i.previous != null && !i.reuseReported)
            {
                i.reuseReported = true;
                final Issued p = i.previous;
                warn(StrictWarning.Kind.STALE_KEY_REUSED, wr.opcode() + " wr_id " + Long.toUnsignedString(wr.wrId()) + at(line()) + " ("
                    + side + ") used key " + hex(key) + ", which validated against the MR of "
                    + mr.lengthBytes() + " bytes at 0x" + Long.toHexString(mr.addr()) + " registered"
                    + at(i.registeredLine) + "; the same key named the MR of " + p.mr.lengthBytes() + " bytes at 0x"
                    + Long.toHexString(p.mr.addr()) + " registered" + at(p.registeredLine) + " and deregistered"
                    + at(p.releasedLine) + ": whoever still holds it from then reaches the new MR's memory ("
                    + owner.profile().variantPolicy() + " keys on " + owner.name() + ")",
                    lines(p.registeredLine, p.releasedLine, i.registeredLine, line()), i.registeredAt, p.releasedAt);
            }
            mapping(mr, key, mrAddr, length, wr, side);
        }

        /** The frames a transfer reached through a key must be the ones backing the MR's addresses now. */
        private void mapping(final SimMr mr, final int key, final long mrAddr, final long length, final SendWr wr,
            final String side)
        {
            final long va = mr.access().contains(Access.ZERO_BASED) ? mr.addr() + mrAddr : mr.addr() + (mrAddr
                - mr.iova());
            final PinnedPages pin = mr.pin();
            for (long page = va & ~4095L; page < va + length; page += 4096)
            {
                final long pinned = PinnedFrames.frameAt(pin, page);
                final long now = pin.process().translate(page);
                final long nowFrame = now < 0 ? -1 : now & ~4095L;
                if (pinned >= 0 && pinned != nowFrame)
                {
                    final Issued i = ledger.live(mr);
                    final UserProcess forked = CowAfterFork.child(pin.process(), page, pinned);
                    warn(StrictWarning.Kind.STALE_MAPPING, wr.opcode() + " wr_id " + Long.toUnsignedString(wr.wrId()) + at(line()) + " ("
                        + side + ", key " + hex(key) + ") reached frame 0x" + Long.toHexString(pinned)
                        + " pinned for VA 0x" + Long.toHexString(page) + " of process " + pin.process().pid()
                        + " by the MR registered" + at(i == null ? null : i.registeredLine) + ", but that VA is "
                        + (nowFrame >= 0 ? "now backed by frame 0x" + Long.toHexString(nowFrame)
                        : pin.process().vmaAt(page) == null ? "no longer mapped"
                        : "mapped again without a page yet (the next touch gets a new one)")
                        + (forked != null ? CowAfterFork.diagnosis(forked) : ": the MR outlived its memory (munmap and mmap "
                        + "again, or a COW after fork); deregister or invalidate it when the memory is released"),
                        lines(i == null ? null : i.registeredLine,
                        line()), i == null ? null : i.registeredAt, null);
                    return;
                }
            }
        }
    }

    private static String hex(final int key)
    {
        return "0x" + Integer.toHexString(key);
    }

    private static List<String> lines(final String... lines)
    {
        final List<String> out = new ArrayList<>();
        for (final String l : lines)
        {
            if (l != null && !l.isEmpty())
            {
                out.add(l);
            }
        }
        return out;
    }
}
