package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How long a fabric session polls its socket before it sleeps, from {@code RNICSIM_FABRIC_SPIN_NS}. */
class DoorbellReaderTest
{
    @Test
    void theSpinIsTenMicrosecondsUnlessTheEnvironmentSaysOtherwise()
    {
        assertThat(DoorbellReader.spinNs(null)).isEqualTo(10_000);
        assertThat(DoorbellReader.spinNs(" ")).isEqualTo(10_000);
        assertThat(DoorbellReader.spinNs("0")).as("0 sleeps at once").isZero();
        assertThat(DoorbellReader.spinNs(" 30000 ")).isEqualTo(30_000);
        assertThat(DoorbellReader.spinNs("-5")).as("a negative spin is none").isZero();
        assertThat(DoorbellReader.spinNs("20us")).as("not a whole number: the default").isEqualTo(10_000);
    }
}
