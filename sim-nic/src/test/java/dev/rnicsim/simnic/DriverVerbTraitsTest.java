package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.PortAttributes;
import org.junit.jupiter.api.Test;

/**
 * {@link DriverVerbTraits} and {@link DriverPortTraits}: the queue-verb and port facts where drivers differ are read
 * from the profile's driver traits, and a driver no rule knows gets explicit answers.
 */
class DriverVerbTraitsTest
{
    @Test
    void everyBuiltInProfileCarriesItsOwnDriversTraits()
    {
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            assertThat(p.traits().driver()).as(p.name()).isEqualTo(p.driver());
            assertThat(p.traits().verbs()).as(p.name()).isEqualTo(DriverVerbTraits.of(p.driver()));
        }
    }

    @Test
    void aDriverNoRuleKnowsGetsTheManPagesRulesAndNoExtras()
    {
        final DriverVerbTraits v = DriverVerbTraits.of("newdrv");
        assertThat(v.srqCreateFunction()).isEqualTo("its create_srq");
        assertThat(v.srqZeroRefusal()).isEqualTo("its create_srq is taken to refuse 0 (assumed: not read)");
        assertThat(v.srqModifyFunction()).isEqualTo("ibv_modify_srq(3)");
        assertThat(v.srqResizeRefusalRead()).isFalse();
        assertThat(v.cqResizeBelowQueued()).startsWith("ibv_resize_cq(3)");
        assertThat(v.extendedCqs().resizeCq()).isFalse();
        assertThat(v.extendedCqs().wcFlags()).isEqualTo(ExtendedCqs.WC_STANDARD);
        assertThat(v.asyncEvents()).isEqualTo(AsyncEventRules.IBA);
        assertThat(v.asyncEventsOldKernel()).isEqualTo(AsyncEventRules.IBA);
        assertThat(v.hwCounters()).isEqualTo(HwCounters.NONE);
        assertThat(v.tagMatchingSrqs()).isFalse();
        assertThat(v.port().linkLayer()).isEqualTo(PortAttributes.LINK_LAYER_INFINIBAND);
        assertThat(v.port().mtuRule()).isEqualTo(PortMtuRule.IBOE_HEADERS);
        assertThat(v.port().roceV2Only()).isFalse();
        assertThat(v.port().pathMtuAboveActiveRefused()).isFalse();
        assertThat(v.port().forVendor(0)).isSameAs(v.port());
    }

    @Test
    void anOlderKernelsRxeReportsItsOwnPortLimits()
    {
        final PortAttributes legacy = DeviceProfiles.rxeLegacy().portAttributes();
        final PortAttributes current = DeviceProfiles.rxe().portAttributes();
        assertThat(legacy.maxMsgSzBytes()).isEqualTo(0x800000L);
        assertThat(legacy.pkeyTblLen()).isEqualTo(64);
        assertThat(current.maxMsgSzBytes()).isEqualTo(1L << 31);
        assertThat(current.pkeyTblLen()).isEqualTo(1);
        assertThat(current.gidTblLen()).isEqualTo(1024);
    }
}
