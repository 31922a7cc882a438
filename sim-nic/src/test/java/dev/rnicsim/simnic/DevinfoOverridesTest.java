package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link DevinfoReader#withOverrides}: attributes changed by their ibv_devinfo names with the syntax and checks of a
 * dump line, the cache geometry, the order of assignments, the errors (naming the assignment) and the base profile
 * left as it was.
 */
class DevinfoOverridesTest
{
    private static DeviceProfile cx5()
    {
        return DeviceProfiles.connectx5();
    }

    private static DeviceProfile set(final DeviceProfile base, final String... assignments)
    {
        return DevinfoReader.withOverrides(base, List.of(assignments));
    }

    /** The profile changed must equal the base with exactly this attribute changed. */
    private static void assertOnlyAttributeChanged(final DeviceProfile base, final DeviceProfile changed,
        final DeviceAttributes expected)
    {
        assertThat(changed.attributes()).isEqualTo(expected);
        assertThat(changed).isEqualTo(base.withAttributes(expected));
        assertThat(changed.name()).isEqualTo(base.name());
        assertThat(changed.driver()).isEqualTo(base.driver());
        assertThat(changed.mtt()).isEqualTo(base.mtt());
    }

    @Test
    void shouldSetMaxMr()
    {
        final DeviceProfile base = cx5();
        assertThat(base.attributes().maxMr()).isNotEqualTo(100_000);
        assertOnlyAttributeChanged(base, set(base, "max_mr=100000"),
            base.attributes().toBuilder().maxMr(100_000).build());
    }

    @Test
    void shouldSetPageSizeCapFromHex()
    {
        final DeviceProfile base = cx5();
        final DeviceProfile p = set(base, "page_size_cap=0x1000");
        assertThat(p.attributes().pageSizeCap()).isEqualTo(4096);
        assertThat(p.attributes().supportsPageSize(2L << 20)).isFalse();
        assertThat(base.attributes().supportsPageSize(2L << 20)).isTrue();
        assertOnlyAttributeChanged(base, p, base.attributes().toBuilder().pageSizeCap(4096).build());
    }

    @Test
    void shouldSetMaxMrSizeFromHexOrDecimal()
    {
        final DeviceProfile base = cx5();
        assertOnlyAttributeChanged(base, set(base, "max_mr_size=0x200000000"),
            base.attributes().toBuilder().maxMrSizeBytes(1L << 33).build());
        assertThat(set(base, "max_mr_size=8589934592").attributes().maxMrSizeBytes()).isEqualTo(1L << 33);
        // An unsigned 64-bit value, as ibv_devinfo prints 0xffffffffffffffff.
        assertThat(set(DeviceProfiles.e810(), "max_mr_size=0xffffffffffffffff").attributes().maxMrSizeBytes())
            .isEqualTo(-1L);
    }

    @Test
    void shouldSetAtomicCapByName()
    {
        final DeviceProfile base = cx5();
        assertThat(base.attributes().atomicCap()).isEqualTo(AtomicCap.HCA);
        assertOnlyAttributeChanged(base, set(base, "atomic_cap=ATOMIC_NONE"),
            base.attributes().toBuilder().atomicCap(AtomicCap.NONE).build());
        assertThat(set(base, "atomic_cap=ATOMIC_GLOB (2)").attributes().atomicCap()).isEqualTo(AtomicCap.GLOB);
    }

    @Test
    void shouldSetOdpFieldsAsNumbers()
    {
        final DeviceProfile base = cx5();
        final OdpCaps o = base.attributes().odpCaps();
        final DeviceProfile p = set(base, "rc_odp_caps=0x2f");
        assertOnlyAttributeChanged(base, p, base.attributes().toBuilder().odpCaps(new OdpCaps(o.generalCaps(),
            0x2f, o.ucOdpCaps(), o.udOdpCaps(), o.xrcOdpCaps())).build());
        assertThat(p.attributes().odpCaps().rcOdpCaps()).isEqualTo(OdpCaps.SEND | OdpCaps.RECV | OdpCaps.WRITE
            | OdpCaps.READ | OdpCaps.SRQ_RECV);
        final DeviceProfile q = set(base, "general_odp_caps=0", "uc_odp_caps=9");
        assertThat(q.attributes().odpCaps()).isEqualTo(new OdpCaps(0, o.rcOdpCaps(), OdpCaps.SEND | OdpCaps.READ,
            o.udOdpCaps(), o.xrcOdpCaps()));
    }

    @Test
    void shouldSetTheCacheGeometry()
    {
        final DeviceProfile base = cx5();
        final DeviceProfile p = set(base, "cache_entries=4096", "cache_ways=4");
        assertThat(p.cacheEntries()).isEqualTo(4096);
        assertThat(p.cacheWays()).isEqualTo(4);
        assertThat(p.attributes()).isEqualTo(base.attributes());
        assertThat(p).isEqualTo(base.withCache(4096, 4));
        // The geometry is checked once all assignments are applied: ways first, then entries, is fine.
        final DeviceProfile q = set(base, "cache_ways=3", "cache_entries=3000");
        assertThat(q.cacheEntries()).isEqualTo(3000);
        assertThat(q.cacheWays()).isEqualTo(3);
    }

    @Test
    void shouldLetTheLaterAssignmentWin()
    {
        final DeviceProfile base = cx5();
        assertThat(set(base, "max_mr=100", "max_mr=200").attributes().maxMr()).isEqualTo(200);
        assertThat(set(base, "max_mr=200", "max_mr=100").attributes().maxMr()).isEqualTo(100);
        assertThat(set(base, "atomic_cap=ATOMIC_NONE", "atomic_cap=ATOMIC_HCA").attributes().atomicCap())
            .isEqualTo(AtomicCap.HCA);
        assertThat(set(base, "cache_entries=1024", "cache_entries=2048").cacheEntries()).isEqualTo(2048);
        final DeviceProfile both = set(base, "max_mr=1000", "page_size_cap=0x201000", "max_mr=2000");
        assertThat(both.attributes().maxMr()).isEqualTo(2000);
        assertThat(both.attributes().pageSizeCap()).isEqualTo(0x201000L);
    }

