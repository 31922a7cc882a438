package dev.rnicsim.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.EnumSet;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * {@link Access#toBits} and {@link Access#fromBits} are inverse over every subset of the flags, and any other bit
 * is refused with EINVAL.
 */
class AccessBitsProperties
{
    private static final int KNOWN = Access.toBits(EnumSet.allOf(Access.class));

    @Property(seed = "20261130")
    void fromBitsOfToBitsIsTheSameSet(@ForAll final Set<Access> access)
    {
        final EnumSet<Access> back = Access.fromBits(Access.toBits(access));

        assertThat(back).isEqualTo(access);
    }

    @Property(seed = "20261131")
    void toBitsOfFromBitsIsTheSameBitsForEveryCombinationOfKnownBits(@ForAll final int raw)
    {
        final int bits = raw & KNOWN;

        assertThat(Access.toBits(Access.fromBits(bits))).isEqualTo(bits);
        assertThat(Integer.bitCount(bits)).isEqualTo(Access.fromBits(bits).size());
    }

    @Property(seed = "20261132")
    void anyBitOutsideTheFlagsIsEinval(@ForAll final int raw)
    {
        final int unknown = raw & ~KNOWN;
        final int bits = unknown == 0 ? raw | (1 << 10) : raw;

        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> Access.fromBits(bits));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("0x" + Integer.toHexString(bits & ~KNOWN));
    }
}
