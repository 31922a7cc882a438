package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * What the dump reader and writer say about values no device reports: refused at their line with the field's name
 * and what it expects, repeated lines warned about once, names in ibv_devinfo's terms with control characters shown.
 */
class DevinfoMessagesTest
{
    private static final String HEAD = "hca_id:\tmlx5_0\n\tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4119\n"
        + "\tpage_size_cap:\t\t\t0xfffffffffffff000\n";

    @Test
    void aNegativeCountIsRefusedAtItsLine()
    {
        assertThatThrownBy(() -> DevinfoReader.parse(HEAD + "\tmax_mw:\t\t\t\t-1\n", "d.txt"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("d.txt:5: max_mw: expected a count from 0 to 2147483647, got '-1'");
    }

    @Test
    void aNegativeIdIsRefusedAtItsLine()
    {
        assertThatThrownBy(() -> DevinfoReader.parse("hca_id:\tmlx5_0\n\tvendor_id:\t\t\t-5\n", "d.txt"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("d.txt:2: vendor_id: expected an unsigned number, got '-5'");
    }

    @Test
    void aCountAboveTwoToThe31IsRefusedButAnIdInHexReads()
    {
        assertThatThrownBy(() -> DevinfoReader.parse(HEAD + "\tmax_qp:\t\t\t\t0xffffffff\n", "d.txt"))
            .hasMessageContaining("max_qp: expected a count from 0 to 2147483647");
        assertThat(DevinfoReader.parse(HEAD + "\thw_ver:\t\t\t\t0xFFFFFFFF\n", "d.txt").profile().attributes()
            .hwVer()).isEqualTo(-1);
    }

    @Test
    void aZeroMaxMrSizeIsRefusedAtItsLine()
    {
        assertThatThrownBy(() -> DevinfoReader.parse(HEAD + "\tmax_mr_size:\t\t\t0x0\n", "d.txt"))
            .hasMessage("d.txt:5: max_mr_size: expected a size of 1 byte or more (max_mr_size 0 admits no MR), "
                + "got '0x0'");
    }

    @Test
    void aMillionRepeatedLinesGiveOneWarning()
    {
        final StringBuilder dump = new StringBuilder(HEAD).append("\tmax_qp:\t\t\t\t1000\n");
        for (int i = 0; i < 1_000_000; i++)
        {
            dump.append("\tmax_qp:\t\t\t\t2000\n");
        }
        final DevinfoResult r = DevinfoReader.parse(dump.toString(), "d.txt");
        assertThat(r.profile().attributes().maxQp()).isEqualTo(1000);
        assertThat(r.warnings().stream().filter(w -> w.contains("max_qp appears again")))
            .containsExactly("d.txt:6: max_qp appears again; the first value is kept (and 999999 more lines like "
                + "it)");
    }

    @Test
    void aBadHcaIdIsNamedAsIbvDevinfoNamesItWithItsControlCharactersShown()
    {
        final DeviceProfile p = DeviceProfiles.builtIn().get("connectx5");
        assertThatThrownBy(() -> DevinfoWriter.write("mlx5\u0007\n0", p.attributes(), p.traits().transport()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("hca_id 'mlx5\\u0007\\n0' must be a non-empty name")
            .hasMessageNotContaining("hcaId").hasMessageNotContaining("\u0007");
    }
}
