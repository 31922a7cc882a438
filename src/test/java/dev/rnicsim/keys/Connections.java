package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyWorld.CQ_ENTRIES;
import static dev.rnicsim.keys.KeyWorld.CQ_RING_PAGES;
import static dev.rnicsim.keys.KeyWorld.PAGE;
import static dev.rnicsim.keys.KeyWorld.QP_CAP;
import static dev.rnicsim.keys.KeyWorld.QP_RIGHTS;
import static dev.rnicsim.keys.KeyWorld.QP_RING_PAGES;
import static dev.rnicsim.keys.KeyWorld.run;

import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.keys.WorldModel.Pair;
import dev.rnicsim.keys.WorldModel.PdM;
import dev.rnicsim.keys.WorldModel.Qp;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The PDs and the context of app_b in a {@link KeyWorld}, and the QP pairs that serve the PDs: a pair is made, or
 * reset and connected again after an error, when an action needs it; closing a PD or the context closes what it holds,
 * in the model as on the device; a work request's completion is polled and checked. Not thread safe.
 */
final class Connections
{
    private final KeyWorld world;

    Connections(final KeyWorld world)
    {
        this.world = world;
    }

    // ------------------------------------------------------------------ QP pairs

    /** ibv_modify_qp to RESET: its attributes and mask (made once; the verbs only read them). */
    private static final QpAttr RESET = QpAttr.builder().state(QpState.RESET).build();
    private static final Set<dev.rnicsim.verbs.QpAttrMask> RESET_MASK = EnumSet.of(dev.rnicsim.verbs.QpAttrMask.STATE);

    private int ringRoom()
    {
        return (int)(world.params.memlockBytes() / PAGE - world.pinnedVmModel());
    }

    /**
     * Makes the pair of a live PD usable: creates it, or, after an error left its QPs in ERR, moves both to RESET
     * (ibv_modify_qp: what was queued is dropped) and connects them again, as an application recovers a connection;
     * the QPs keep their numbers, rings and the windows bound through them.
     *
     * @return false when its responder QP cannot be created (RLIMIT_MEMLOCK), with the lines saying so.
     */
    boolean ensurePair(final PdM pd)
    {
        if (pd.pair != null && !pd.pair.broken && pd.pair.qb.live)
        {
            return true;
        }
        if (pd.pair != null && pd.pair.qb.live)
        {
            // A recovery (an error left the pair in ERR): its lines made only when the script is read.
            world.line(new RecoveryLine(pd.index, 0));
            world.line(new RecoveryLine(pd.index, 1));
            world.line(new RecoveryLine(pd.index, 2));
            pd.pair.qa.modify(RESET, RESET_MASK);
            pd.pair.qb.sim.modify(RESET, RESET_MASK);
            connect(pd.pair.qa, pd.pair.qb.sim);
            connect(pd.pair.qb.sim, pd.pair.qa);
            pd.pair.broken = false;
            return true;
        }
        final String qa = "qa" + pd.index;
        final String qb = "qb" + pd.index;
        if (pd.pair != null)
        {
            world.line("close " + qa);
            pd.pair.qa.close();
            pd.pair.qa = null;
            if (pd.pair.qb.live)
            {
                world.line("close " + qb);
                closeQp(pd.pair.qb);
            }
            pd.pair = null;
        }
        world.line("qp " + qb + " pd_b" + pd.index + " " + world.cqName);
        final boolean fits = ringRoom() >= QP_RING_PAGES;
        final List<Vma> before = world.appB.vmas();
        final QueuePair[] created = new QueuePair[1];
        final KeyWorld.Result r = run(() -> created[0] = pd.sim.createQp(new QpInitAttr(world.cqB, world.cqB, QpType.RC,
            QP_CAP, false)));
        world.expectLine(fits ? "ok" : "ENOMEM");
        world.expectOutcome(fits ? "ok" : "ENOMEM", r);
        if (!fits)
        {
            return false;
        }
        final Qp b = new Qp();
        b.sim = created[0];
        b.live = true;
        b.ring = world.memory.newRing(before, QP_RING_PAGES, qb);
        world.bound.add(qb);
        world.line("qp " + qa + " pd_a cq_a");
        final QueuePair a = world.pdA.createQp(new QpInitAttr(world.cqA, world.cqA, QpType.RC, QP_CAP, false));
        world.bound.add(qa);
        world.line("connect " + qa + " " + qb);
        connect(a, b.sim);
        connect(b.sim, a);
        final Pair pair = new Pair();
        pair.qa = a;
        pair.qb = b;
        pd.pair = pair;
        return true;
    }

    /** A script line of a pair's recovery: qaN to RESET (0), qbN to RESET (1), then connected again (2). */
    private record RecoveryLine(int pd, int part) implements Script.Line
    {
        @Override
        public String text()
        {
            return switch (part)
            {
                case 0 -> "modify qa" + pd + " reset";
                case 1 -> "modify qb" + pd + " reset";
                default -> "connect qa" + pd + " qb" + pd;
            };
        }
    }

