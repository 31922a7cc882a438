package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.UniqueElements;

/**
 * The kept bits of the sets a verb is given ({@link EnumSetBits}) are the bits of each set, whatever came before it:
 * sets of the same size and other members, the same set changed in place, and sets of other kinds.
 */
class EnumSetBitsProperties
{
    @Property(tries = 300)
    void theKeptBitsShouldBeTheBitsOfEachSetGiven(
        @ForAll @Size(max = 12) final List<@UniqueElements @Size(max = 6) List<Access>> sets,
        @ForAll @IntRange(min = 0, max = 3) final int kind)
    {
        final EnumSetBits<Access> kept = new EnumSetBits<>(Access.class, Access::toBits);
        final EnumSet<Access> reused = EnumSet.noneOf(Access.class);
        for (final List<Access> members : sets)
        {
            // The same EnumSet changed in place between calls, and new sets of each kind.
            reused.clear();
            reused.addAll(members);
            assertThat(kept.of(reused)).isEqualTo(Access.toBits(reused));
            final Set<Access> other = switch (kind)
            {
                case 0 -> Collections.unmodifiableSet(EnumSet.copyOf(reused));
                case 1 -> new HashSet<>(members);
                case 2 -> Set.copyOf(members);
                default -> reused.clone();
            };
            assertThat(kept.of(other)).isEqualTo(Access.toBits(reused));
        }
    }
}
