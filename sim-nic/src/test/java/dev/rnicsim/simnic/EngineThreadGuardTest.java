package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.dma.DmaObserver;
import dev.rnicsim.dma.DmaPort;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.XrcDomain;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * In the engine-thread mode, registration, deregistration, the creation of PDs, CQs, QPs and SRQs and the XRC verbs
 * take the engine's lock: a program thread
 * calling them waits while the engine (or {@link EngineThread#exclusive}) holds it, so no packet is placed half-way
 * through a registration and no DMA follows a deregistration that returned. Deterministic: no sleeping, no timing.
 */
class EngineThreadGuardTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;

    /**
     * Runs {@code verb} on a thread of its own while this thread holds the engine's lock, and checks that the verb
     * queued on the lock (it does not finish before the lock is released), then that it finished.
     */
    private static void assertWaitsForTheEngine(final EngineThread engine, final String name, final Runnable verb)
        throws InterruptedException
    {
        final AtomicReference<Throwable> failed = new AtomicReference<>();
        final Thread[] thread = new Thread[1];
        final boolean queued = engine.exclusive(() ->
        {
            thread[0] = Thread.ofPlatform().name("verb " + name).start(() ->
            {
                try
                {
                    verb.run();
                }
                catch (final Throwable t)
                {
                    failed.set(t);
                }
            });
            // Either the verb reaches the lock and queues on it, or it runs to its end without it.
            while (!engine.hasQueuedThread(thread[0]) && thread[0].isAlive())
            {
                Thread.onSpinWait();
            }
            return engine.hasQueuedThread(thread[0]);
        });
        thread[0].join();
        assertThat(queued).as("%s waits for the engine's lock", name).isTrue();
        assertThat(failed.get()).as("%s failed", name).isNull();
    }

    @Test
    void registrationDeregistrationAndTheXrcVerbsWaitForTheEngine() throws InterruptedException
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(16 * MTU);
        final MemoryRegion toDereg = rig.pdB.regMr(buf, MTU, RuleRig.REMOTE_ALL);
        final MemoryRegion toRereg = rig.pdB.regMr(buf, MTU, RuleRig.REMOTE_ALL);
        final SimOdpMr odp = rig.odpB(buf, 16 * MTU, OdpRig.ODP_RW);
        final MemoryWindow window = rig.pdB.allocMw(MwType.TYPE_2);
        final XrcDomain xrcd = rig.ctxB.openXrcd();
        final XrcDomain closing = rig.ctxB.openXrcd();
        final Map<String, Runnable> verbs = new LinkedHashMap<>();
        verbs.put("ibv_reg_mr", () -> rig.pdB.regMr(buf, MTU, RuleRig.REMOTE_ALL));
        verbs.put("ibv_reg_mr (ODP)", () -> rig.pdB.regMr(buf, MTU, OdpRig.ODP_RW));
        verbs.put("ibv_dereg_mr", toDereg::close);
        verbs.put("ibv_rereg_mr", () -> toRereg.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0,
            EnumSet.of(Access.LOCAL_WRITE)));
        verbs.put("ibv_advise_mr", () -> rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, 0, List.of(new Sge(buf, MTU,
            odp.lkey()))));
        verbs.put("ibv_dereg_mr (ODP)", odp::close);
        verbs.put("ibv_alloc_mw", () -> rig.pdB.allocMw(MwType.TYPE_2));
        verbs.put("ibv_dealloc_mw", window::close);
        verbs.put("ib_alloc_mr", () -> rig.pdB.allocMr(4));
        verbs.put("ibv_alloc_pd", () -> rig.ctxB.allocPd());
        verbs.put("ibv_create_cq", () -> rig.ctxB.createCq(16));
        verbs.put("ibv_create_qp", () -> rig.pdB.createQp(dev.rnicsim.verbs.QpInitAttr.rc(rig.cqB)));
        verbs.put("ibv_create_srq", () -> rig.pdB.createSrq(new SrqAttr(16, 1, 0)));
        verbs.put("ibv_open_xrcd", () -> rig.ctxB.openXrcd());
        verbs.put("ibv_create_srq_ex (XRC)", () -> rig.pdB.createXrcSrq(xrcd, rig.cqB, new SrqAttr(16, 1, 0)));
        verbs.put("ibv_create_qp (XRC target)", () -> rig.ctxB.createXrcRecvQp(xrcd));
        verbs.put("ibv_close_xrcd", closing::close);

        try (EngineThread engine = rig.fabric.startEngineThread())
        {
            for (final Map.Entry<String, Runnable> v : verbs.entrySet())
            {
                assertWaitsForTheEngine(engine, v.getKey(), v.getValue());
            }
        }
        assertThat(toDereg.isClosed()).isTrue();
        assertThat(odp.isClosed()).isTrue();
        assertThat(window.isClosed()).isTrue();
    }

    @Test
    void noDmaFollowsADeregistrationThatReturnedWhileTheEngineThreadMovesPackets()
    {
        for (final DeviceProfile profile : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final OdpRig rig = OdpRig.of(profile, 7, 12);
            final int n = 16 * MTU;
            final long background = rig.bufferB(OdpRig.SCRATCH_BYTES);
            final MemoryRegion backgroundMr = rig.pdB.regMr(background, OdpRig.SCRATCH_BYTES, RuleRig.REMOTE_ALL);
            rig.processA().write(rig.scratch, RuleRig.pattern((int)OdpRig.SCRATCH_BYTES, 7));
            // Keys the program deregistered (dereg returned), on b; and every DMA access through one of them.
            final Set<Integer> retired = ConcurrentHashMap.newKeySet();
            final List<String> violations = Collections.synchronizedList(new ArrayList<>());
            rig.deviceA.dmaEngine().observer(new DmaObserver()
            {
                @Override
                public void accessed(final DmaPort port, final int key, final long iova, final long physAddr,
                    final long lengthBytes, final boolean write)
                {
                    if (port.tables() == rig.deviceB.tables() && retired.contains(key))
                    {
                        violations.add((write ? "write" : "read") + " of " + lengthBytes + " bytes at 0x"
                            + Long.toHexString(iova) + " through retired key 0x" + Integer.toHexString(key));
                    }
                }
            });
            final Map<Long, byte[]> atDereg = new LinkedHashMap<>();
            final List<WcStatus> statuses = new ArrayList<>();
            try (EngineThread engine = rig.fabric.startEngineThread())
            {
                for (int i = 0; i < 24; i++)
                {
                    // The engine thread works on a 256 KiB WRITE while this thread registers, posts and deregisters.
                    rig.qpA.postSend(SendWr.write(rig.nextWrId(), List.of(new Sge(rig.scratch,
                        OdpRig.SCRATCH_BYTES, rig.scratchMr.lkey())), background, backgroundMr.rkey()));
                    final long dst = rig.bufferB(n);
                    final MemoryRegion mr = rig.pdB.regMr(dst, n, RuleRig.REMOTE_ALL);
                    rig.qpA.postSend(SendWr.write(rig.nextWrId(), List.of(new Sge(rig.scratch, n,
                        rig.scratchMr.lkey())), dst, mr.rkey()));

                    mr.close();

                    retired.add(mr.rkey());
                    atDereg.put(dst, engine.exclusive(() -> rig.processB().read(dst, n)));
                    final List<WorkCompletion> wcs = rig.cqA.poll(2);
                    final List<WorkCompletion> all = new ArrayList<>(wcs);
                    while (all.size() < 2)
                    {
                        all.addAll(rig.cqA.poll(2 - all.size()));
                    }
                    all.forEach(wc -> statuses.add(wc.status()));
                    if (all.stream().anyMatch(wc -> wc.status() != WcStatus.SUCCESS))
                    {
                        rig.reconnect();
                    }
                }
            }
            assertThat(violations).as(profile.name()).isEmpty();
            for (final Map.Entry<Long, byte[]> e : atDereg.entrySet())
            {
                assertThat(rig.processB().read(e.getKey(), n)).as("%s: target 0x%s after its dereg returned",
                    profile.name(), Long.toHexString(e.getKey())).isEqualTo(e.getValue());
            }
            // Whether a dereg came before the WRITE's first packet (REM_ACCESS_ERR), during it (mlx5:
            // REM_ACCESS_ERR; rxe: the dereg waits, SUCCESS) or after it is up to the threads; the invariant is not.
            assertThat(statuses).as(profile.name()).hasSize(48).isSubsetOf(WcStatus.SUCCESS, WcStatus.REM_ACCESS_ERR,
                WcStatus.WR_FLUSH_ERR);
        }
    }
}
