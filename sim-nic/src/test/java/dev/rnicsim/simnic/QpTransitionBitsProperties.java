package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import java.util.EnumSet;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.UniqueElements;

/**
 * The state table as bits, which every ibv_modify_qp reads ({@link QpTransitions#refusal(QpType, QpState, QpState,
 * Set, long)}), answers as the worded table does: null for an allowed transition and mask, the same words for a
 * refused one, for every QP type (XRC ones included), state pair and mask.
 */
class QpTransitionBitsProperties
{
    @Property(tries = 3000)
    void theBitsAnswerAsTheWordedTable(@ForAll final QpType type, @ForAll final QpState from,
        @ForAll final QpState to, @ForAll @Size(max = 8) @UniqueElements final java.util.List<QpAttrMask> given)
    {
        final Set<QpAttrMask> mask = given.isEmpty() ? EnumSet.noneOf(QpAttrMask.class) : EnumSet.copyOf(given);
        mask.add(QpAttrMask.STATE);
        assertThat(QpTransitions.refusal(type, from, to, mask, QpTransitions.bits(mask)))
            .isEqualTo(QpTransitions.refusal(type, from, to, mask));
    }

    @Property(tries = 500)
    void everyRequiredMaskOfATransitionIsAllowed(@ForAll final QpType type, @ForAll final QpState from,
        @ForAll final QpState to)
    {
        final Set<QpAttrMask> mask = EnumSet.of(QpAttrMask.STATE);
        mask.addAll(QpTransitions.required(type, from, to));
        final String worded = QpTransitions.refusal(type, from, to, mask);
        assertThat(QpTransitions.refusal(type, from, to, mask, QpTransitions.bits(mask))).isEqualTo(worded);
        if (QpTransitions.exists(from, to))
        {
            assertThat(worded).as("%s -> %s of a %s QP with its required attributes", from, to, type).isNull();
        }
    }
}
