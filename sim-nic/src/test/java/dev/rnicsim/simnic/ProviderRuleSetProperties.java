package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.UniqueElements;

/**
 * A profile's provider rules as bits ({@link ProviderRuleSet}) behave as the {@link EnumSet} of the same rules: the
 * same members, order, size, text, equality and hash, so a profile compares, prints and lists its rules as before.
 */
class ProviderRuleSetProperties
{
    @Property(tries = 500)
    void theBitsShouldBehaveAsTheEnumSetOfTheSameRules(@ForAll @UniqueElements final List<ProviderRule> rules)
    {
        final Set<ProviderRule> expected = rules.isEmpty() ? EnumSet.noneOf(ProviderRule.class) : EnumSet.copyOf(rules);
        final ProviderRuleSet bits = ProviderRuleSet.of(rules);

        assertThat(bits).isEqualTo(expected).hasSameHashCodeAs(expected).hasSize(expected.size());
        assertThat(expected).isEqualTo(bits);
        assertThat(bits.toString()).isEqualTo(expected.toString());
        assertThat(new ArrayList<>(bits)).containsExactlyElementsOf(expected);
        for (final ProviderRule r : ProviderRule.values())
        {
            assertThat(bits.has(r)).as("%s", r).isEqualTo(expected.contains(r));
            assertThat(bits.contains(r)).isEqualTo(expected.contains(r));
        }
        assertThat(bits.contains("not a rule")).isFalse();
        assertThat(ProviderRuleSet.of(bits)).isSameAs(bits);
    }

    /** Rules past the first word's 64 (the enum outgrew one {@code long}) are held, counted and listed in order. */
    @net.jqwik.api.Example
    void rulesOfBothWordsShouldBeHeldAndListedInDeclarationOrder()
    {
        final ProviderRule[] all = ProviderRule.values();
        assertThat(all.length).as("the enum has rules past the first word").isGreaterThan(Long.SIZE);
        final ProviderRule first = all[0];
        final ProviderRule lastOfFirstWord = all[Long.SIZE - 1];
        final ProviderRule firstOfSecondWord = all[Long.SIZE];
        final ProviderRule last = all[all.length - 1];
        final ProviderRuleSet bits = ProviderRuleSet.of(List.of(last, firstOfSecondWord, lastOfFirstWord, first));

        assertThat(bits).containsExactly(first, lastOfFirstWord, firstOfSecondWord, last);
        assertThat(bits).hasSize(4);
        assertThat(bits.has(all[1])).isFalse();
        assertThat(bits.has(last)).isTrue();
    }

    @Property(tries = 50)
    void aProfileShouldFollowExactlyTheRulesItWasGiven(@ForAll @UniqueElements final List<ProviderRule> rules)
    {
        final DeviceProfile p = DeviceProfiles.connectx5().withProviderRules(Set.copyOf(rules));
        for (final ProviderRule r : ProviderRule.values())
        {
            assertThat(p.follows(r)).as("%s", r).isEqualTo(rules.contains(r));
        }
        assertThat(p.providerRules()).containsExactlyInAnyOrderElementsOf(rules);
    }
}
