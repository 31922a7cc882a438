package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.BasePage;
import dev.rnicsim.pagetable.PageSize;
import java.util.Locale;

/**
 * The page-table walk of one virtual address as the host's MMU does it, level by level, for {@code show walk}:
 * x86-64 with 4 KiB pages (PGD, PUD, PMD, PTE of 9 bits each, 48-bit addresses), arm64 with 16 KiB pages (4 levels
 * for 48-bit addresses: a 1-bit PGD index, then 11 bits a level, a 14-bit offset) and arm64 with 64 KiB pages (3
 * levels for 48-bit addresses: a 6-bit PGD index, 13-bit PMD and PTE indices, a 16-bit offset; the PUD is folded).
 * Source: Documentation/arch/arm64/memory.rst ("Translation table lookup with 16KB pages", "... with 64KB pages"),
 * arch/arm64/include/asm/pgtable-hwdef.h ({@code ARM64_HW_PGTABLE_LEVEL_SHIFT}: PAGE_SHIFT - 3 bits a level).
 * A leaf at the PMD (2 MiB, 32 MiB or 512 MiB) or PUD (1 GiB on x86) ends the walk; arm64's contiguous hugetlb
 * pages (2 MiB on 16 and 64 KiB hosts, 1 GiB and 16 GiB above a PMD) are runs of entries at the level below.
 * Stateless.
 */
final class WalkGeometry
{
    private WalkGeometry()
    {
    }

    /**
     * @param va     the virtual address.
     * @param base   the host's base page.
     * @param mapped the size of the page mapping it, or null when none does.
     * @return one line: the indices, the leaf and the offset in it.
     */
    static String line(final long va, final BasePage base, final PageSize mapped)
    {
        final int shift = base.shift();
        final int bits = shift - 3;
        final int pmdShift = shift + bits;
        final int pudShift = pmdShift + bits;
        final boolean threeLevels = base == BasePage.SIZE_64K;
        final long pageBytes = mapped == null ? base.bytes() : Math.max(mapped.bytes(), base.bytes());
        final boolean pudLeaf = !threeLevels && pageBytes >= 1L << pudShift && base == BasePage.SIZE_4K;
        final boolean pmdLeaf = !pudLeaf && pageBytes >= 1L << pmdShift;
        final StringBuilder b = new StringBuilder(96);
        b.append(String.format(Locale.ROOT, "va 0x%x: ", va));
        if (threeLevels)
        {
            b.append(index("PGD", va, pmdShift + bits, 48 - pmdShift - bits));
        }
        else
        {
            b.append(index("PGD", va, pudShift + bits, 48 - pudShift - bits)).append(" -> ")
                .append(index("PUD", va, pudShift, bits));
        }
        if (pudLeaf)
        {
            b.append(" (leaf)");
        }
        else
        {
            b.append(" -> ").append(index("PMD", va, pmdShift, bits));
            if (pmdLeaf)
            {
                b.append(" (leaf");
                contiguous(b, pageBytes, 1L << pmdShift);
                b.append(')');
            }
            else
            {
                b.append(" -> ").append(index("PTE", va, shift, bits));
                if (pageBytes > base.bytes())
                {
                    b.append(" (leaf");
                    contiguous(b, pageBytes, base.bytes());
                    b.append(')');
                }
            }
        }
        return b.append(String.format(Locale.ROOT, ", offset 0x%x", va & (pageBytes - 1))).toString();
    }

    private static String index(final String level, final long va, final int shift, final int bits)
    {
        return level + "[" + ((va >>> shift) & ((1L << bits) - 1)) + "]";
    }

    private static void contiguous(final StringBuilder b, final long pageBytes, final long entryBytes)
    {
        if (pageBytes > entryBytes)
        {
            b.append(", one of ").append(pageBytes / entryBytes).append(" contiguous entries");
        }
    }
}
