package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Builders;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link DevinfoWriter} then {@link DevinfoReader} gives back the same attributes with nothing defaulted, for
 * arbitrary attributes (unsigned max_mr_size 2^64-1, flag bits without a name, ODP bits without a name, empty
 * fw_ver) and for every built-in profile; and the writer prints what ibv_devinfo prints for the real dumps.
 */
class DevinfoRoundTripProperties
{

    @Provide
    Arbitrary<DeviceAttributes> attributes()
    {
        final Arbitrary<Integer> anyInt = Arbitraries.integers();
        // what a device reports: counts from 0 to 2^31 - 1 (the reader refuses negative ones at their line)
        final Arbitrary<Integer> count = Arbitraries.oneOf(Arbitraries.integers().between(0, 1 << 24),
            Arbitraries.integers().between(0, Integer.MAX_VALUE));
        final Arbitrary<Long> anyLong = Arbitraries.longs();
        final Arbitrary<Integer> odpBits = Arbitraries.oneOf(Arbitraries.integers().between(0, 0x3f), anyInt);
        final Arbitrary<OdpCaps> odp = Combinators.combine(odpBits, odpBits, odpBits, odpBits, odpBits)
            .as(OdpCaps::new);
        final Arbitrary<String> fwVer = Arbitraries.strings().withChars(' ').withCharRange('!', '~').ofMaxLength(63)
            .filter(s -> s.equals(s.strip()));
        return Builders.withBuilder(DeviceAttributes::builder)
            .use(fwVer).in(DeviceAttributes.Builder::fwVer)
            .use(anyLong).in(DeviceAttributes.Builder::nodeGuid)
            .use(anyLong).in(DeviceAttributes.Builder::sysImageGuid)
            .use(Arbitraries.oneOf(Arbitraries.of(0, 0x02c9, 0x8086), anyInt)).in(DeviceAttributes.Builder::vendorId)
            .use(count).in(DeviceAttributes.Builder::vendorPartId)
            .use(anyInt).in(DeviceAttributes.Builder::hwVer)
            .use(count).in(DeviceAttributes.Builder::physPortCnt)
            .use(Arbitraries.oneOf(Arbitraries.just(-1L), anyLong.filter(size -> size != 0)))
            .in(DeviceAttributes.Builder::maxMrSizeBytes)
            .use(anyLong.filter(cap -> (cap & ~0xfffL) != 0)).in(DeviceAttributes.Builder::pageSizeCap)
            .use(count).in(DeviceAttributes.Builder::maxQp)
            .use(count).in(DeviceAttributes.Builder::maxQpWr)
            .use(Arbitraries.oneOf(Arbitraries.longs().between(0, 0xffff_ffffL), anyLong))
            .in(DeviceAttributes.Builder::deviceCapFlags)
            .use(count).in(DeviceAttributes.Builder::maxSge)
            .use(count).in(DeviceAttributes.Builder::maxSgeRd)
            .use(count).in(DeviceAttributes.Builder::maxCq)
            .use(count).in(DeviceAttributes.Builder::maxCqe)
            .use(Arbitraries.integers().between(2, 1 << 24)).in(DeviceAttributes.Builder::maxMr)
            .use(count).in(DeviceAttributes.Builder::maxPd)
            .use(count).in(DeviceAttributes.Builder::maxQpRdAtom)
            .use(count).in(DeviceAttributes.Builder::maxQpInitRdAtom)
            .use(count).in(DeviceAttributes.Builder::maxResRdAtom)
            .use(count).in(DeviceAttributes.Builder::maxMw)
            .use(Arbitraries.of(AtomicCap.class)).in(DeviceAttributes.Builder::atomicCap)
            .use(count).in(DeviceAttributes.Builder::maxSrq)
            .use(count).in(DeviceAttributes.Builder::maxPkeys)
            .use(Arbitraries.integers().between(0, 255)).in(DeviceAttributes.Builder::localCaAckDelay)
            .use(odp).in(DeviceAttributes.Builder::odpCaps)
            .build(DeviceAttributes.Builder::build);
    }

    @Provide
    Arbitrary<String> hcaIds()
    {
        return Combinators.combine(Arbitraries.of("mlx4_", "mlx5_", "rxe", "irdma", "bnxt_re", "siw", "hns_", "foo_"),
            Arbitraries.integers().between(0, 15)).as((prefix, n) -> prefix + n);
    }

