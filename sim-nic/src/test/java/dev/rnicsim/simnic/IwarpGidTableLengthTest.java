package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An iWARP port's GID table has one entry: siw_query_port, c4iw_query_port, erdma_query_port and irdma_query_port
 * (when the port is not RoCE) set gid_tbl_len to 1.
 */
class IwarpGidTableLengthTest
{
    @ParameterizedTest
    @ValueSource(strings = {"siw", "cxgb4", "erdma", "e810-iwarp"})
    void anIwarpPortReportsOneGidEntry(final String profile)
    {
        assertThat(DeviceProfiles.byName(profile).portAttributes().gidTblLen()).as(profile).isEqualTo(1);
    }

    @Test
    void theSameE810InRoceModeKeepsItsLongerTable()
    {
        assertThat(DeviceProfiles.byName("e810").portAttributes().gidTblLen()).isGreaterThan(1);
    }
}
