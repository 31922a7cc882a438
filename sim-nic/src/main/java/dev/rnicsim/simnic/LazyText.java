package dev.rnicsim.simnic;

import java.util.function.Supplier;

/**
 * Words made the first time they are read, then kept: the cause a QP keeps of its first error, which only the
 * diagnoses of the work requests it flushes quote, is not written for every refused access when nothing is flushed.
 * The supplier must read only what it captured (values and immutable records), never state that changes later.
 * Thread safe: the words may be read from a completion's diagnosis on another thread than the engine's.
 */
final class LazyText implements CharSequence
{
    private Supplier<String> making;
    private String text;

    /** @param making makes the words, once. */
    LazyText(final Supplier<String> making)
    {
        this.making = making;
    }

    @Override
    public synchronized String toString()
    {
        if (text == null)
        {
            text = making.get();
            making = null;
        }
        return text;
    }

    @Override
    public int length()
    {
        return toString().length();
    }

    @Override
    public char charAt(final int index)
    {
        return toString().charAt(index);
    }

    @Override
    public CharSequence subSequence(final int start, final int end)
    {
        return toString().subSequence(start, end);
    }
}
