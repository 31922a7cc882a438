package dev.rnicsim.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PortAttributes;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * rdma-core's tests/test_pd.py (PDTest) and tests/test_addr.py (AHTest) on every device of the suite.
 * <ul>
 * <li>{@code test_alloc_pd}, {@code test_dealloc_pd}, {@code test_multiple_pd_creation} (up to 200 PDs allocated and
 * deallocated in turn), {@code test_destroy_pd_twice} (pyverbs' close is idempotent, as {@code close()} is here):
 * a deallocated PD gives its entry back, so allocating and deallocating never runs into max_pd.</li>
 * <li>{@code test_create_ah} and {@code test_destroy_ah}: an address handle with a global route to the port's own
 * GID 0 (sgid_index 0), on each port that is ACTIVE or INIT, is created and destroyed; a provider without address
 * handles (EOPNOTSUPP: the iWARP drivers, which have no {@code create_ah}) skips, as upstream does.</li>
 * <li>{@code test_create_ah_roce}: on an Ethernet port an address handle without a GRH is refused; upstream checks
 * only that creation fails, the errno here is EINVAL (the kernel's {@code rdma_check_ah_attr}: a RoCE address needs
 * IB_AH_GRH; libmlx5 {@code mlx5_create_ah} sets EINVAL for {@code !is_global} on Ethernet before the kernel). An
 * InfiniBand port skips, as upstream does; so do EOPNOTSUPP (the iWARP drivers) and efa's port, of link layer
 * Unspecified, which has no RoCE address type and takes such an address (upstream's case fails there).</li>
 * </ul>
 */
class RdmaCorePdAddrPortTest
{
    /** The most PDs upstream's test_multiple_pd_creation allocates in turn (random.randint(1, 200)). */
    private static final int PD_ROUNDS = 200;

    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    private static Context open(final String name)
    {
        return ConformanceDevices.device(name).open();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldAllocAndDeallocAPdAndTakeASecondCloseAsDone(final String name)
    {
        try (Context ctx = open(name))
        {
            final ProtectionDomain pd = ctx.allocPd();
            assertThat(pd.isClosed()).isFalse();
            assertThat(pd.context()).isSameAs(ctx);
            pd.close();
            assertThat(pd.isClosed()).as("deallocated").isTrue();
            pd.close();
            assertThat(pd.isClosed()).as("a second close is done already, as pyverbs' close is").isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldAllocAndDeallocTwoHundredPdsInTurnWithoutRunningOutOfMaxPd(final String name)
    {
        try (Context ctx = open(name))
        {
            final int maxPd = ctx.queryDevice().maxPd();
            // More PDs in turn than the device has live at once shows each dealloc gives the entry back.
            final int rounds = Math.max(PD_ROUNDS, Math.min(maxPd + 1, 4 * PD_ROUNDS));
            for (int i = 0; i < rounds; i++)
            {
                final ProtectionDomain pd = ctx.allocPd();
                pd.close();
                assertThat(pd.isClosed()).isTrue();
            }
        }
    }

    /** The ports upstream creates address handles on: ACTIVE or INIT. */
    private static List<Integer> activeOrInitPorts(final Context ctx)
    {
        final List<Integer> ports = new ArrayList<>();
        for (int port = 1; port <= ctx.queryDevice().physPortCnt(); port++)
        {
            final int state = ctx.queryPort(port).state();
            if (state == PortAttributes.STATE_ACTIVE || state == PORT_INIT)
            {
                ports.add(port);
            }
        }
        assumeTrue(!ports.isEmpty(), "No port is up, can't create AH");
        return ports;
    }

    /** A GID's 16 bytes as eight groups of four hex digits (the text form {@link AhAttr#dgid()} takes). */
    private static String gidText(final byte[] gid)
    {
        final StringBuilder b = new StringBuilder();
        for (int i = 0; i < gid.length; i += 2)
        {
            b.append(i == 0 ? "" : ":").append(HexFormat.of().toHexDigits(gid[i])).append(HexFormat.of()
                .toHexDigits(gid[i + 1]));
        }
        return b.toString();
    }

    /** IBV_PORT_INIT. */
    private static final int PORT_INIT = 2;

    private static AddressHandle createOrSkip(final ProtectionDomain pd, final AhAttr attr)
    {
        try
        {
            return pd.createAh(attr);
        }
        catch (final VerbsException e)
        {
            assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "Create AH is not supported: " + e.getMessage());
            throw e;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldCreateAndDestroyAnAddressHandleToThePortsOwnGid(final String name)
    {
        try (Context ctx = open(name))
        {
            final ProtectionDomain pd = ctx.allocPd();
            for (final int port : activeOrInitPorts(ctx))
            {
                final String gid = gidText(ctx.queryGid(port, 0));
                final AhAttr attr = new AhAttr(gid, 0, port, 0);
                final AddressHandle ah = createOrSkip(pd, attr);
                assertThat(ah.pd()).isSameAs(pd);
                assertThat(ah.attr().portNum()).isEqualTo(port);
                assertThat(ah.attr().isGlobal()).isTrue();
                ah.close();
                assertThat(ah.isClosed()).as("ibv_destroy_ah").isTrue();
            }
            pd.close();
            assertThat(pd.isClosed()).as("no address handle keeps the PD busy once destroyed").isTrue();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldRefuseAnAddressHandleWithoutAGrhOnAnEthernetPortWithEinval(final String name)
    {
        try (Context ctx = open(name))
        {
            final ProtectionDomain pd = ctx.allocPd();
            for (final int port : activeOrInitPorts(ctx))
            {
                final int linkLayer = ctx.queryPort(port).linkLayer();
                assumeTrue(linkLayer != PortAttributes.LINK_LAYER_INFINIBAND, "Can't run RoCE tests on IB link layer");
                // efa's port is of link layer Unspecified: no RoCE address type, so nothing asks for a GRH there
                // (rdma_ah_find_type); upstream's case expects a refusal it does not get.
                assumeTrue(linkLayer == PortAttributes.LINK_LAYER_ETHERNET, "port " + port + " is of link layer "
                    + linkLayer + ", not Ethernet: no RoCE rule to check");
                final VerbsException e = catchThrowableOfType(VerbsException.class,
                    () -> pd.createAh(new AhAttr(null, 0, port, 0)).close());
                assertThat(e).as("a non-global address handle on the Ethernet port %d", port).isNotNull();
                assumeTrue(e.errnoName() != Errno.EOPNOTSUPP, "Create AH is not supported: " + e.getMessage());
                assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EINVAL);
            }
            pd.close();
            assertThat(pd.isClosed()).as("the refused address handle left nothing behind in the PD").isTrue();
        }
    }
}