    @Property(tries = 2000)
    void writeThenReadGivesTheSameAttributesWithNothingDefaulted(
        @ForAll("attributes") final DeviceAttributes attributes, @ForAll("hcaIds") final String hcaId)
    {
        final DevinfoResult r = DevinfoReader.parse(DevinfoWriter.write(hcaId, attributes), "written.txt");
        assertThat(r.profile().attributes()).isEqualTo(attributes);
        assertThat(r.defaultedFields()).isEmpty();
        assertThat(r.profile().defaultedFields()).isEmpty();
        assertThat(r.hcaId()).isEqualTo(hcaId);
        assertThat(r.profile().name()).isEqualTo(hcaId);
    }

    @Property(tries = 300)
    void theHcaIdPrefixChoosesTheDriver(@ForAll("attributes") final DeviceAttributes attributes,
        @ForAll("hcaIds") final String hcaId)
    {
        final DevinfoResult r = DevinfoReader.parse(DevinfoWriter.write(hcaId, attributes), "written.txt");
        final String expected = hcaId.startsWith("mlx4_") ? "mlx4" : hcaId.startsWith("mlx5_") ? "mlx5"
            : hcaId.startsWith("rxe") ? "rxe" : hcaId.startsWith("irdma") ? "irdma"
            : hcaId.startsWith("bnxt_re") ? "bnxt_re" : hcaId.startsWith("siw") ? "siw"
            : hcaId.startsWith("hns_") ? "hns" : null;
        if (expected == null)
        {
            // no prefix rule: the vendor table decides, or nothing does and the device is generic
            assertThat(r.warnings()).singleElement().asString().satisfiesAnyOf(
                w -> assertThat(w).contains("no rule recognises").contains("generic"),
                w -> assertThat(w).contains("driver " + r.profile().driver() + " chosen", "vendor_id",
                    "hca_id '" + hcaId + "' names no driver"));
            assertThat(r.profile().driver().equals("generic")).isEqualTo(r.warnings().getFirst()
                .contains("no rule recognises"));
            return;
        }
        assertThat(r.profile().driver()).isEqualTo(expected);
        if (expected.equals("siw"))
        {
            // the writer's default transport is InfiniBand; siw devices are iWARP RNICs
            assertThat(r.warnings()).singleElement().asString().contains("transport InfiniBand (0)", "siw");
        }
        else
        {
            assertThat(r.warnings()).isEmpty();
        }
    }

    @Property(tries = 300)
    void writingIsStable(@ForAll("attributes") final DeviceAttributes attributes, @ForAll("hcaIds") final String hcaId)
    {
        final String text = DevinfoWriter.write(hcaId, attributes);
        final DeviceAttributes back = DevinfoReader.parse(text, "w").profile().attributes();
        assertThat(DevinfoWriter.write(hcaId, back)).isEqualTo(text);
        assertThat(text.lines().skip(1)).allSatisfy(l -> assertThat(l).startsWith("\t"));
    }