    @Test
    void shouldReturnAnEqualProfileForNoAssignments()
    {
        assertThat(set(cx5())).isEqualTo(cx5());
        assertThat(set(DeviceProfiles.connectx3())).isEqualTo(DeviceProfiles.connectx3());
    }

    @Test
    void shouldLeaveTheBaseProfileUnchanged()
    {
        final DeviceProfile base = DeviceProfiles.connectx3();
        final DeviceProfile copy = DeviceProfiles.connectx3();
        final DeviceProfile changed = set(base, "max_mr=1000", "page_size_cap=0x1000", "max_mr_size=0x200000000",
            "atomic_cap=ATOMIC_NONE", "rc_odp_caps=0x2f", "cache_entries=64", "cache_ways=2");
        assertThat(base).isEqualTo(copy);
        assertThat(base.attributes().maxMr()).isEqualTo(524_032);
        assertThat(base.attributes().pageSizeCap()).isEqualTo(0xfffffe00L);
        assertThat(base.attributes().atomicCap()).isEqualTo(AtomicCap.HCA);
        assertThat(base.attributes().odpCaps()).isEqualTo(OdpCaps.NONE);
        assertThat(base.cacheEntries()).isEqualTo(DeviceProfiles.ASSUMED_CACHE_ENTRIES);
        assertThat(base.cacheWays()).isEqualTo(DeviceProfiles.ASSUMED_CACHE_WAYS);
        assertThat(changed.attributes().maxMr()).isEqualTo(1000);
        assertThat(changed.attributes().pageSizeCap()).isEqualTo(0x1000L);
        assertThat(changed.attributes().maxMrSizeBytes()).isEqualTo(1L << 33);
        assertThat(changed.attributes().atomicCap()).isEqualTo(AtomicCap.NONE);
        assertThat(changed.attributes().odpCaps().rcOdpCaps()).isEqualTo(0x2f);
        assertThat(changed.cacheEntries()).isEqualTo(64);
        assertThat(changed.cacheWays()).isEqualTo(2);
        assertThat(changed.mtt()).isEqualTo(base.mtt());
        assertThat(changed.name()).isEqualTo("connectx3");
        assertThat(changed.driver()).isEqualTo("mlx4");
    }

    @Test
    void shouldRefuseAnUnknownName()
    {
        assertThatThrownBy(() -> set(cx5(), "max_foo=1")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("max_foo=1: ").hasMessageContaining("max_foo");
        // hca_id and port fields are not attributes a profile has.
        assertThatThrownBy(() -> set(cx5(), "hca_id=mlx5_0")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("hca_id=mlx5_0: ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"max_mr", "max_mr=", "=100", "page_size_cap 0x1000"})
    void shouldRefuseAnAssignmentWithoutNameEqualsValue(final String assignment)
    {
        assertThatThrownBy(() -> set(cx5(), assignment)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith(assignment + ": ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"max_mr=lots", "max_mr=1.5", "page_size_cap=0xZZ", "page_size_cap=-4096",
        "max_mr_size=0x10000000000000000", "atomic_cap=ATOMIC_SOME", "atomic_cap=ATOMIC_NONE (1)",
        "rc_odp_caps=SUPPORT_SEND", "max_qp=0x100000000", "cache_entries=many", "cache_entries=0", "cache_ways=-8"})
    void shouldRefuseAMalformedValueNamingTheAssignment(final String assignment)
    {
        assertThatThrownBy(() -> set(cx5(), assignment)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith(assignment + ": ").hasMessageContaining("expected");
    }

    @ParameterizedTest
    @ValueSource(strings = {"max_mr=1", "max_mr=0", "max_mr=16777217", "max_mr=-5"})
    void shouldRefuseMaxMrOutsideTheTwentyFourBitMptIndex(final String assignment)
    {
        assertThatThrownBy(() -> set(cx5(), assignment)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith(assignment + ": ").hasMessageContaining("2.." + (1 << 24));
    }

    @Test
    void shouldAcceptMaxMrAtBothEndsOfItsRange()
    {
        assertThat(set(cx5(), "max_mr=2").attributes().maxMr()).isEqualTo(2);
        assertThat(set(DeviceProfiles.connectx3(), "max_mr=16777216").attributes().maxMr()).isEqualTo(1 << 24);
    }

    @Test
    void shouldRefuseCacheEntriesThatAreNotAMultipleOfTheWays()
    {
        // The base has 8192 entries of 8 ways.
        assertThatThrownBy(() -> set(cx5(), "cache_entries=1001")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("cache_entries=1001").hasMessageContaining("cache_ways=8");
        assertThatThrownBy(() -> set(cx5(), "cache_ways=3")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("cache_ways=3").hasMessageContaining("cache_entries=8192");
        assertThatThrownBy(() -> set(cx5(), "cache_entries=100", "cache_ways=7"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cache_entries=100")
            .hasMessageContaining("cache_ways=7");
    }

    @Test
    void shouldRefuseTheWholeListWhenOneAssignmentIsBad()
    {
        final DeviceProfile base = cx5();
        assertThatThrownBy(() -> set(base, "max_mr=1000", "max_mr=oops", "page_size_cap=0x1000"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("max_mr=oops: ");
        assertThat(base).isEqualTo(cx5());
    }
}
