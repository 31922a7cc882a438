package dev.rnicsim.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.VerbsException;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * rdma-core's tests/test_cq.py on every device of the suite.
 * <ul>
 * <li>{@code CQAPITest.test_create_cq}: CQs of 1, max_cqe / 2 and max_cqe entries on each of the first two completion
 * vectors (as many as {@code num_comp_vectors} has), and one of {@code num_comp_vectors} entries on the last vector,
 * are created. A CQ whose ring needs more locked memory than the process may pin (RLIMIT_MEMLOCK, 8 MiB on the
 * simulated hosts; upstream runs as root, with CAP_IPC_LOCK) is ENOMEM on the providers that pin a user buffer
 * (libmlx5, libmlx4 and the like, {@code ib_umem_get}); the case takes that answer for the large sizes and says so.</li>
 * <li>{@code CQAPITest.test_create_cq_bad_flow}: max_cqe + 1 entries and completion vector {@code num_comp_vectors}
 * + 1 are EINVAL (the kernel's {@code ib_uverbs_create_cq} checks the vector; each driver the entries: rxe
 * {@code rxe_cq_chk_attr}, mlx5 {@code mlx5_ib_create_cq}); the first vector past the last is checked too.</li>
 * <li>{@code CQTest.test_resize_cq}: a CQ of 3 under a UD QP is shrunk to 1 and grown to 7, each granting at least
 * what was asked, then filled to {@code cqe - 1} unpolled completions, after which shrinking it to 1 is EINVAL
 * (rxe {@code rxe_cq_chk_attr}: "cqe(%d) < current # elements in queue"; mlx5 {@code mlx5_ib_resize_cq}). As
 * upstream: EOPNOTSUPP for the resize skips, and irdma skips before the fill
 * ({@code tests/irdma_base.py skip_if_irdma_dev}).</li>
 * </ul>
 * {@code test_create_cq_with_comp_channel} is not expressible: verbs-api has no completion channels.
 */