    @Example
    void everyBuiltInProfileRoundTrips()
    {
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            final String hcaId = p.traits().hcaIdPrefix() + "0";
            final DevinfoResult r = DevinfoReader.parse(DevinfoWriter.write(hcaId, p.attributes(),
                p.traits().transport()), p.name());
            assertThat(r.profile().attributes()).as(p.name()).isEqualTo(p.attributes());
            assertThat(r.defaultedFields()).as(p.name()).isEmpty();
            assertThat(r.profile().driver()).as(p.name()).isEqualTo(p.driver());
            assertThat(r.profile().traits()).as(p.name()).isEqualTo(p.traits());
            if (p.name().equals("generic"))
            {
                assertThat(r.warnings()).singleElement().asString().contains("no rule recognises");
                continue;
            }
            assertThat(r.warnings()).as(p.name()).isEmpty();
            if (!p.name().equals("connectx4-forced-ro"))
            {
                // connectx4-forced-ro is connectx4's part on a platform with relaxed ordering forced on, which no
                // dump shows: it reads back as connectx4.
                assertThat(r.defaultsFrom()).as(p.name()).isEqualTo(p.name());
                assertThat(r.profile().withName(p.name())).as(p.name())
                    .isEqualTo(new DeviceProfile(p.name(), p.driver(), p.attributes(), p.mtt(), p.variantPolicy(),
                        p.indexPolicy(), p.cacheEntries(), p.cacheWays(), p.providerRules(),
                        p.relaxedOrdering(), p.linkGbps(), p.seed(), List.of(), p.traits())
                        .withLinkLayer(p.linkLayer()));
            }
        }
    }

    @Example
    void builtInProfilesNamedAfterThemselvesGetTheirDriverFromTheVendor()
    {
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            final DevinfoResult r = DevinfoReader.parse(DevinfoWriter.write(p.name(), p.attributes()), "x");
            assertThat(r.profile().driver()).as(p.name()).isEqualTo(p.driver());
            assertThat(r.profile().attributes()).as(p.name()).isEqualTo(p.attributes());
        }
    }

    @Example
    void theWriterPrintsTheE810DumpLineForLine() throws Exception
    {
        final DeviceAttributes a = DeviceProfiles.e810().attributes().toBuilder().nodeGuid(0).sysImageGuid(0).build();
        final List<String> written = DevinfoWriter.write("irdma0", a).lines().toList();
        assertThat(firstLineNotInOrder(written, dumpLines("irdma-e810.txt"))).isNull();
    }

    @Example
    void theWriterPrintsTheConnectx3DumpLineForLine() throws Exception
    {
        final DeviceAttributes a = DeviceProfiles.connectx3().attributes().toBuilder().nodeGuid(0).sysImageGuid(0)
            .build();
        final List<String> written = DevinfoWriter.write("mlx4_2", a).lines().toList();
        // The dump's rdma-core predates xrc_odp_caps: drop that block (header and NO SUPPORT).
        assertThat(written.getLast()).isEqualTo("\t\t\t\t\tNO SUPPORT");
        assertThat(firstLineNotInOrder(written.subList(0, written.size() - 2), dumpLines("connectx3-mlx4.txt")))
            .isNull();
        assertThat(written).contains("\t\t\t\t\tUnknown flags: 0x488000", "\tatomic_cap:\t\t\tATOMIC_HCA (1)",
            "\tmax_mr_size:\t\t\t0xffffffffffffffff", "\tdevice_cap_flags:\t\t0x057e9c66");
    }

    @Example
    void theWriterPrintsUnknownCapFlagsInUpperCaseHex()
    {
        final String text = DevinfoWriter.write("mlx5_0", DeviceProfiles.connectx5().attributes());
        assertThat(text).contains("\t\t\t\t\tUnknown flags: 0xC8480000\n", "\tdevice_cap_flags:\t\t0xe97e1c36\n",
            "\tgeneral_odp_caps:\n\t\t\t\t\tODP_SUPPORT\n\t\t\t\t\tODP_SUPPORT_IMPLICIT\n",
            "\tuc_odp_caps:\n\t\t\t\t\tNO SUPPORT\n", "\tnode_guid:\t\t\t9803:9b03:0000:0001\n");
    }

    @Example
    void anEmptyFirmwareVersionRoundTrips()
    {
        final DeviceAttributes a = DeviceProfiles.rxe().attributes().toBuilder().fwVer("").build();
        final DevinfoResult r = DevinfoReader.parse(DevinfoWriter.write("rxe0", a), "rxe");
        assertThat(r.profile().attributes()).isEqualTo(a);
        assertThat(r.defaultedFields()).isEmpty();
    }

    @Example
    void theWriterRefusesTextThatWouldNotReadBack()
    {
        final DeviceAttributes a = DeviceProfiles.rxe().attributes();
        assertThatThrownBy(() -> DevinfoWriter.write("", a)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DevinfoWriter.write("rxe 0", a)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DevinfoWriter.write("rxe0", a.toBuilder().fwVer("1.0\nmax_qp: 1").build()))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DevinfoWriter.write("rxe0", a.toBuilder().fwVer(" 1.0").build()))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DevinfoWriter.write("rxe0", a.toBuilder().fwVer("1.0\u2028").build()))
            .isInstanceOf(IllegalArgumentException.class);
    }

    private static List<String> dumpLines(final String file) throws URISyntaxException, IOException
    {
        return Files.readAllLines(Path.of(DevinfoRoundTripProperties.class.getResource("/devinfo/" + file).toURI()));
    }

    /**
     * @return null when {@code part} appears in {@code whole} in order (other lines allowed in between), else the
     * first line of {@code part} not found.
     */
    private static String firstLineNotInOrder(final List<String> part, final List<String> whole)
    {
        int next = 0;
        for (final String line : whole)
        {
            if (next < part.size() && part.get(next).equals(line))
            {
                next++;
            }
        }
        return next == part.size() ? null : part.get(next);
    }
}
