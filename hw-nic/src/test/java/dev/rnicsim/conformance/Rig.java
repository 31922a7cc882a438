package dev.rnicsim.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Two endpoints on one device, written against verbs-api only: a requester (a) and a responder (b), each with its
 * own context (on the simulator a process each; on rdma-core two contexts of this process, talking through the
 * port in loopback), PD, CQ and RC QP, and their buffers. Closing it closes both contexts and frees the buffers.
 */
final class Rig implements AutoCloseable
{
    /** Every remote right a QP can grant. */
    static final Set<Access> ALL_REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    /** A local buffer the device writes into. */
    static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);
    /** A target for WRITE, READ and atomics. */
    static final Set<Access> REMOTE_ALL = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);
    /** 4 KiB. */
    static final int PAGE = 4096;
    /** How long to wait for a completion: the simulator completes at post; hardware within microseconds. */
    static final long COMPLETION_TIMEOUT_NS = 5_000_000_000L;

    final Device device;
    final DeviceAttributes attributes;
    final Context ctxA;
    final Context ctxB;
    final HostMemory memA;
    final HostMemory memB;
    final ProtectionDomain pdA;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final QueuePair qpA;
    final QueuePair qpB;
    private final List<long[]> buffersA = new ArrayList<>();
    private final List<long[]> buffersB = new ArrayList<>();

    /** Amazon's vendor id, which EFA devices report (efa_main.c efa_pci_tbl). */
    private static final int EFA_VENDOR_ID = 0x1d0f;

    private Rig(final Device device)
    {
        this(device, null);
    }

    private Rig(final Device device, final Set<dev.rnicsim.verbs.WrOpcode> sendOps)
    {
        this.device = device;
        ctxA = device.open();
        ctxB = device.open();
        attributes = ctxA.queryDevice();
        org.junit.jupiter.api.Assumptions.assumeTrue(attributes.vendorId() != EFA_VENDOR_ID, device.name()
            + " is an EFA device: it has no RC QPs (efa_verbs.c efa_qp_validate_attr takes UD and SRD only), and the"
            + " suite's cases use RC");
        memA = ctxA.memory();
        memB = ctxB.memory();
        pdA = ctxA.allocPd();
        pdB = ctxB.allocPd();
        cqA = ctxA.createCq(64);
        cqB = ctxB.createCq(64);
        try
        {
            qpA = pdA.createQp(rc(cqA, attributes).withSendOps(sendOps));
            qpB = pdB.createQp(rc(cqB, attributes).withSendOps(sendOps));
        }
        catch (final dev.rnicsim.verbs.VerbsException e)
        {
            close();
            // rdma-core tests/test_qpex.py create_qp_ex: EOPNOTSUPP is "Extended QP is not supported on this device".
            org.junit.jupiter.api.Assumptions.assumeTrue(e.errnoName() != dev.rnicsim.verbs.Errno.EOPNOTSUPP,
                "Extended QP is not supported on this device: " + e.detail());
            throw e;
        }
    }

    /** An RC QP of the default capacities with no more SGEs than the device has (EFA has 2). */
    private static QpInitAttr rc(final CompletionQueue cq, final DeviceAttributes a)
    {
        final dev.rnicsim.verbs.QpCap d = dev.rnicsim.verbs.QpCap.defaults();
        final int sge = Math.min(d.maxSendSge(), a.maxSge());
        return new QpInitAttr(cq, cq, dev.rnicsim.verbs.QpType.RC,
            new dev.rnicsim.verbs.QpCap(d.maxSendWr(), d.maxRecvWr(), sge, sge, d.maxInlineDataBytes()), false);
    }

    /**
     * @param name a device name of {@link ConformanceDevices#names()}.
     * @return a rig whose QPs are still in RESET.
     */
    static Rig unconnected(final String name)
    {
        return new Rig(ConformanceDevices.device(name));
    }

    /**
     * @param name    a device name of {@link ConformanceDevices#names()}.
     * @param sendOps the send_ops_flags both QPs are created with ({@code ibv_create_qp_ex}); the case skips where
     *                the provider refuses them with EOPNOTSUPP, as upstream's {@code create_qp_ex} does.
     * @return a rig whose QPs are still in RESET.
     */
    static Rig unconnected(final String name, final Set<dev.rnicsim.verbs.WrOpcode> sendOps)
    {
        return new Rig(ConformanceDevices.device(name), sendOps);
    }

    /**
     * @param name            a device name.
     * @param responderRights the responder QP's qp_access_flags.
     * @return a rig whose QPs are connected and in RTS; the requester grants every remote right.
     */
    static Rig connected(final String name, final Set<Access> responderRights)
    {
        final Rig rig = unconnected(name);
        rig.qpA.connect(rig.qpB.address(), ALL_REMOTE);
        rig.qpB.connect(rig.qpA.address(), responderRights);
        return rig;
    }

    /**
     * @param name a device name.
     * @return a connected rig whose responder grants every remote right.
     */
    static Rig connected(final String name)
    {
        return connected(name, ALL_REMOTE);
    }

    /**
     * @return false for a device reporting {@code max_qp_rd_atom} 0: its responder QPs get no resources for RDMA READ
     *         and atomics ({@code max_dest_rd_atomic} 0), so a READ to them is NAKed as an invalid request
     *         (IBV_WC_REM_INV_REQ_ERR; rxe_resp.c {@code check_resource}).
     */
    boolean servesReads()
    {
        return attributes.maxQpRdAtom() > 0;
    }

    /**
     * @return true on a Chelsio adapter (cxgb4, vendor 0x1425), which asks REMOTE_WRITE of an RDMA READ's sink as
     *         iWARP places the response into the sink's STag, and completes a READ into a sink without it with
     *         IBV_WC_LOC_ACCESS_ERR (T4_ERR_ACCESS, libcxgb4 {@code c4iw_poll_cq_one}).
     */
    boolean readSinkNeedsRemoteWrite()
    {
        return attributes.vendorId() == 0x1425;
    }

    /** Maps zeroed base pages for the requester. */
    long bufferA(final long lengthBytes)
    {
        final long a = memA.allocate(lengthBytes, Backing.BASE_PAGES);
        buffersA.add(new long[] {a, lengthBytes});
        return a;
    }

    /** Maps zeroed base pages for the responder. */
    long bufferB(final long lengthBytes)
    {
        final long b = memB.allocate(lengthBytes, Backing.BASE_PAGES);
        buffersB.add(new long[] {b, lengthBytes});
        return b;
    }

    /** The requester's next completion, waiting for it. */
    WorkCompletion awaitA()
    {
        return await(cqA);
    }

    /** The responder's next completion, waiting for it. */
    WorkCompletion awaitB()
    {
        return await(cqB);
    }

    /** The CQ's next completion, polled until it comes (a failed assertion after COMPLETION_TIMEOUT_NS). */
    static WorkCompletion await(final CompletionQueue cq)
    {
        final long deadline = System.nanoTime() + COMPLETION_TIMEOUT_NS;
        while (true)
        {
            final List<WorkCompletion> wcs = cq.poll(1);
            if (!wcs.isEmpty())
            {
                return wcs.get(0);
            }
            assertThat(System.nanoTime() - deadline).as("a completion within %d ms", COMPLETION_TIMEOUT_NS / 1_000_000)
                .isNegative();
            Thread.onSpinWait();
        }
    }

    /** Bytes 1, 2, 3, ... (mod 251, never 0), so that a shifted or truncated copy shows. */
    static byte[] pattern(final int lengthBytes, final int seed)
    {
        final byte[] b = new byte[lengthBytes];
        for (int i = 0; i < lengthBytes; i++)
        {
            b[i] = (byte)(1 + (i + seed) % 251);
        }
        return b;
    }

    static Sge sge(final MemoryRegion mr, final long addr, final long lengthBytes)
    {
        return new Sge(addr, lengthBytes, mr.lkey());
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
            for (final long[] b : buffersA)
            {
                memA.free(b[0], b[1]);
            }
            for (final long[] b : buffersB)
            {
                memB.free(b[0], b[1]);
            }
        }
    }
}
