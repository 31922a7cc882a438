package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import java.util.EnumSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The testkit starts two connected hosts on every built-in profile (no QP pair on EFA, whose driver has no RC QPs),
 * and a registration on each keeps the driver's key layout (the index in the bits above the profile's variant
 * bits).
 */
class TestNicProfilesTest
{
    static java.util.Set<String> names()
    {
        return DeviceProfiles.builtIn().keySet();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("names")
    void everyBuiltInProfileStartsAndRegisters(final String name)
    {
        try (TestNic nic = TestNic.builder().profile(name).start())
        {
            assertThat(nic.profile().name()).isEqualTo(name);
            if (nic.profile().traits().acceptsQpType(QpType.RC))
            {
                assertThat(nic.qp(Side.A).state()).isEqualTo(QpState.RTS);
            }
            else
            {
                // efa_verbs.c efa_create_qp: UD and SRD only, so the fixture has no RC pair and says why
                assertThatThrownBy(() -> nic.qp(Side.A)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("EOPNOTSUPP").hasMessageContaining(name).hasMessageContaining("efa_verbs.c");
            }
            assertThat(nic.script()).contains("profile=" + name);
            final long buf = nic.alloc(Side.A, 4096);
            final MemoryRegion mr = nic.pd(Side.A).regMr(buf, 4096, EnumSet.of(Access.LOCAL_WRITE));
            final int bits = nic.profile().traits().keyVariantBits();
            assertThat(Integer.toUnsignedLong(mr.lkey()) >>> bits).as("MPT index of %s", name).isPositive();
        }
    }
}
