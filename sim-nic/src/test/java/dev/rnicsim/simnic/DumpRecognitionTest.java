package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.DeviceAttributes;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every real dump under {@code devinfo/} reads back as its own driver and part, and what it lacks comes from that
 * driver's built-in profile, never another's; the recognition table's rules one by one.
 */
class DumpRecognitionTest
{
    static Stream<Arguments> dumps()
    {
        return Stream.of(Arguments.of("connectx3-mlx4.txt", "mlx4", "connectx3"),
            Arguments.of("connectx4-mlx5.txt", "mlx5", "connectx4"),
            Arguments.of("connectx4lx-mlx5.txt", "mlx5", "connectx4lx"),
            Arguments.of("connectx5-mlx5.txt", "mlx5", "connectx5"),
            Arguments.of("connectx5ex-mlx5.txt", "mlx5", "connectx5ex"),
            Arguments.of("connectx6-mlx5.txt", "mlx5", "connectx6"),
            Arguments.of("connectx6lx-mlx5.txt", "mlx5", "connectx6lx"),
            Arguments.of("cxgb4.txt", "cxgb4", "cxgb4"),
            Arguments.of("efa.txt", "efa", "efa-gen1"),
            Arguments.of("hfi1.txt", "hfi1", "hfi1"),
            Arguments.of("irdma-e810.txt", "irdma", "e810"),
            Arguments.of("rxe.txt", "rxe", "rxe-legacy"));
    }

    private static Path resource(final String file) throws Exception
    {
        return Path.of(DumpRecognitionTest.class.getResource("/devinfo/" + file).toURI());
    }

    @ParameterizedTest(name = "{0} is {1} ({2})")
    @MethodSource("dumps")
    void everyDumpReadsBackAsItsOwnDriver(final String file, final String driver, final String base) throws Exception
    {
        final DevinfoResult r = DevinfoReader.read(resource(file));
        final DeviceProfile own = DeviceProfiles.byName(base);
        assertThat(r.profile().driver()).isEqualTo(driver);
        assertThat(r.defaultsFrom()).isEqualTo(base);
        assertThat(r.profile().traits()).as("traits of " + base).isEqualTo(own.traits());
        assertThat(r.profile().variantPolicy()).isEqualTo(own.variantPolicy());
        assertThat(r.profile().providerRules()).isEqualTo(own.providerRules());
        assertThat(r.warnings()).noneSatisfy(w -> assertThat(w).contains("no rule recognises"));
        final Map<String, Function<DeviceAttributes, Object>> fields = Map.of("max_mr", DeviceAttributes::maxMr,
            "page_size_cap", DeviceAttributes::pageSizeCap, "max_mw", DeviceAttributes::maxMw, "atomic_cap",
            DeviceAttributes::atomicCap, "general_odp_caps", a -> a.odpCaps().generalCaps(), "max_mr_size",
            DeviceAttributes::maxMrSizeBytes, "device_cap_flags", DeviceAttributes::deviceCapFlags);
        for (final Map.Entry<String, Function<DeviceAttributes, Object>> f : fields.entrySet())
        {
            if (r.defaultedFields().contains(f.getKey()))
            {
                assertThat(f.getValue().apply(r.profile().attributes())).as(file + " " + f.getKey() + " from " + base)
                    .isEqualTo(f.getValue().apply(own.attributes()));
            }
        }
    }

