package dev.rnicsim.pagetable;

import java.util.Set;

/**
 * Memory protection of a mapping, as the {@code prot} argument of mmap(2) and mprotect(2). An empty set is
 * PROT_NONE.
 *
 * <p>Immutable and thread safe.
 */
public enum Prot
{
    /** PROT_READ (0x1). */
    READ(0x1),
    /** PROT_WRITE (0x2). */
    WRITE(0x2),
    /** PROT_EXEC (0x4). */
    EXEC(0x4);

    private final int bit;

    Prot(final int bit)
    {
        this.bit = bit;
    }

    /**
     * @return the Linux value of the flag.
     */
    public int bit()
    {
        return bit;
    }

    static int bits(final Set<Prot> prot)
    {
        int bits = 0;
        for (final Prot p : prot)
        {
            bits |= p.bit;
        }
        return bits;
    }

    /** PROT_READ | PROT_WRITE, the usual protection of a data buffer. */
    public static final Set<Prot> READ_WRITE = Set.of(READ, WRITE);
}
