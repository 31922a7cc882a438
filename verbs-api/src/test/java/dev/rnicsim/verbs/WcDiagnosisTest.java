package dev.rnicsim.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A diagnosis whose words are made when first read ({@link WcDiagnosis#lazy}) says what one given its words says, and
 * makes them once, however many copies ({@link WcDiagnosis#withSyndrome}) read them.
 */
class WcDiagnosisTest
{
    @Test
    void aLazyDiagnosisShouldMakeItsWordsOnceAndEqualOneGivenThem()
    {
        final AtomicInteger summaries = new AtomicInteger();
        final AtomicInteger details = new AtomicInteger();
        final WcDiagnosis lazy = WcDiagnosis.lazy(WcDiagnosis.Check.RANGE, 0x13, 0x1234, 0x12, 0x34, () ->
        {
            summaries.incrementAndGet();
            return "rkey 0x00001234: asked [0x1000, 0x1010)";
        }, () ->
        {
            details.incrementAndGet();
            return List.of("fix: keep each access inside the MR");
        });
        final WcDiagnosis given = new WcDiagnosis(WcDiagnosis.Check.RANGE, 0x13, 0x1234, 0x12, 0x34,
            "rkey 0x00001234: asked [0x1000, 0x1010)", List.of("fix: keep each access inside the MR"));

        assertThat(summaries).hasValue(0);
        assertThat(details).hasValue(0);
        final WcDiagnosis copy = lazy.withSyndrome(0x12);
        assertThat(copy.summary()).isEqualTo(given.summary());
        assertThat(lazy).isEqualTo(given).hasSameHashCodeAs(given);
        assertThat(lazy.text()).isEqualTo(given.text());
        assertThat(copy.details()).isEqualTo(given.details());
        assertThat(copy.syndrome()).isEqualTo(0x12);
        assertThat(summaries).hasValue(1);
        assertThat(details).hasValue(1);
    }

    @Test
    void aLazyDiagnosisShouldRefuseMissingSuppliers()
    {
        assertThatNullPointerException().isThrownBy(() -> WcDiagnosis.lazy(WcDiagnosis.Check.RANGE, 0, 0, -1, -1,
            null, List::of)).withMessage("summary");
        assertThatNullPointerException().isThrownBy(() -> WcDiagnosis.lazy(WcDiagnosis.Check.RANGE, 0, 0, -1, -1,
            () -> "s", null)).withMessage("details");
    }
}
