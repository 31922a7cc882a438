package dev.rnicsim.ibverbs;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Runs the model's data path a few thousand times on a private fabric of its own (RDMA WRITE and READ of 64 KiB to
 * relaxed-ordering MRs, small SENDs), in a background thread, when a program first registers memory: the JIT then
 * compiles the engine's hot paths while the programs still exchange their connection details, instead of during
 * their first seconds of traffic (a 5,000-message perftest run is otherwise mostly warm-up). It stops as soon as
 * the programs' own traffic starts, which warms the same paths from then on. Nothing of it touches
 * the served fabric: its devices, keys, clock and counters are its own, and it is dropped at the end. Off with
 * {@code RNICSIM_FABRIC_WARMUP=0}.
 */
final class FabricWarmup
{
    /** WRITEs, READs and SENDs of each kind: a few hundred milliseconds of CPU. */
    private static final int ROUNDS = 2000;
    private static final int MESSAGE_BYTES = 64 << 10;
    private static final boolean ENABLED = !"0".equals(System.getenv("RNICSIM_FABRIC_WARMUP"));

    private FabricWarmup()
    {
    }

    /**
     * Starts the warm-up in a daemon thread of low priority.
     *
     * @param profile the served device's profile (the same code paths as the programs will take).
     * @param stop    true once the warm-up should stop (the programs' traffic has started).
     */
    static void start(final DeviceProfile profile, final BooleanSupplier stop)
    {
        if (!ENABLED)
        {
            return;
        }
        final Thread t = Thread.ofPlatform().daemon().name("rnicsim-fabric-warmup").unstarted(() -> run(profile, stop));
        t.setPriority(Thread.MIN_PRIORITY);
        t.start();
    }

    private static void run(final DeviceProfile profile, final BooleanSupplier stop)
    {
        try
        {
            final SimFabric fabric = new SimFabric();
            final SimHost host = fabric.addHost("warmup", HostConfig.builder().build());
            final SimDevice device = host.addDevice("sim:warmup/dev0", profile);
            final SimContext a = device.open(host.host().spawn("a").capIpcLock(true));
            final SimContext b = device.open(host.host().spawn("b").capIpcLock(true));
            final ProtectionDomain pdA = a.allocPd();
            final ProtectionDomain pdB = b.allocPd();
            final CompletionQueue cqA = a.createCq(1024);
            final CompletionQueue cqB = b.createCq(1024);
            final QueuePair qpA = pdA.createQp(QpInitAttr.rc(cqA));
            final QueuePair qpB = pdB.createQp(QpInitAttr.rc(cqB));
            final EnumSet<Access> remote = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ);
            qpA.connect(qpB.address(), remote);
            qpB.connect(qpA.address(), remote);
            final EnumSet<Access> access = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
                Access.RELAXED_ORDERING);
            final long bufA = a.memory().allocate(MESSAGE_BYTES, Backing.BASE_PAGES);
            final long bufB = b.memory().allocate(MESSAGE_BYTES, Backing.BASE_PAGES);
            a.memory().write(bufA, new byte[MESSAGE_BYTES]);
            b.memory().write(bufB, new byte[MESSAGE_BYTES]);
            final MemoryRegion mrA = pdA.regMr(bufA, MESSAGE_BYTES, access);
            final MemoryRegion mrB = pdB.regMr(bufB, MESSAGE_BYTES, access);
            final List<Sge> whole = List.of(new Sge(bufA, MESSAGE_BYTES, mrA.lkey()));
            final List<Sge> small = List.of(new Sge(bufA, 64, mrA.lkey()));
            int taken = 0;
            for (int i = 0; i < ROUNDS && !stop.getAsBoolean(); i++)
            {
                qpB.postRecv(List.of(RecvWr.of(i, new Sge(bufB, 64, mrB.lkey()))));
                qpA.postSend(List.of(SendWr.write(i, whole, bufB, mrB.rkey()), SendWr.read(i, whole, bufB,
                    mrB.rkey()), SendWr.send(i, small)));
                fabric.progressAll();
                taken += drain(cqA) + drain(cqB);
            }
            if (System.getenv("RNICSIM_FABRIC_DEBUG") != null)
            {
                System.err.println("rnicsim: fabric warm-up done: " + taken + " completions");
            }
            a.close();
            b.close();
        }
        catch (final RuntimeException e)
        {
            // a warm-up that cannot run changes nothing but the speed of the first messages
            if (System.getenv("RNICSIM_FABRIC_DEBUG") != null)
            {
                System.err.println("rnicsim: fabric warm-up stopped: " + e);
            }
        }
    }

    /** @return the completions taken. */
    private static int drain(final CompletionQueue cq)
    {
        int taken = 0;
        for (List<WorkCompletion> got = cq.poll(64); !got.isEmpty(); got = cq.poll(64))
        {
            taken += got.size();
        }
        return taken;
    }
}
