package dev.rnicsim.conformance;

import static dev.rnicsim.conformance.Rig.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DmaBuf;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The dma-buf cases of rdma-core's {@code tests/test_mr.py} (classes DmaBufMRTest and DmaBufTestCase), re-expressed
 * against verbs-api as {@link RdmaCoreTestsPortTest} does the rest of that file. Upstream allocates the dma-buf on a
 * DRM render node and skips when there is none, or when the driver answers EOPNOTSUPP to a first registration
 * ({@code check_dmabuf_mr_support}); the cases here skip the same way. An MR is registered at iova = its offset in the
 * dma-buf, as pyverbs' {@code DmaBufMR} does.
 */
class RdmaCoreTestsPortDmaBufTest
{
    /** Bytes of each MR (upstream draws a random length; one fixed length keeps the case repeatable). */
    private static final int MR_BYTES = 64 << 10;

    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    /** A dma-buf of {@code bytes}, or a skip when the backend or host cannot export one (no GPU). */
    private static DmaBuf dmabuf(final Rig rig, final long bytes)
    {
        try
        {
            return rig.ctxA.allocDmabuf(bytes);
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP && e.errnoName() != Errno.ENODEV,
                "no GPU to allocate a dma-buf from: " + e.getMessage());
            throw e;
        }
    }

    /** Upstream's check_dmabuf_mr_support: a one-byte registration; EOPNOTSUPP skips. */
    private static void assumeDmabufMr(final Rig rig, final ProtectionDomain pd)
    {
        try (DmaBuf d = dmabuf(rig, 1))
        {
            pd.regDmabufMr(0, 1, 0, d.fd(), Set.of()).close();
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, rig.device.name() + " cannot register dma-bufs: "
                + e.getMessage());
            throw e;
        }
    }

    /**
     * Upstream's get_dmabuf_access_flags: every combination of LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ and (with
     * atomics) REMOTE_ATOMIC that keeps remote write and atomic rights with LOCAL_WRITE.
     */
    private static List<Set<Access>> accessFlags(final Rig rig)
    {
        final List<Access> bits = new ArrayList<>(List.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
            Access.REMOTE_READ));
        if (rig.attributes.atomicCap() != AtomicCap.NONE)
        {
            bits.add(Access.REMOTE_ATOMIC);
        }
        final List<Set<Access>> out = new ArrayList<>();
        for (int m = 0; m < 1 << bits.size(); m++)
        {
            final Set<Access> s = EnumSet.noneOf(Access.class);
            for (int i = 0; i < bits.size(); i++)
            {
                if ((m & 1 << i) != 0)
                {
                    s.add(bits.get(i));
                }
            }
            if (s.contains(Access.LOCAL_WRITE) || !(s.contains(Access.REMOTE_WRITE)
                || s.contains(Access.REMOTE_ATOMIC)))
            {
                out.add(s);
            }
        }
        return out;
    }

    /** tests/test_mr.py, class DmaBufMRTest. */
    @Nested
    class TestDmaBufMr
    {
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufRegMr(final String name)
        {
            // Every access combination, at offset 0 and at half the length into the dma-buf.
            try (Rig rig = Rig.unconnected(name))
            {
                assumeDmabufMr(rig, rig.pdA);
                for (final Set<Access> access : accessFlags(rig))
                {
                    for (final long off : new long[] {0, MR_BYTES / 2})
                    {
                        try (DmaBuf d = dmabuf(rig, MR_BYTES + off);
                            MemoryRegion mr = rig.pdA.regDmabufMr(off, MR_BYTES, off, d.fd(), access))
                        {
                            assertThat(mr.lengthBytes()).isEqualTo(MR_BYTES);
                            assertThat(mr.addr()).as("the iova").isEqualTo(off);
                        }
                    }
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufDeregMr(final String name)
        {
            try (Rig rig = Rig.unconnected(name))
            {
                assumeDmabufMr(rig, rig.pdA);
                for (final Set<Access> access : accessFlags(rig))
                {
                    try (DmaBuf d = dmabuf(rig, MR_BYTES))
                    {
                        final MemoryRegion mr = rig.pdA.regDmabufMr(0, MR_BYTES, 0, d.fd(), access);
                        mr.close();
                        assertThat(mr.isClosed()).isTrue();
                    }
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufDeregMrTwice(final String name)
        {
            try (Rig rig = Rig.unconnected(name); DmaBuf d = dmabuf(rig, MR_BYTES))
            {
                assumeDmabufMr(rig, rig.pdA);
                final MemoryRegion mr = rig.pdA.regDmabufMr(0, MR_BYTES, 0, d.fd(), Set.of(Access.LOCAL_WRITE));
                mr.close();
                mr.close();
                assertThat(mr.isClosed()).isTrue();
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufRegMrBadFlags(final String name)
        {
            // REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE: the registration fails (ibv_reg_mr(3)).
            try (Rig rig = Rig.unconnected(name); DmaBuf d = dmabuf(rig, MR_BYTES))
            {
                assumeDmabufMr(rig, rig.pdA);
                for (final Set<Access> bad : List.of(Set.of(Access.REMOTE_WRITE), Set.of(Access.REMOTE_ATOMIC),
                    Set.of(Access.REMOTE_WRITE, Access.REMOTE_ATOMIC)))
                {
                    final VerbsException e = catchThrowableOfType(VerbsException.class,
                        () -> rig.pdA.regDmabufMr(0, MR_BYTES, 0, d.fd(), bad));
                    assertThat(e).as("registering with %s", bad).isNotNull();
                    assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufWriteAndRead(final String name)
        {
            // test_dmabuf_write and test_dmabuf_read: bytes stored in the MR's buffer read back, at both offsets.
            try (Rig rig = Rig.unconnected(name))
            {
                assumeDmabufMr(rig, rig.pdA);
                for (final long off : new long[] {0, MR_BYTES / 2})
                {
                    try (DmaBuf d = dmabuf(rig, MR_BYTES + off);
                        MemoryRegion mr = rig.pdA.regDmabufMr(off, MR_BYTES, off, d.fd(), Set.of(Access.LOCAL_WRITE)))
                    {
                        d.write(off + 100, pattern(4000, 3));
                        assertThat(d.read(off + 1100, 1000)).isEqualTo(java.util.Arrays.copyOfRange(pattern(4000, 3),
                            1000, 2000));
                        assertThat(mr.isClosed()).isFalse();
                    }
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufLkeyAndRkey(final String name)
        {
            // test_dmabuf_lkey and test_dmabuf_rkey: both keys readable, distinct MRs get distinct keys.
            try (Rig rig = Rig.unconnected(name); DmaBuf d = dmabuf(rig, MR_BYTES))
            {
                assumeDmabufMr(rig, rig.pdA);
                final Set<Access> rw = Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                try (MemoryRegion a = rig.pdA.regDmabufMr(0, MR_BYTES, 0, d.fd(), rw);
                    MemoryRegion b = rig.pdA.regDmabufMr(0, MR_BYTES, 0, d.fd(), rw))
                {
                    assertThat(a.lkey()).isNotEqualTo(b.lkey());
                    assertThat(a.rkey()).isNotEqualTo(b.rkey());
                }
            }
        }
    }

    /** tests/test_mr.py, class DmaBufTestCase: RC traffic between two dma-buf MRs. */
    @Nested
    class TestDmaBufTraffic
    {
        private static final int ITERS = 10;
        private static final int MSG = 1024;

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufRcTraffic(final String name)
        {
            // SEND/RECV: the sender's dma-buf bytes arrive in the receiver's dma-buf.
            final Set<Access> rw = Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            try (Rig rig = Rig.connected(name); DmaBuf client = dmabuf(rig, MSG); DmaBuf server = dmabuf(rig, MSG))
            {
                assumeDmabufMr(rig, rig.pdA);
                try (MemoryRegion cmr = rig.pdA.regDmabufMr(0, MSG, 0, client.fd(), rw);
                    MemoryRegion smr = rig.pdB.regDmabufMr(0, MSG, 0, server.fd(), rw))
                {
                    for (int i = 0; i < ITERS; i++)
                    {
                        client.write(0, pattern(MSG, i));
                        rig.qpB.postRecv(RecvWr.of(i, new Sge(0, MSG, smr.lkey())));
                        rig.qpA.postSend(SendWr.send(i, List.of(new Sge(0, MSG, cmr.lkey()))));
                        final WorkCompletion sent = rig.awaitA();
                        final WorkCompletion received = rig.awaitB();
                        assertThat(sent.status()).isEqualTo(WcStatus.SUCCESS);
                        assertThat(received.status()).isEqualTo(WcStatus.SUCCESS);
                        assertThat(received.byteLen()).isEqualTo(MSG);
                        assertThat(server.read(0, MSG)).isEqualTo(pattern(MSG, i));
                    }
                }
            }
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.rnicsim.conformance.RdmaCoreTestsPortDmaBufTest#devices")
        void testDmabufRdmaTraffic(final String name)
        {
            // RDMA WRITE from one dma-buf MR to the other's rkey at its iova (the MR's offset).
            final Set<Access> rw = Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            try (Rig rig = Rig.connected(name); DmaBuf client = dmabuf(rig, MSG); DmaBuf server = dmabuf(rig, MSG))
            {
                assumeDmabufMr(rig, rig.pdA);
                try (MemoryRegion cmr = rig.pdA.regDmabufMr(0, MSG, 0, client.fd(), rw);
                    MemoryRegion smr = rig.pdB.regDmabufMr(0, MSG, 0, server.fd(), rw))
                {
                    for (int i = 0; i < ITERS; i++)
                    {
                        client.write(0, pattern(MSG, 7 + i));
                        rig.qpA.postSend(SendWr.write(i, List.of(new Sge(0, MSG, cmr.lkey())), 0, smr.rkey()));
                        assertThat(rig.awaitA().status()).isEqualTo(WcStatus.SUCCESS);
                        assertThat(server.read(0, MSG)).isEqualTo(pattern(MSG, 7 + i));
                    }
                }
            }
        }
    }
}
