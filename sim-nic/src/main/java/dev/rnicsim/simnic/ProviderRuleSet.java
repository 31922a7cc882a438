package dev.rnicsim.simnic;

import java.util.AbstractSet;
import java.util.Collection;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The provider rules a device profile follows, as one bit per rule in two words (the first 64 rules in the first):
 * {@link DeviceProfile#follows}, read on nearly every verb and completion, is then one bit test. Iterates in the rules' declaration order, as an {@link java.util.EnumSet}
 * does; equal to any set with the same rules. Immutable and thread safe.
 */
final class ProviderRuleSet extends AbstractSet<ProviderRule>
{
    private static final ProviderRule[] RULES = ProviderRule.values();

    static
    {
        if (RULES.length > 2 * Long.SIZE)
        {
            throw new ExceptionInInitializerError("more than 128 provider rules: ProviderRuleSet holds 128 in two "
                + "words; give it a third");
        }
    }

    /** The rules of ordinals 0 to 63. */
    private final long low;
    /** The rules of ordinals 64 to 127. */
    private final long high;

    private ProviderRuleSet(final long low, final long high)
    {
        this.low = low;
        this.high = high;
    }

    /**
     * @param rules provider rules (no null among them).
     * @return them as bits.
     */
    static ProviderRuleSet of(final Collection<ProviderRule> rules)
    {
        if (rules instanceof ProviderRuleSet s)
        {
            return s;
        }
        long low = 0;
        long high = 0;
        for (final ProviderRule r : rules)
        {
            if (r.ordinal() < Long.SIZE)
            {
                low |= 1L << r.ordinal();
            }
            else
            {
                high |= 1L << r.ordinal();
            }
        }
        return new ProviderRuleSet(low, high);
    }

    /**
     * @param rule a rule.
     * @return true when the set holds it.
     */
    boolean has(final ProviderRule rule)
    {
        final int i = rule.ordinal();
        return ((i < Long.SIZE ? low : high) & 1L << i) != 0;
    }

    @Override
    public boolean contains(final Object o)
    {
        return o instanceof ProviderRule r && has(r);
    }

    @Override
    public int size()
    {
        return Long.bitCount(low) + Long.bitCount(high);
    }

    @Override
    public Iterator<ProviderRule> iterator()
    {
        return new Iterator<>()
        {
            /** The rules not yet returned of the word being walked, then of the second word. */
            private long left = low;
            private long next = high;
            private int base;

            @Override
            public boolean hasNext()
            {
                if (left == 0 && next != 0)
                {
                    left = next;
                    next = 0;
                    base = Long.SIZE;
                }
                return left != 0;
            }

            @Override
            public ProviderRule next()
            {
                if (!hasNext())
                {
                    throw new NoSuchElementException();
                }
                final int i = Long.numberOfTrailingZeros(left);
                left &= left - 1;
                return RULES[base + i];
            }
        };
    }
}
