package dev.rnicsim.keys;

import java.util.List;
import java.util.SplittableRandom;

/**
 * The choices of one chain step, read from one number that jqwik draws: each choice takes the remainder of the number
 * by the count of its options and leaves the quotient for the next (a mixed-radix reading). The same number and the
 * same snapshot always give the same action, and a smaller number gives a simpler one: 0 takes the first option of
 * every choice, so jqwik's shrinking of the number (towards 0) shrinks the action. Once the number is used up, every
 * later choice takes its first option.
 *
 * <p>One number per step replaces a tree of jqwik generators per step (one per bound the state gives, each built
 * afresh): the drawing of a chain's actions costs about as much as one integer per action.
 */
final class Draw
{
    private static final String CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    private long bits;

    /** @param bits a non-negative number. */
    Draw(final long bits)
    {
        this.bits = bits;
    }

    /** One of {@code 0 .. n-1} ({@code n < 2}: 0). */
    long below(final long n)
    {
        if (n < 2)
        {
            return 0;
        }
        final long r = bits % n;
        bits /= n;
        return r;
    }

    /** One of {@code 0 .. n-1} ({@code n < 2}: 0). */
    int below(final int n)
    {
        return (int)below((long)n);
    }

    /** One of {@code lo .. hi} (both included; {@code hi < lo}: lo). */
    long between(final long lo, final long hi)
    {
        return hi <= lo ? lo : lo + below(hi - lo + 1);
    }

    /** One of {@code lo .. hi} (both included; {@code hi < lo}: lo). */
    int between(final int lo, final int hi)
    {
        return (int)between((long)lo, (long)hi);
    }

    /** One element of a non-empty list. */
    <T> T of(final List<T> values)
    {
        return values.get(below(values.size()));
    }

    /** One element of a non-empty array. */
    @SafeVarargs
    final <T> T of(final T... values)
    {
        return values[below(values.length)];
    }

    /** The index of one of {@code weights}, each as likely as its weight (weights of 0 are never chosen). */
    int weighted(final int... weights)
    {
        int total = 0;
        for (final int w : weights)
        {
            total += w;
        }
        int r = below(total);
        for (int i = 0; i < weights.length; i++)
        {
            if (r < weights[i])
            {
                return i;
            }
            r -= weights[i];
        }
        return weights.length - 1;
    }

    /**
     * {@code len} letters and digits from what is left of the number (all 'a' when nothing is): the last choice of a
     * step.
     */
    String text(final int len)
    {
        final char[] c = new char[len];
        if (bits == 0)
        {
            java.util.Arrays.fill(c, 'a');
        }
        else
        {
            final SplittableRandom r = new SplittableRandom(bits);
            for (int i = 0; i < len; i++)
            {
                c[i] = CHARS.charAt(r.nextInt(CHARS.length()));
            }
            bits = 0;
        }
        return new String(c);
    }
}
