package dev.rnicsim.testkit;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.simnic.DeviceObserver;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict mode of simulated devices: watches what they do and records, as {@link Violation}s with the stack traces
 * involved, the misuse that real hardware hides or reports only as an error completion far from its cause:
 * <ul>
 *   <li>{@link Violation.Kind#STALE_LKEY} / {@link Violation.Kind#STALE_RKEY}: a work request names a key that was
 *       deregistered (the device answers IBV_WC_LOC_PROT_ERR / IBV_WC_REM_ACCESS_ERR; strict mode says which MR,
 *       registered and deregistered where);</li>
 *   <li>{@link Violation.Kind#STALE_MAPPING}: a DMA succeeded but reached frames that no longer back the MR's
 *       virtual addresses in its process (the memory was unmapped and mapped again, or a COW after fork gave the
 *       process new pages): a pinned MR keeps its old frames, so remote peers read and write memory the
 *       application no longer sees (the registration-cache bug that UCX's memory hooks exist to prevent);</li>
 *   <li>{@link Violation.Kind#LEAKED_MR}: MRs still registered when their context closes (S28);</li>
 *   <li>{@link Violation.Kind#HOT_REGISTRATION}: more registrations per simulated second than
 *       {@link #maxRegistrationsPerSecond} allows, measured over the last {@link #HOT_WINDOW} registrations
 *       (registration on the hot path, S26).</li>
 * </ul>
 * Use it around a test: {@code try (StrictMode strict = StrictMode.attach(device)) { ... }}: closing it detaches it
 * and throws an {@link AssertionError} listing every violation, each with its report. {@link #assertClean()} checks
 * at any point. Not thread safe (nor is the simulator).
 */
public final class StrictMode implements AutoCloseable
{
    /** Registrations over which the rate is measured. */
    public static final int HOT_WINDOW = 100;

    /** What strict mode knows of a key it saw registered. */
    private record Issued(SimMr mr, Throwable registeredAt, Throwable releasedAt)
    {
    }

    private final List<SimDevice> devices;
    private final List<Violation> violations = new ArrayList<>();
    private final Map<SimDevice, Map<Integer, Issued>> issued = new IdentityHashMap<>();
    private final Map<SimMr, Throwable> registeredAt = new IdentityHashMap<>();
    private final Map<SimDevice, Deque<Long>> recent = new IdentityHashMap<>();
    private final Map<SimDevice, Observer> observers = new IdentityHashMap<>();
    private final java.util.Set<Violation.Kind> ignored = java.util.EnumSet.noneOf(Violation.Kind.class);
    private long maxRegistrationsPerSecond = Long.MAX_VALUE;
    private boolean closed;

    private StrictMode(final List<SimDevice> devices)
    {
        this.devices = List.copyOf(devices);
        for (final SimDevice d : this.devices)
        {
            final Observer o = new Observer(d);
            observers.put(d, o);
            issued.put(d, new HashMap<>());
            recent.put(d, new ArrayDeque<>());
            d.addObserver(o);
        }
    }

    /**
     * @param devices the devices to watch. Attach every device a test uses: a work request is observed on the
     *                requester's device and its remote side checked against what the responder's device registered,
     *                so a device left out is neither observed nor knows its stale keys.
     * @return strict mode, watching from now on.
     */
    public static StrictMode attach(final SimDevice... devices)
    {
        if (devices == null || devices.length == 0)
        {
            throw new IllegalArgumentException("attach at least one device: strict mode on none could never fail");
        }
        return new StrictMode(List.of(devices));
    }

    /**
     * @param perSecond the most registrations per simulated second before a {@link Violation.Kind#HOT_REGISTRATION}
     *                  (measured over {@value #HOT_WINDOW} registrations on one device).
     * @return this.
     */
    public StrictMode maxRegistrationsPerSecond(final long perSecond)
    {
        if (perSecond < 1)
        {
            throw new IllegalArgumentException("perSecond=" + perSecond + " must be 1 or more");
        }
        maxRegistrationsPerSecond = perSecond;
        return this;
    }

    /**
     * Stops recording violations of some kinds: for a test that misuses on purpose (random and stale keys, say)
     * and checks something else.
     *
     * @param kinds the kinds no longer recorded.
     * @return this.
     */
    public StrictMode ignore(final Violation.Kind... kinds)
    {
        ignored.addAll(List.of(kinds));
        return this;
    }

    /**
     * @return the violations so far, in the order they happened.
     */
    public List<Violation> violations()
    {
        return List.copyOf(violations);
    }

    /**
     * @throws AssertionError listing every violation so far (with stack traces), when there is one.
     */
    public void assertClean()
    {
        if (violations.isEmpty())
        {
            return;
        }
        final StringBuilder sb = new StringBuilder("strict mode: " + violations.size() + " violation"
            + (violations.size() == 1 ? "" : "s"));
        for (final Violation v : violations)
        {
            sb.append("\n  ").append(v.report().replace("\n", "\n  "));
        }
        throw new AssertionError(sb.toString());
    }

    /**
     * Forgets the violations so far (the watch goes on).
     */
    public void clear()
    {
        violations.clear();
    }

    /**
     * Detaches from the devices, then {@link #assertClean()}.
     *
     * @throws AssertionError when there were violations.
     */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            for (final SimDevice d : devices)
            {
                d.removeObserver(observers.get(d));
            }
        }
        assertClean();
    }

    private void violation(final Violation.Kind kind, final String message, final Throwable registered,
        final Throwable released)
    {
        if (!ignored.contains(kind))
        {
            violations.add(new Violation(kind, message, registered, released));
        }
    }

    /** The observer of one device. */
    private final class Observer implements DeviceObserver
    {
        private final SimDevice device;

        Observer(final SimDevice device)
        {
            this.device = device;
        }

        @Override
        public void registered(final SimMr mr)
        {
            final Throwable at = new Throwable("registered");
            registeredAt.put(mr, at);
            issued.get(device).put(mr.lkey(), new Issued(mr, at, null));
            if (mr.rkey() != mr.lkey() && mr.rkey() != 0)
            {
                issued.get(device).put(mr.rkey(), new Issued(mr, at, null));
            }
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
                    violation(Violation.Kind.HOT_REGISTRATION, String.format(java.util.Locale.ROOT,
                        "%d registrations on %s in %.1f us of simulated time: %.0f per second > the %d allowed "
                        + "(register once, outside the request path: a pool or a cache, S26)", HOT_WINDOW,
                        device.name(), spanNs / 1e3, rate, maxRegistrationsPerSecond), at, null);
                    times.clear();
                }
            }
        }

        @Override
        public void reregistered(final SimMr mr, final int oldLkey)
        {
            final Throwable at = new Throwable("re-registered");
            final Issued old = issued.get(device).get(oldLkey);
            if (oldLkey != mr.lkey() && old != null)
            {
                issued.get(device).put(oldLkey, new Issued(mr, old.registeredAt(), at));
            }
            registeredAt.put(mr, at);
            issued.get(device).put(mr.lkey(), new Issued(mr, at, null));
            if (mr.rkey() != mr.lkey() && mr.rkey() != 0)
            {
                issued.get(device).put(mr.rkey(), new Issued(mr, at, null));
            }
        }

        @Override
        public void deregistered(final SimMr mr)
        {
            final Throwable at = new Throwable("deregistered");
            final Throwable reg = registeredAt.remove(mr);
            issued.get(device).put(mr.lkey(), new Issued(mr, reg, at));
            if (mr.rkey() != mr.lkey() && mr.rkey() != 0)
            {
                issued.get(device).put(mr.rkey(), new Issued(mr, reg, at));
            }
        }

        @Override
        public void closing(final SimContext context)
        {
            for (final SimPd pd : context.protectionDomains())
            {
                for (final SimMr mr : pd.memoryRegions())
                {
                    violation(Violation.Kind.LEAKED_MR, "MR lkey 0x" + Integer.toHexString(mr.lkey()) + " of "
                        + mr.lengthBytes() + " bytes at 0x" + Long.toHexString(mr.addr()) + " of process "
                        + context.process().pid() + " is still registered when its context on " + device.name()
                        + " closes (pinned memory leaks until then: S28)", registeredAt.get(mr), null);
                }
                for (final dev.rnicsim.verbs.MemoryRegion mr : unpinned(pd))
                {
                    violation(Violation.Kind.LEAKED_MR, mr + " of process " + context.process().pid()
                        + " is still registered when its context on " + device.name() + " closes (its MPT and MTT "
                        + "entries, and for GPU memory its BAR1 room, leak until then: S28)", null, null);
                }
            }
        }

        /** The PD's MRs that pin no host memory: ODP MRs and MRs over GPU memory. */
        private static java.util.List<dev.rnicsim.verbs.MemoryRegion> unpinned(final SimPd pd)
        {
            final java.util.List<dev.rnicsim.verbs.MemoryRegion> list = new java.util.ArrayList<>(
                pd.odpMemoryRegions());
            list.addAll(pd.peerMemoryRegions());
            return list;
        }

        @Override
        public void failed(final SimQp qp, final SendWr wr, final DmaResult result)
        {
            final KeyCheck check = result.keyCheck();
            if (check != KeyCheck.NO_SUCH_INDEX && check != KeyCheck.VARIANT_MISMATCH)
            {
                return;
            }
            if (result.requester() == DmaStatus.REM_ACCESS_ERR && wr.opcode().isRdma())
            {
                final SimDevice peer = qp.remoteDevice();
                final Issued i = peer == null ? null : issued.get(peer) == null ? null : issued.get(peer)
                    .get(wr.rkey());
                if (i != null && i.releasedAt() != null)
                {
                    violation(Violation.Kind.STALE_RKEY, wr.opcode() + " wr_id " + wr.wrId() + " used rkey 0x"
                        + Integer.toHexString(wr.rkey()) + " of an MR of " + i.mr().lengthBytes() + " bytes at 0x"
                        + Long.toHexString(i.mr().addr()) + " on " + peer.name() + " that was deregistered",
                        i.registeredAt(), i.releasedAt());
                }
                return;
            }
            for (int s = 0; s < wr.sgList().size(); s++)
            {
                final Sge sge = wr.sgList().get(s);
                final Issued i = issued.get(device).get(sge.lkey());
                if (i != null && i.releasedAt() != null && device.memoryRegion(sge.lkey()) == null)
                {
                    violation(Violation.Kind.STALE_LKEY, wr.opcode() + " wr_id " + wr.wrId() + " sge[" + s
                        + "] used lkey 0x" + Integer.toHexString(sge.lkey()) + " of an MR of "
                        + i.mr().lengthBytes() + " bytes at 0x" + Long.toHexString(i.mr().addr()) + " of process "
                        + i.mr().pin().process().pid() + " on " + device.name() + " that was deregistered: use the"
                        + " lkey of a live MR (re-register, or keep the MR until its last work request completes)",
                        i.registeredAt(), i.releasedAt());
                }
            }
        }

        @Override
        public void transferred(final SimQp qp, final SendWr wr, final SimQp peer, final RecvWr recv)
        {
            final WrOpcode op = wr.opcode();
            long left = op.isAtomic() ? Long.BYTES : wr.totalBytes();
            for (final Sge s : wr.sgList())
            {
                checkMapping(device, s.lkey(), s.addr(), op.isAtomic() ? Long.BYTES : s.lengthBytes(), wr, "local");
            }
            if (op.isRdma() && left > 0)
            {
                checkMapping(peer.simDevice(), wr.rkey(), wr.remoteAddr(), left, wr, "remote");
            }
            if (recv != null)
            {
                for (final Sge s : recv.sgList())
                {
                    if (left <= 0)
                    {
                        break;
                    }
                    final long n = Math.min(left, s.lengthBytes());
                    checkMapping(peer.simDevice(), s.lkey(), s.addr(), n, wr, "receive");
                    left -= n;
                }
            }
        }
    }

    /**
     * Checks that the frames a transfer reached through a key are the ones that back the MR's virtual addresses
     * now.
     */
    private void checkMapping(final SimDevice device, final int key, final long addr, final long length,
        final SendWr wr, final String side)
    {
        if (length <= 0)
        {
            return;
        }
        SimMr mr = device.memoryRegion(key);
        long mrAddr = addr;
        if (mr == null || mr.lkey() != key && mr.rkey() != key)
        {
            final SimMw mw = device.memoryWindow(key);
            if (mw == null || mw.boundMr() == null)
            {
                return;
            }
            mr = mw.boundMr();
            mrAddr = mw.access().contains(Access.ZERO_BASED) ? mw.addr() + addr : addr;
        }
        final long va = mr.access().contains(Access.ZERO_BASED) ? mr.addr() + mrAddr : mr.addr() + (mrAddr
            - mr.iova());
        final PinnedPages pin = mr.pin();
        final long first = va & ~4095L;
        for (long page = first; page < va + length; page += 4096)
        {
            final long pinned = pinnedFrame(pin, page);
            final long now = pin.process().translate(page);
            final long nowFrame = now < 0 ? -1 : now & ~4095L;
            if (pinned >= 0 && pinned != nowFrame)
            {
                violation(Violation.Kind.STALE_MAPPING, wr.opcode() + " wr_id " + wr.wrId() + " (" + side + ", key 0x"
                    + Integer.toHexString(key) + ") reached frame 0x" + Long.toHexString(pinned) + " pinned for VA 0x"
                    + Long.toHexString(page) + " of process " + pin.process().pid() + ", but that VA is "
                    + (nowFrame >= 0 ? "now backed by frame 0x" + Long.toHexString(nowFrame)
                    : pin.process().vmaAt(page) == null ? "no longer mapped"
                    : "mapped again without a page yet (the next touch gets a new one)")
                    + ": the MR outlived its memory (munmap and mmap again, or a COW after fork); deregister or "
                    + "invalidate it when the memory is released", registeredAt.get(mr), null);
                return;
            }
        }
    }

    /** The physical address of the frame pinned for a page of a pin, or -1 when the page is outside it. */
    private static long pinnedFrame(final PinnedPages pin, final long page)
    {
        long offset = page - pin.startAddress();
        if (offset < 0 || offset >= pin.lengthBytes())
        {
            return -1;
        }
        for (final PhysRun r : pin.runs())
        {
            if (offset < r.lengthBytes())
            {
                return (r.physAddr() + offset) & ~4095L;
            }
            offset -= r.lengthBytes();
        }
        return -1;
    }
}