    /** One direction of the script's connect (default access rw,rr,ra, min_rnr_timer 12, retry 7, rnr_retry 7). */
    private static void connect(final QueuePair q, final QueuePair peer)
    {
        q.modifyToInit(QP_RIGHTS);
        q.modifyToRtr(peer.address(), 12);
        q.modifyToRts(7, 7);
    }

    private void closeQp(final Qp q)
    {
        q.sim.close();
        q.live = false;
        world.memory.releaseRing(q.ring);
    }

    List<WorkCompletion> poll(final CompletionQueue cq, final String cqLabel, final String expectedStatus)
    {
        world.line(() -> "poll " + cqLabel);
        world.line(() -> "expect " + expectedStatus);
        final List<WorkCompletion> wcs = cq.poll(16);
        if (wcs.size() != 1)
        {
            throw world.failure(Mismatch.Kind.OUTCOME, "expected one completion on " + cqLabel + ", got " + wcs);
        }
        world.expectEqual(Mismatch.Kind.OUTCOME, expectedStatus, wcs.get(0).status().name(), "completion status");
        return wcs;
    }

    // ------------------------------------------------------------------ actions: PDs and contexts

    void allocPd(final int index)
    {
        final String ctx = world.ctxName;
        world.start(() -> "pd pd_b" + index + " " + ctx);
        final PdM pd = new PdM(index);
        final ProtectionDomain[] got = new ProtectionDomain[1];
        world.expectOutcome("ok", run(() -> got[0] = world.ctxB.allocPd()));
        pd.sim = (SimPd)got[0];
        pd.live = true;
        world.putPd(pd);
        world.bound.add(pd.name);
    }

    void closePd(final int index)
    {
        if (!world.pdBound(index) && world.skipUnbound("close pd_b" + index, "pd_b" + index))
        {
            return;
        }
        world.start(() -> "close pd_b" + index);
        final PdM pd = world.pds.get(index);
        world.expectOutcome("ok", run(() -> pd.sim.close()));
        if (pd.live)
        {
            pdClosed(pd);
        }
    }

    /** What closing a PD does, in the model: windows, then QPs and MRs, are closed. */
    private void pdClosed(final PdM pd)
    {
        for (final MwM w : world.mwList)
        {
            if (w.live && w.pd == pd)
            {
                world.windows.deallocated(w);
            }
        }
        if (pd.pair != null)
        {
            if (pd.pair.qb.live)
            {
                pd.pair.qb.live = false;
                world.memory.releaseRing(pd.pair.qb.ring);
            }
            world.line("close qa" + pd.index);
            pd.pair.qa.close();
            pd.pair = null;
        }
        for (final MrM m : world.mrList)
        {
            if (m.live && m.pd == pd)
            {
                world.registrations.deregistered(m);
            }
        }
        pd.live = false;
    }

    void closeContext(final String newCtx, final String newCq)
    {
        world.start("close " + world.ctxName);
        world.expectOutcome("ok", run(() -> world.ctxB.close()));
        for (final PdM pd : world.pdList)
        {
            if (pd.live)
            {
                pdClosed(pd);
            }
        }
        world.memory.releaseRing(world.cqRing);
        world.line("open " + newCtx + " nic_b process=app_b");
        world.ctxB = world.nicB.open(world.appB);
        world.ctxName = newCtx;
        world.bound.add(newCtx);
        world.line("cq " + newCq + " " + newCtx);
        final boolean fits = ringRoom() >= CQ_RING_PAGES;
        if (!fits)
        {
            throw world.failure("model: no room for a CQ ring after closing the context");
        }
        final List<Vma> before = world.appB.vmas();
        world.cqB = world.ctxB.createCq(CQ_ENTRIES);
        world.cqName = newCq;
        world.bound.add(newCq);
        world.cqRing = world.memory.newRing(before, CQ_RING_PAGES, newCq);
    }

    /** Closes the context of app_b at the end of a chain: nothing may stay pinned, registered or bound. */
    void closeEverything()
    {
        world.start("close " + world.ctxName);
        world.expectOutcome("ok", run(() -> world.ctxB.close()));
        for (final PdM pd : world.pdList)
        {
            if (pd.live)
            {
                pdClosed(pd);
            }
        }
        world.memory.releaseRing(world.cqRing);
        world.expectEqual(0L, world.liveMrs(), "MRs after closing the context (model)");
        world.checks.checkInvariants();
        world.expectEqual(0L, world.appB.pinnedVmPages(), "pinned_vm after closing everything");
        world.expectEqual(0L, world.nicB.counter(SimCounter.MTT_ENTRIES_IN_USE),
            "MTT entries after closing everything");
        world.expectEqual(0L, world.nicB.counter(SimCounter.MR_LIVE), "MRs after closing everything");
        world.expectEqual(0, world.nicB.tables().windowCount(), "windows after closing everything");
        world.expectEqual(0L, world.nicB.tables().mpt().inUse(), "MPT entries after closing everything");
        world.expectEqual(0L, world.nicB.counter(SimCounter.PINNED_BYTES), "sim_pinned_bytes after closing everything");
    }
}