class RdmaCoreCqPortTest
{
    /** Intel's PCI vendor id, which irdma devices report. */
    private static final int INTEL_VENDOR_ID = 0x8086;
    /** pyverbs' UD Q_Key. */
    private static final int QKEY = 0x11111111;

    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    private static VerbsException refused(final Runnable verb)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, verb::run);
        assertThat(e).as("the verb fails").isNotNull();
        return e;
    }

    private static <T> T skipOnEopnotsupp(final Supplier<T> verb, final String reason)
    {
        try
        {
            return verb.get();
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, reason + ": " + e.getMessage());
            throw e;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldCreateCqsOfOneHalfAndAllOfMaxCqeOnTheFirstVectorsAndOneOnTheLastVector(final String name)
    {
        try (Context ctx = ConformanceDevices.device(name).open())
        {
            final DeviceAttributes attr = ctx.queryDevice();
            final int vectors = ctx.numCompVectors();
            assertThat(vectors).as("num_comp_vectors").isPositive();
            for (final int cqe : new int[] {1, attr.maxCqe() / 2, attr.maxCqe()})
            {
                for (int vector = 0; vector < Math.min(2, vectors); vector++)
                {
                    final CompletionQueue cq;
                    try
                    {
                        cq = ctx.createCq(cqe, vector);
                    }
                    catch (final VerbsException e)
                    {
                        // a ring beyond RLIMIT_MEMLOCK: what a process without CAP_IPC_LOCK gets
                        assertThat(cqe).as("only a large CQ may exceed RLIMIT_MEMLOCK: " + e.getMessage())
                            .isGreaterThan(1);
                        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.ENOMEM);
                        continue;
                    }
                    assertThat(cq.cqe()).as("cq_size=%d, comp_vector=%d", cqe, vector).isGreaterThanOrEqualTo(cqe);
                    cq.close();
                }
            }
            final CompletionQueue last = ctx.createCq(vectors, vectors - 1);
            assertThat(last.cqe()).isGreaterThanOrEqualTo(vectors);
            last.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldRefuseMoreEntriesThanMaxCqeAndAVectorPastTheLastWithEinval(final String name)
    {
        try (Context ctx = ConformanceDevices.device(name).open())
        {
            final DeviceAttributes attr = ctx.queryDevice();
            final int vectors = ctx.numCompVectors();
            assertThat(refused(() -> ctx.createCq(attr.maxCqe() + 1, 0)).errnoName()).as("max_cqe + 1 entries")
                .isEqualTo(Errno.EINVAL);
            assertThat(refused(() -> ctx.createCq(100, vectors + 1)).errnoName())
                .as("comp_vector num_comp_vectors + 1").isEqualTo(Errno.EINVAL);
            assertThat(refused(() -> ctx.createCq(100, vectors)).errnoName()).as("comp_vector num_comp_vectors")
                .isEqualTo(Errno.EINVAL);
            final CompletionQueue cq = ctx.createCq(100, 0);
            assertThat(cq.cqe()).as("the refusals left the context able to create a CQ").isGreaterThanOrEqualTo(100);
            cq.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldResizeDownAndUpAndRefuseASizeBelowTheUnpolledCompletions(final String name)
    {
        try (Context ctx = ConformanceDevices.device(name).open())
        {
            final DeviceAttributes attr = ctx.queryDevice();
            final ProtectionDomain pd = ctx.allocPd();
            final CompletionQueue cq = ctx.createCq(3);
            final QueuePair qp = skipOnEopnotsupp(() -> pd.createQp(new QpInitAttr(cq, cq, QpType.UD,
                new QpCap(10, 3, 1, 1, 0), false)), "Create UD QP is not supported");
            modify(qp, QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1).qkey(QKEY));
            modify(qp, QpAttr.builder().state(QpState.RTR));
            modify(qp, QpAttr.builder().state(QpState.RTS).sqPsn(0));

            skipOnEopnotsupp(() ->
            {
                cq.resize(1);
                return cq;
            }, "Resize CQ is not supported");
            assertThat(cq.cqe()).as("shrunk to at least the 1 asked for").isGreaterThanOrEqualTo(1);
            cq.resize(7);
            assertThat(cq.cqe()).as("grown to at least the 7 asked for").isGreaterThanOrEqualTo(7);

            assumeTrue(attr.vendorId() != INTEL_VENDOR_ID, "irdma: upstream skips the rest (skip_if_irdma_dev)");
            final AddressHandle ah = skipOnEopnotsupp(() -> pd.createAh(AhAttr.toGid(qp.address().gid())),
                "Create AH is not supported");
            final long buf = ctx.memory().allocate(Rig.PAGE, Backing.BASE_PAGES);
            final MemoryRegion mr = pd.regMr(buf, Rig.PAGE, Rig.LOCAL);
            final int fill = cq.cqe() - 1;
            for (int i = 0; i < fill; i++)
            {
                qp.postSendUd(List.of(new UdSendWr(SendWr.send(i, List.of(new Sge(buf, 8, mr.lkey()))), ah,
                    qp.qpNum(), QKEY)));
            }
            final int granted = cq.cqe();
            final VerbsException e = refused(() -> cq.resize(1));
            assertThat(e.errnoName()).as("a size below the %d unpolled completions: %s", fill, e.getMessage())
                .isEqualTo(Errno.EINVAL);
            assertThat(cq.cqe()).as("a refused resize keeps the size").isEqualTo(granted);
            assertThat(cq.poll(fill + 1)).as("the unpolled completions stay").hasSize(fill);
            qp.close();
            ah.close();
            mr.close();
            ctx.memory().free(buf, Rig.PAGE);
        }
    }

    private static void modify(final QueuePair qp, final QpAttr.Builder b)
    {
        qp.modify(b.build(), b.mask());
    }
}
