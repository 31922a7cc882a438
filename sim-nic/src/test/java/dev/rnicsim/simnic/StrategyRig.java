package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Fixture of the Strategy* suites (memory pool and registration cache on the simulator): host "a" runs the code
 * under test (its process holds CAP_IPC_LOCK), host "b" is the peer with a registered 64 KiB buffer; one RC QP on
 * each, connected, both granting every remote right. Also a single-host variant without QPs for the properties.
 * Not a test class.
 */
final class StrategyRig
{
    static final long PAGE = 4096;
    static final long KIB = 1024;
    static final long MIB = 1024 * KIB;
    static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);
    static final Set<Access> REMOTE_ALL = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);
    static final Set<Access> ALL_REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    /** Bytes of the peer's buffer. */
    static final long PEER_BYTES = 16 * PAGE;

    final SimFabric fabric;
    final SimDevice deviceA;
    final SimContext ctxA;
    final ProtectionDomain pdA;
    final SimDevice deviceB;
    final SimContext ctxB;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final QueuePair qpA;
    final QueuePair qpB;
    /** The peer's buffer on b and its MR (every right). */
    final long peerBuf;
    final MemoryRegion peerMr;
    private long wrId = 1;

    private StrategyRig(final HostConfig configA, final DeviceProfile profileA, final Consumer<UserProcess> setupA)
    {
        fabric = new SimFabric();
        deviceA = fabric.addHost("a", configA).addDevice("sim:a/dev0", profileA);
        deviceB = fabric.addHost("b").addDevice("sim:b/dev0", DeviceProfiles.connectx5());
        final UserProcess processA = deviceA.host().host().spawn("app").capIpcLock(true);
        setupA.accept(processA);
        ctxA = deviceA.open(processA);
        ctxB = deviceB.open(deviceB.host().host().spawn("peer").capIpcLock(true));
        pdA = ctxA.allocPd();
        pdB = ctxB.allocPd();
        cqA = ctxA.createCq(64);
        cqB = ctxB.createCq(64);
        qpA = pdA.createQp(QpInitAttr.rc(cqA));
        qpB = pdB.createQp(QpInitAttr.rc(cqB));
        qpA.connect(qpB.address(), ALL_REMOTE);
        qpB.connect(qpA.address(), ALL_REMOTE);
        peerBuf = ctxB.memory().allocate(PEER_BYTES, Backing.BASE_PAGES);
        ctxB.memory().write(peerBuf, new byte[(int)PEER_BYTES]);
        peerMr = pdB.regMr(peerBuf, PEER_BYTES, REMOTE_ALL);
    }

    /** Two connectx5 hosts with the default host configuration. */
    static StrategyRig connectx5()
    {
        return new StrategyRig(HostConfig.builder().build(), DeviceProfiles.connectx5(), p -> { });
    }

    /**
     * @param configA host a's configuration (hugetlb pools, RAM).
     * @param profileA device a's profile.
     * @param setupA   applied to a's process before the device is opened (capabilities, rlimits).
     */
    static StrategyRig of(final HostConfig configA, final DeviceProfile profileA, final Consumer<UserProcess> setupA)
    {
        return new StrategyRig(configA, profileA, setupA);
    }

    HostMemory memA()
    {
        return ctxA.memory();
    }

    UserProcess processA()
    {
        return ctxA.process();
    }

    long mrLiveA()
    {
        return deviceA.counter(SimCounter.MR_LIVE);
    }

    byte[] peerBytes(final long offset, final int length)
    {
        return ctxB.memory().read(peerBuf + offset, length);
    }

    private static WorkCompletion only(final List<WorkCompletion> wcs)
    {
        assertThat(wcs).hasSize(1);
        return wcs.get(0);
    }

    /** a RDMA WRITEs the SGL to the peer buffer at the offset; returns a's completion. */
    WorkCompletion writeToPeer(final List<Sge> sgl, final long peerOffset)
    {
        qpA.postSend(SendWr.write(wrId++, sgl, peerBuf + peerOffset, peerMr.rkey()));
        return only(cqA.poll(8));
    }

    /** a SENDs the SGL; b receives it into its buffer at the offset. Returns b's receive completion. */
    WorkCompletion sendToPeer(final List<Sge> sgl, final long peerOffset, final long recvBytes)
    {
        qpB.postRecv(RecvWr.of(wrId++, new Sge(peerBuf + peerOffset, recvBytes, peerMr.lkey())));
        qpA.postSend(SendWr.send(wrId++, sgl));
        assertThat(cqA.poll(8)).hasSize(1);
        return only(cqB.poll(8));
    }

    /** b RDMA READs {@code length} bytes of a at {@code remoteAddr} with {@code rkey} into its buffer at 0. */
    WorkCompletion readFromA(final long remoteAddr, final int rkey, final int length)
    {
        qpB.postSend(SendWr.read(wrId++, List.of(new Sge(peerBuf, length, peerMr.lkey())), remoteAddr, rkey));
        return only(cqB.poll(8));
    }

    /** b RDMA WRITEs the bytes (staged in its buffer at 0) to a at {@code remoteAddr} with {@code rkey}. */
    WorkCompletion writeToA(final byte[] data, final long remoteAddr, final int rkey)
    {
        ctxB.memory().write(peerBuf, data);
        qpB.postSend(SendWr.write(wrId++, List.of(new Sge(peerBuf, data.length, peerMr.lkey())), remoteAddr, rkey));
        return only(cqB.poll(8));
    }

    /** One host, one device, one process (CAP_IPC_LOCK), one PD: enough for registrations without traffic. */
    static final class Single
    {
        final SimDevice device;
        final SimContext ctx;
        final ProtectionDomain pd;

        Single(final DeviceProfile profile)
        {
            this(profile, p -> { });
        }

        /**
         * @param profile the device's profile.
         * @param setup   applied to the process (which holds CAP_IPC_LOCK unless setup drops it).
         */
        Single(final DeviceProfile profile, final Consumer<UserProcess> setup)
        {
            final SimHost host = new SimFabric().addHost("h", HostConfig.builder().physicalMemoryBytes(1L << 30)
                .build());
            device = host.addDevice("dev0", profile);
            final UserProcess process = host.host().spawn("app").capIpcLock(true);
            setup.accept(process);
            ctx = device.open(process);
            pd = ctx.allocPd();
        }

        HostMemory memory()
        {
            return ctx.memory();
        }

        long mrLive()
        {
            return device.counter(SimCounter.MR_LIVE);
        }
    }

    /**
     * A PD that hands the simulator's PD a mutable EnumSet copy of the rights. Works around a simulator bug:
     * {@code SimPd.register} calls {@code access.contains(null)}, which throws NullPointerException for the
     * immutable sets of {@code Set.of}/{@code Set.copyOf} that {@code MemoryPool.Config} stores (see
     * StrategyPoolTest#shouldRegisterAChunkOnTheSimulatorPdItself, which shows the bug without the adapter).
     */
    static ProtectionDomain enumSetAccess(final ProtectionDomain pd)
    {
        return new ProtectionDomain()
        {
            private Set<Access> copy(final Set<Access> access)
            {
                return access == null || access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
            }

            @Override
            public dev.rnicsim.verbs.Context context()
            {
                return pd.context();
            }

            @Override
            public void dealloc()
            {
                pd.dealloc();
            }

            @Override
            public MemoryRegion regMr(final long addr, final long lengthBytes, final Set<Access> access)
            {
                return pd.regMr(addr, lengthBytes, copy(access));
            }

            @Override
            public MemoryRegion regMr(final long addr, final long lengthBytes, final long iova,
                final Set<Access> access)
            {
                return pd.regMr(addr, lengthBytes, iova, copy(access));
            }

            @Override
            public QueuePair createQp(final QpInitAttr attr)
            {
                return pd.createQp(attr);
            }

            @Override
            public dev.rnicsim.verbs.MemoryWindow allocMw(final dev.rnicsim.verbs.MwType type)
            {
                return pd.allocMw(type);
            }

            @Override
            public dev.rnicsim.verbs.FastRegMr allocMr(final int maxNumSg)
            {
                return pd.allocMr(maxNumSg);
            }

            @Override
            public boolean isClosed()
            {
                return pd.isClosed();
            }

            @Override
            public void close()
            {
                pd.close();
            }
        };
    }

    /** Bytes 1, 2, 3, ... (mod 251, never 0) shifted by the seed. */
    static byte[] pattern(final int lengthBytes, final int seed)
    {
        final byte[] b = new byte[lengthBytes];
        for (int i = 0; i < lengthBytes; i++)
        {
            b[i] = (byte)(1 + (i + seed) % 251);
        }
        return b;
    }

    static byte[] concat(final byte[] a, final byte[] b)
    {
        final byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Runs the call, expecting a VerbsException, and returns it. */
    static VerbsException fails(final Runnable call)
    {
        try
        {
            call.run();
        }
        catch (final VerbsException e)
        {
            return e;
        }
        throw new AssertionError("expected a VerbsException");
    }
}
