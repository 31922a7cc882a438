package dev.rnicsim.conformance;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Two UD QPs in RTS on two contexts of one device, each with an address handle to the other: what rdma-core's
 * {@code tests/base.py UDResources} builds (Q_Key 0x11111111, P_Key index 0, port 1, one SGE each way, as many
 * receive as send work requests). A case skips where upstream's does: the device has no UD QPs, the QP cannot be
 * created with the send_ops_flags asked for (EOPNOTSUPP), or the backend has no address handles.
 */
final class UdRig implements AutoCloseable
{
    /** pyverbs' UD Q_Key (tests/base.py UDResources.UD_QKEY). */
    static final int UD_QKEY = 0x11111111;

    /** The bytes of the global route header before a UD payload (tests/utils.py GRH_SIZE; IBA 9.8.3). */
    static final int GRH = 40;

    /** The receive queue's depth and the send queue's (upstream's num_msgs is 1000; fewer do for one round). */
    static final int DEPTH = 16;

    final Device device;
    final Context ctxA;
    final Context ctxB;
    final HostMemory memA;
    final HostMemory memB;
    final ProtectionDomain pdA;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final QueuePair client;
    final QueuePair server;
    final AddressHandle toServer;
    final AddressHandle toClient;

    private UdRig(final Device device, final Set<WrOpcode> sendOps)
    {
        this.device = device;
        ctxA = device.open();
        ctxB = device.open();
        try
        {
            memA = ctxA.memory();
            memB = ctxB.memory();
            pdA = ctxA.allocPd();
            pdB = ctxB.allocPd();
            cqA = ctxA.createCq(64);
            cqB = ctxB.createCq(64);
            client = skipOnEopnotsupp(() -> create(pdA, cqA, sendOps), "a UD QP with these send_ops_flags");
            server = skipOnEopnotsupp(() -> create(pdB, cqB, sendOps), "a UD QP with these send_ops_flags");
            toServer = skipOnEopnotsupp(() -> pdA.createAh(AhAttr.toGid(server.address().gid())), "address handles");
            toClient = skipOnEopnotsupp(() -> pdB.createAh(AhAttr.toGid(client.address().gid())), "address handles");
        }
        catch (final RuntimeException | Error e)
        {
            close();
            throw e;
        }
    }

    /**
     * @param name    a device name of {@link ConformanceDevices#names()}.
     * @param sendOps the send_ops_flags the QPs are created with (upstream's create_qp_ex).
     */
    static UdRig of(final String name, final Set<WrOpcode> sendOps)
    {
        return new UdRig(ConformanceDevices.device(name), sendOps);
    }

    private static <T> T skipOnEopnotsupp(final Supplier<T> create, final String what)
    {
        try
        {
            return create.get();
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "the device has no " + what + ": " + e.getMessage());
            throw e;
        }
    }

    /** A UD QP taken through INIT (P_Key index, port, Q_Key), RTR and RTS (SQ PSN). */
    private static QueuePair create(final ProtectionDomain pd, final CompletionQueue cq, final Set<WrOpcode> ops)
    {
        final QueuePair qp = pd.createQp(new QpInitAttr(cq, cq, QpType.UD, new QpCap(DEPTH, DEPTH, 1, 1, 0), false)
            .withSendOps(ops));
        for (final QpAttr.Builder b : List.of(QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).qkey(UD_QKEY),
            QpAttr.builder().state(QpState.RTR), QpAttr.builder().state(QpState.RTS).sqPsn(0)))
        {
            qp.modify(b.build(), b.mask());
        }
        return qp;
    }

    long bufferA(final long lengthBytes)
    {
        return memA.allocate(lengthBytes, Backing.BASE_PAGES);
    }

    long bufferB(final long lengthBytes)
    {
        return memB.allocate(lengthBytes, Backing.BASE_PAGES);
    }

    WorkCompletion awaitA()
    {
        return Rig.await(cqA);
    }

    WorkCompletion awaitB()
    {
        return Rig.await(cqB);
    }

    @Override
    public void close()
    {
        try
        {
            ctxA.close();
        }
        finally
        {
            ctxB.close();
        }
    }
}
