package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fabric server's settings a joining run cannot change are named, with the fabric's value and the way out. */
class FabricSettingsTest
{
    @TempDir
    Path dir;

    @Test
    void aSettingThatDiffersFromTheFabricsShouldBeNamedWithBothValues()
    {
        final FabricOrigin running = new FabricOrigin(42, "profile rxe (device rxe0)", null,
            Map.of("RNICSIM_FABRIC_SPIN_NS", "0"));
        assertThat(FabricSettings.ignored("lat", running, Map.of("RNICSIM_FABRIC_STATS", "1"))).containsExactly(
            "RNICSIM_FABRIC_SPIN_NS unset does not apply to this run: fabric 'lat' is served by the run that started "
                + "it (process 42), with RNICSIM_FABRIC_SPIN_NS '0' (0 ns of polling before it sleeps), and a fabric's "
                + "server keeps the settings of the run that started it; for unset (10000 ns of polling before it "
                + "sleeps), use a new --fabric name (or start this run first)",
            "RNICSIM_FABRIC_STATS=1 does not apply to this run: fabric 'lat' is served by the run that started it "
                + "(process 42), with RNICSIM_FABRIC_STATS unset (statistics off), and a fabric's server keeps the "
                + "settings of the run that started it; for '1' (statistics on), use a new --fabric name (or start "
                + "this run first)");
    }

    @Test
    void settingsOfTheSameEffectShouldSayNothing()
    {
        final FabricOrigin running = new FabricOrigin(42, "d", null, Map.of("RNICSIM_FABRIC_SPIN_NS", "10000",
            "RNICSIM_FABRIC_WARMUP", "1"));
        assertThat(FabricSettings.ignored("f", running, Map.of("HOME", "/root"))).as("unset is the default 10000 ns "
            + "and warm-up on").isEmpty();
        assertThat(FabricSettings.ignored("f", new FabricOrigin(1, "d", null), Map.of("RNICSIM_POLL_SPIN_NS", "5")))
            .as("a library setting, read by each program").isEmpty();
    }

    @Test
    void theOriginFileShouldCarryTheSettings() throws Exception
    {
        final FabricOrigin o = new FabricOrigin(7, "profile rxe (device rxe0)", "/t.json",
            Map.of("RNICSIM_FABRIC_WARMUP", "0"));
        final Path file = dir.resolve("origin");
        o.write(file);
        assertThat(FabricOrigin.read(file)).isEqualTo(o);
    }
}
