package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/**
 * {@link CompletionAttributes}: the completion clock and num_comp_vectors are a property of the profile, the driver's
 * by default and a dump's where the dump prints them (ibv_devinfo's {@code completion timestamp_mask},
 * {@code hca_core_clock} and {@code num_comp_vectors} lines).
 */
class CompletionAttributesTest
{
    /** The head of an mlx5 dump, then the extended section as libibverbs/examples/devinfo.c prints it. */
    private static final String MLX5_DUMP = String.join("\n",
        "hca_id:\tmlx5_0",
        "\ttransport:\t\t\tInfiniBand (0)",
        "\tvendor_id:\t\t\t0x02c9",
        "\tvendor_part_id:\t\t\t4119",
        "\tmax_sge:\t\t\t30",
        "\tmax_mr:\t\t\t\t16777216",
        "\tgeneral_odp_caps:",
        "\t\t\t\t\tODP_SUPPORT",
        "\tcompletion timestamp_mask:\t\t\t0x7fffffffffffffff",
        "\thca_core_clock:\t\t\t78125kHZ",
        "\tdevice_cap_flags_ex:\t\t0x15725E1C36",
        "\ttso_caps:",
        "\t\tmax_tso:\t\t\t262144",
        "\t\tmax_sge:\t\t\t5",
        "\tmax_wq_type_rq:\t\t\t8388608",
        "\tmaximum available device memory:\t131072Bytes",
        "",
        "\tnum_comp_vectors:\t\t63",
        "\t\tport:\t1",
        "\t\t\tstate:\t\t\tPORT_ACTIVE (4)",
        "");

    @Test
    void aDumpsClockAndVectorsBecomeTheProfilesAndTheExtendedLinesChangeNoAttribute()
    {
        final DeviceProfile p = DevinfoReader.parse(MLX5_DUMP, "cx5.txt").profile();

        assertThat(p.completions()).isEqualTo(new CompletionAttributes(78_125, 0x7fff_ffff_ffff_ffffL, 63));
        assertThat(p.numCompVectors()).isEqualTo(63);
        assertThat(p.attributes().maxSge()).as("tso_caps' max_sge is not the device's").isEqualTo(30);
        final ExtendedCqs x = ExtendedCqs.of(p);
        assertThat(x.hcaCoreClockKhz()).isEqualTo(78_125);
        assertThat(x.cycles(1_000_000)).as("1 ms at the dump's 78125 kHz").isEqualTo(78_125);

        // ib_uverbs_create_cq checks comp_vector against the device's num_comp_vectors: the dump's 63.
        final RuleRig rig = RuleRig.unconnected(p);
        assertThat(rig.ctxA.numCompVectors()).isEqualTo(63);
        assertThat(rig.ctxA.createCq(16, 62).cqe()).isGreaterThanOrEqualTo(16);
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.ctxA.createCq(16, 63));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Test
    void aDumpWithoutTheLinesKeepsTheDriversValuesAndNotSupportedIsZero()
    {
        final String head = MLX5_DUMP.substring(0, MLX5_DUMP.indexOf("\tcompletion timestamp_mask"));
        final DeviceProfile cut = DevinfoReader.parse(head, "cut.txt").profile();
        assertThat(cut.completions()).isEqualTo(CompletionAttributes.of("mlx5"));

        final String none = head + "\tcompletion_timestamp_mask not supported\n\tcore clock not supported\n";
        final DeviceProfile noClock = DevinfoReader.parse(none, "none.txt").profile();
        assertThat(noClock.completions().hcaCoreClockKhz()).isZero();
        assertThat(noClock.completions().completionTimestampMask()).isZero();
        assertThat(noClock.numCompVectors()).isEqualTo(CompletionAttributes.SIMULATED_HOST_CPUS);
    }

    @Test
    void aMalformedClockOrVectorCountNamesTheLine()
    {
        assertThatThrownBy(() -> DevinfoReader.parse(MLX5_DUMP.replace("78125kHZ", "fast"), "bad.txt"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad.txt:10: hca_core_clock")
            .hasMessageContaining("156250kHZ");
        assertThatThrownBy(() -> DevinfoReader.parse(MLX5_DUMP.replace("num_comp_vectors:\t\t63",
            "num_comp_vectors:\t\t0"), "bad.txt")).hasMessageContaining("num_comp_vectors")
            .hasMessageContaining("1 or more");
    }

    @Test
    void builtInProfilesTakeTheDriversClockAndOneVectorPerHostCpu()
    {
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            assertThat(p.numCompVectors()).as(p.name()).isEqualTo(CompletionAttributes.SIMULATED_HOST_CPUS);
            assertThat(p.completions().hcaCoreClockKhz()).as(p.name()).isEqualTo(p.driver().equals("mlx5") ? 156_250
                : 0);
        }
    }
}
