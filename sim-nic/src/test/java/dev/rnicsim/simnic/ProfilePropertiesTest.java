package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Where drivers or parts differ, the difference is a property of the device profile: device memory (MEMIC) by part,
 * the provider's reading of MLX_*_ALLOC_TYPE by driver.
 */
class ProfilePropertiesTest
{
    @ParameterizedTest
    @ValueSource(strings = {"connectx4", "connectx4lx", "connectx4-forced-ro"})
    void connectx4PartsHaveNoDeviceMemory(final String name)
    {
        // ConnectX-4 and -4 Lx report no memic capability: max_dm_size 0, and ibv_alloc_dm is EOPNOTSUPP.
        final DeviceProfile p = DeviceProfiles.byName(name);
        assertThat(p.follows(ProviderRule.DEVICE_MEMORY)).isFalse();
        assertThat(p.maxDmSizeBytes()).isZero();
        final RuleRig rig = RuleRig.unconnected(p);
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.ctxB.allocDm(4096));
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EOPNOTSUPP);
        // Every other rule of the ConnectX-5 stays: it is the same driver.
        final java.util.Set<ProviderRule> others = java.util.EnumSet.copyOf(DeviceProfiles.connectx5().providerRules());
        others.remove(ProviderRule.DEVICE_MEMORY);
        assertThat(p.providerRules()).containsAll(others);
    }

    @ParameterizedTest
    @ValueSource(strings = {"connectx5", "connectx5ex", "connectx6", "connectx6dx", "connectx6lx", "connectx7",
        "bluefield2", "bluefield3"})
    void connectx5AndLaterHaveDeviceMemory(final String name)
    {
        final DeviceProfile p = DeviceProfiles.byName(name);
        assertThat(p.maxDmSizeBytes()).isEqualTo(DeviceProfile.MLX5_MAX_DM_BYTES);
        RuleRig.unconnected(p).ctxB.allocDm(4096).close();
    }

    @org.junit.jupiter.api.Test
    void onlyMlx5ProvidersReadTheQueueAllocTypeVariables()
    {
        // mlx5_get_alloc_type (providers/mlx5/buf.c) reads MLX_QP/CQ/SRQ_ALLOC_TYPE; no other provider does.
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            assertThat(p.follows(ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV)).as(p.name())
                .isEqualTo(p.driver().equals("mlx5"));
        }
    }
}
