package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** {@link WirePricer} prices every packet of a message exactly as {@link CostModel#packetNs} does. */
class WirePricerProperties
{
    private static final CostModel COST = CostModel.defaults();

    @Property(tries = 300)
    void wholeRatesPriceAsTheCostModel(@ForAll @LongRange(min = 1, max = 8191) final long gbps,
        @ForAll @IntRange(min = 0, max = 4) final int mtuChoice, @ForAll @LongRange(min = 0, max = 1L << 22)
        final long lengthBytes)
    {
        assertSamePrices((double)gbps, 256 << mtuChoice, lengthBytes);
    }

    @Property(tries = 200)
    void otherRatesPriceAsTheCostModel(@ForAll @DoubleRange(min = 0.5, max = 900) final double gbps,
        @ForAll @IntRange(min = 0, max = 4) final int mtuChoice, @ForAll @LongRange(min = 0, max = 1L << 20)
        final long lengthBytes)
    {
        assertSamePrices(gbps, 256 << mtuChoice, lengthBytes);
    }

    @Example
    void largeMessagesAndEveryProfileRate()
    {
        for (final double gbps : new double[] {1, 10, 25, 40, 56, 100, 200, 400, 800, 3, 7, 13.6, 8191, 8192})
        {
            assertSamePrices(gbps, 4096, (1L << 31) - 4097);
            assertSamePrices(gbps, 1024, 1L << 24);
        }
    }

    @Example
    void aRateChangeOrAJumpStartsOver()
    {
        final WirePricer pricer = new WirePricer();
        assertThat(pricer.packetNs(COST, 0, 4096, 100)).isEqualTo(COST.packetNs(0, 4096, 100));
        assertThat(pricer.packetNs(COST, 4096, 4096, 25)).isEqualTo(COST.packetNs(4096, 4096, 25));
        assertThat(pricer.packetNs(COST, 40960, 4096, 25)).isEqualTo(COST.packetNs(40960, 4096, 25));
        assertThat(pricer.packetNs(COST, 45056, 100, 25)).isEqualTo(COST.packetNs(45056, 100, 25));
    }

    private static void assertSamePrices(final double gbps, final int mtuBytes, final long lengthBytes)
    {
        final WirePricer pricer = new WirePricer();
        long total = 0;
        long offset = 0;
        do
        {
            final long packet = Math.min(mtuBytes, lengthBytes - offset);
            final long ns = pricer.packetNs(COST, offset, packet, gbps);
            assertThat(ns).as("packet at %d of %d bytes, %s Gbit/s, MTU %d", offset, lengthBytes, gbps, mtuBytes)
                .isEqualTo(COST.packetNs(offset, packet, gbps));
            total += ns;
            offset += packet;
        }
        while (offset < lengthBytes);
        assertThat(total).isEqualTo(COST.operationNs(lengthBytes, gbps, 0));
    }
}
