package dev.rnicsim.simnic;

import java.util.AbstractSet;
import java.util.Collection;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The provider rules a device profile follows, as one bit per rule: {@link DeviceProfile#follows}, read on nearly every
 * verb and completion, is then one bit test. Iterates in the rules' declaration order, as an {@link java.util.EnumSet}
 * does; equal to any set with the same rules. Immutable and thread safe.
 */
final class ProviderRuleSet extends AbstractSet<ProviderRule>
{
    private static final ProviderRule[] RULES = ProviderRule.values();

    static
    {
        if (RULES.length > Long.SIZE)
        {
            throw new ExceptionInInitializerError("more than 64 provider rules: ProviderRuleSet holds 64");
        }
    }

    private final long bits;

    private ProviderRuleSet(final long bits)
    {
        this.bits = bits;
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
        long b = 0;
        for (final ProviderRule r : rules)
        {
            b |= 1L << r.ordinal();
        }
        return new ProviderRuleSet(b);
    }

    /**
     * @param rule a rule.
     * @return true when the set holds it.
     */
    boolean has(final ProviderRule rule)
    {
        return (bits & 1L << rule.ordinal()) != 0;
    }

    @Override
    public boolean contains(final Object o)
    {
        return o instanceof ProviderRule r && has(r);
    }

    @Override
    public int size()
    {
        return Long.bitCount(bits);
    }

    @Override
    public Iterator<ProviderRule> iterator()
    {
        return new Iterator<>()
        {
            private long left = bits;

            @Override
            public boolean hasNext()
            {
                return left != 0;
            }

            @Override
            public ProviderRule next()
            {
                if (left == 0)
                {
                    throw new NoSuchElementException();
                }
                final int i = Long.numberOfTrailingZeros(left);
                left &= left - 1;
                return RULES[i];
            }
        };
    }
}
