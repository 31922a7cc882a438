package dev.rnicsim.scenarios.script;

import dev.rnicsim.verbs.Backing;

/**
 * The words scripts and workloads name a host memory backing with: {@code 4k} (base pages), {@code thp}
 * (transparent huge pages), {@code 2m} and {@code 1g} (hugetlbfs pages). Stateless.
 */
public final class BackingWords
{
    private BackingWords()
    {
    }

    /**
     * @param word a backing's word, checked by its caller.
     * @return the host memory it names: base pages for {@code 4k} and any word not of a huge page.
     */
    public static Backing of(final String word)
    {
        return switch (word)
        {
            case "thp" -> Backing.TRANSPARENT_HUGE_PAGES;
            case "2m" -> Backing.HUGETLB_2M;
            case "1g" -> Backing.HUGETLB_1G;
            default -> Backing.BASE_PAGES;
        };
    }
}
