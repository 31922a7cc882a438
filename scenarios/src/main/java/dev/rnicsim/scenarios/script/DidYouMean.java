package dev.rnicsim.scenarios.script;

import java.util.Collection;

/**
 * The nearest known word to a mistyped one, for "did you mean" hints: the word at the smallest edit distance
 * (insertions, deletions, substitutions and swaps of neighbours), if it is close enough to be a typo. Stateless.
 */
public final class DidYouMean
{
    private DidYouMean()
    {
    }

    /**
     * @param typed the word as typed.
     * @param known the words it may have meant.
     * @return the nearest known word within 1 edit (words up to 4 letters) or 2 edits, or null.
     */
    public static String nearest(final String typed, final Collection<String> known)
    {
        final int limit = typed.length() <= 4 ? 1 : 2;
        String best = null;
        int bestDistance = limit + 1;
        for (final String k : known)
        {
            final int d = distance(typed, k);
            if (d < bestDistance)
            {
                best = k;
                bestDistance = d;
            }
        }
        return best;
    }

    /**
     * @param typed the word as typed.
     * @param known the words it may have meant.
     * @return {@code "; did you mean 'WORD'?"} for the {@link #nearest} known word, or "" when none is near.
     */
    public static String hint(final String typed, final Collection<String> known)
    {
        final String near = nearest(typed, known);
        return near == null ? "" : "; did you mean '" + near + "'?";
    }

    /** Optimal string alignment distance: Levenshtein with adjacent transpositions. */
    static int distance(final String a, final String b)
    {
        final int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++)
        {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++)
        {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++)
        {
            for (int j = 1; j <= b.length(); j++)
            {
                final int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1))
                {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