    @Test
    void identityOnlyDumpsGetTheirOwnDriversLimitsNotMlx5s() throws Exception
    {
        final DeviceAttributes efa = DevinfoReader.read(resource("efa.txt")).profile().attributes();
        assertThat(efa.pageSizeCap()).isEqualTo(0xfffff000L);
        assertThat(efa.odpCaps().supported()).isFalse();
        assertThat(efa.maxMw()).isZero();
        final DevinfoResult cxgb4 = DevinfoReader.read(resource("cxgb4.txt"));
        assertThat(cxgb4.profile().traits().transport()).isEqualTo(DriverTraits.Transport.IWARP);
        assertThat(cxgb4.profile().attributes().physPortCnt()).isEqualTo(2);
        assertThat(cxgb4.profile().attributes().atomicCap()).isEqualTo(DriverProfiles.cxgb4().attributes().atomicCap());
        assertThat(cxgb4.defaultedFields()).contains("max_mr", "page_size_cap").doesNotContain("vendor_id");
        final DevinfoResult hfi1 = DevinfoReader.read(resource("hfi1.txt"));
        assertThat(hfi1.profile().attributes().hwVer()).isEqualTo(0x10);
        assertThat(hfi1.profile().traits().keyVariantBits()).isEqualTo(16);
    }

    @Test
    void theHcaIdDecidesOverAnOemVendorId() throws Exception
    {
        final DevinfoResult r = DevinfoReader.read(resource("connectx6-mlx5.txt"));
        assertThat(r.profile().attributes().vendorId()).isEqualTo(0x119f);
        assertThat(r.profile().driver()).isEqualTo("mlx5");
        assertThat(r.warnings()).isEmpty();
    }

    @Test
    void vendorTableRecognisesEachDriverWithoutAnHcaId()
    {
        final Map<Integer, String> byVendor = Map.of(0x1d0f, "efa", 0x14e4, "bnxt_re", 0x19e5, "hns", 0x1077, "qedr",
            0x1ded, "erdma", 0x1414, "mana", 0x1425, "cxgb4", 0x1175, "hfi1", 0x626d74, "siw", 0xffffff, "rxe");
        for (final Map.Entry<Integer, String> e : byVendor.entrySet())
        {
            final int part = e.getKey() == 0x1d0f ? 0xefa1 : 1;
            final DeviceRecognizer.Recognition r = DeviceRecognizer.recognize(null, e.getKey(), part, null);
            assertThat(r.driver()).as("vendor 0x%x", e.getKey()).isEqualTo(e.getValue());
            assertThat(r.evidence()).anySatisfy(x -> assertThat(x).contains("vendor_id"));
        }
        assertThat(DeviceRecognizer.recognize(null, 0x8086, 0x24f0, null).driver()).isEqualTo("hfi1");
        assertThat(DeviceRecognizer.recognize(null, 0x8086, 5522, null).driver()).isEqualTo("irdma");
        assertThat(DeviceRecognizer.recognize(null, 0x02c9, 4103, null).driver()).isEqualTo("mlx4");
    }

    @Test
    void theTransportPicksIrdmasIwarpProfileAndAContradictionIsWarned()
    {
        assertThat(DeviceRecognizer.recognize("irdma0", 0x8086, 5522, DriverTraits.Transport.IWARP).profile().name())
            .isEqualTo("e810-iwarp");
        assertThat(DeviceRecognizer.recognize("irdma0", 0x8086, 5522, DriverTraits.Transport.INFINIBAND).profile()
            .name()).isEqualTo("e810");
        final DeviceRecognizer.Recognition efaAsIb = DeviceRecognizer.recognize("efa_0", 0x1d0f, 0xefa1,
            DriverTraits.Transport.INFINIBAND);
        assertThat(efaAsIb.driver()).isEqualTo("efa");
        assertThat(efaAsIb.warnings()).singleElement().asString().contains("transport InfiniBand (0)", "efa");
    }

    @Test
    void anUnknownPartOfAKnownDriverTakesThatDriversMainProfile()
    {
        final DeviceRecognizer.Recognition r = DeviceRecognizer.recognize("mlx5_0", 0x02c9, 4131, null);
        assertThat(r.profile().name()).isEqualTo("connectx5");
        assertThat(r.evidence()).anySatisfy(e -> assertThat(e).contains("4131", "no mlx5 part table"));
        assertThat(DeviceRecognizer.recognize("efa_0", 0x1d0f, 0xefa2, null).profile().name()).isEqualTo("efa-gen3");
    }
}
