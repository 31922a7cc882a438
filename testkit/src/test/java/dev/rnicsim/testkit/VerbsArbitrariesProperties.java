package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The arbitraries give what they promise, checked against the simulated device where a verb decides.
 */
class VerbsArbitrariesProperties
{
    private static final long BUFFER = 64 << 10;
    private static TestNic nic;
    private static long buffer;
    private static MemoryRegion bindable;

    @BeforeContainer
    static void start()
    {
        nic = TestNic.start();
        buffer = nic.alloc(Side.B, BUFFER);
        bindable = nic.reg(Side.B, buffer, BUFFER, Access.LOCAL_WRITE, Access.MW_BIND, Access.REMOTE_READ,
            Access.REMOTE_WRITE);
    }

    @AfterContainer
    static void stop()
    {
        bindable.close();
        nic.close();
    }

    @Property(tries = 60)
    void validAccessIsAcceptedByIbvRegMr(@ForAll("valid") final Set<Access> access)
    {
        assertThat(VerbsArbitraries.isValid(access)).isTrue();
        nic.reg(Side.B, buffer, 4096, access).close();
    }

    @Provide
    Arbitrary<Set<Access>> valid()
    {
        return VerbsArbitraries.validAccess();
    }

    @Property(tries = 30)
    void invalidAccessIsEinval(@ForAll("invalid") final Set<Access> access)
    {
        assertThat(VerbsArbitraries.isValid(access)).isFalse();
        assertThatThrownBy(() -> nic.reg(Side.B, buffer, 4096, access)).isInstanceOf(VerbsException.class)
            .extracting(e -> ((VerbsException)e).errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Provide
    Arbitrary<Set<Access>> invalid()
    {
        return VerbsArbitraries.invalidAccess();
    }

    @Property(tries = 200)
    void anyAccessHoldsOnlyAccessFlags(@ForAll("any") final Set<Access> access)
    {
        assertThat(Access.fromBits(Access.toBits(access))).isEqualTo(access);
    }

    @Provide
    Arbitrary<Set<Access>> any()
    {
        return VerbsArbitraries.anyAccess();
    }

    @Example
    void lengthsStayInRangeAndLeanOnPageEdges()
    {
        final List<Long> lengths = VerbsArbitraries.bufferLengths(1, 1L << 20).sampleStream().limit(2000).toList();
        assertThat(lengths).allMatch(n -> n >= 1 && n <= 1L << 20);
        final long edges = lengths.stream().filter(n -> n % 4096 <= 1 || n % 4096 == 4095).count();
        assertThat(edges).as("page multiples and one byte either side").isGreaterThan(600);
        assertThat(VerbsArbitraries.bufferLengths(7, 7).sampleStream().limit(50)).containsOnly(7L);
    }

    @Property(tries = 300)
    void rangesLieInside(@ForAll("lengths") final long length)
    {
        VerbsArbitraries.rangesWithin(length).sampleStream().limit(20).forEach(r ->
        {
            assertThat(r[0]).isBetween(0L, length - 1);
            assertThat(r[1]).isBetween(1L, length - r[0]);
        });
        VerbsArbitraries.offsetsWithin(length).sampleStream().limit(20).forEach(o -> assertThat(o)
            .isBetween(0L, length - 1));
    }

    @Provide
    Arbitrary<Long> lengths()
    {
        return VerbsArbitraries.bufferLengths();
    }

    @Example
    void keysAreMostlyTheIssuedOnes()
    {
        final List<Integer> issued = List.of(0x100, 0x201, 0x302);
        final long hits = VerbsArbitraries.keys(issued).sampleStream().limit(1000).filter(issued::contains).count();
        assertThat(hits).isGreaterThan(600);
        assertThat(VerbsArbitraries.otherVariants(0x1234).sampleStream().limit(100))
            .allMatch(k -> (k & ~0xff) == 0x1200 && k != 0x1234);
    }

    @Property(tries = 40)
    void windowBindsInsideTheMrSucceed(@ForAll("binds") final MwBindInfo info)
    {
        assertThat(info.addr()).isBetween(bindable.addr(), bindable.addr() + BUFFER - 1);
        assertThat(info.addr() + info.lengthBytes()).isLessThanOrEqualTo(bindable.addr() + BUFFER);
        try (MemoryWindow mw = nic.pd(Side.B).allocMw(MwType.TYPE_1))
        {
            nic.ensureConnected();
            final long id = nic.nextWrId();
            nic.qp(Side.B).bindMw(mw, id, Set.of(SendFlag.SIGNALED), info);
            final WorkCompletion wc = nic.cq(Side.B).poll(16).stream().filter(c -> c.wrId() == id).findFirst()
                .orElseThrow();
            assertThat(wc.ok()).as(wc.toString()).isTrue();
            if (info.access().contains(Access.REMOTE_WRITE))
            {
                final MemoryRegion src = nic.reg(Side.A, nic.alloc(Side.A, 4096), 4096, Access.LOCAL_WRITE);
                assertThat(nic.write(src, src.addr(), 1, info.addr(), mw.rkey()).ok()).isTrue();
                src.close();
            }
        }
    }

    @Provide
    Arbitrary<MwBindInfo> binds()
    {
        return VerbsArbitraries.mwBindInfos(bindable);
    }

    @Property(tries = 60)
    void anyBindsIncludeRefusedOnes(@ForAll("anyBinds") final MwBindInfo info)
    {
        assertThat(info.mr()).isSameAs(bindable);
        assertThat(info.addr()).isBetween(bindable.addr() - 4096, bindable.addr() + BUFFER + 4096);
    }

    @Provide
    Arbitrary<MwBindInfo> anyBinds()
    {
        return VerbsArbitraries.anyMwBindInfos(bindable);
    }

    @Property(tries = 40)
    void sgesLieInsideTheMr(@ForAll("sges") final Sge sge)
    {
        assertThat(sge.lkey()).isEqualTo(bindable.lkey());
        assertThat(sge.addr()).isGreaterThanOrEqualTo(bindable.addr());
        assertThat(sge.addr() + sge.lengthBytes()).isLessThanOrEqualTo(bindable.addr() + BUFFER);
        assertThat(sge.lengthBytes()).isBetween(1L, 4096L);
    }

    @Provide
    Arbitrary<Sge> sges()
    {
        return VerbsArbitraries.sgesWithin(bindable, 4096);
    }
}
