package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@link MptTable#holds} answers as comparing {@link MptTable#entry}'s fields would, field by field. */
class MptHoldsTest
{
    private static final MttRange NO_MTT = new MttRange(0, 1, 1);
    private static final int RIGHTS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ;

    @Test
    void shouldHoldExactlyTheFieldsOfTheLiveEntry()
    {
        final MptTable t = new MptTable(new MptConfig(16, 8, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, 0));
        final int key = t.allocate(MptState.VALID, 3, 0x1000, 0x2000, RIGHTS, 12, NO_MTT);

        assertThat(t.holds(key, MptState.VALID, 3, true, 0x1000, 0x2000, RIGHTS)).isTrue();
        assertThat(t.holds(key, MptState.INVALID, 3, true, 0x1000, 0x2000, RIGHTS)).isFalse();
        assertThat(t.holds(key, MptState.VALID, 4, true, 0x1000, 0x2000, RIGHTS)).isFalse();
        assertThat(t.holds(key, MptState.VALID, 3, true, 0x2000, 0x2000, RIGHTS)).isFalse();
        assertThat(t.holds(key, MptState.VALID, 3, true, 0x1000, 0x1000, RIGHTS)).isFalse();
        assertThat(t.holds(key, MptState.VALID, 3, true, 0x1000, 0x2000, AccessFlags.LOCAL_WRITE)).isFalse();
        // Without the range, only the state and the PD are compared.
        assertThat(t.holds(key, MptState.VALID, 3, false, 0, 0, 0)).isTrue();
        // Another variant of the index, or the entry gone: no entry holds anything.
        assertThat(t.holds(key ^ 1, MptState.VALID, 3, true, 0x1000, 0x2000, RIGHTS)).isFalse();
        t.setState(key, MptState.INVALID);
        assertThat(t.holds(key, MptState.INVALID, 3, true, 0x1000, 0x2000, RIGHTS)).isTrue();
        assertThat(t.entry(key).state()).isEqualTo(MptState.INVALID);
        t.free(key);
        assertThat(t.holds(key, MptState.INVALID, 3, false, 0, 0, 0)).isFalse();
        assertThat(t.entry(key)).isNull();
    }
}
