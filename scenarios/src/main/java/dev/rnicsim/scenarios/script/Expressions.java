package dev.rnicsim.scenarios.script;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits value expressions ({@code buf+4096}, {@code mr0.addr-8}, {@code 2M}) into terms and signs. Stateless.
 */
public final class Expressions
{
    private Expressions()
    {
    }

    /**
     * @param expr an expression.
     * @return its terms, without signs (a leading minus stays with a number).
     */
    public static List<String> terms(final String expr)
    {
        final List<String> out = new ArrayList<>();
        for (final Term t : split(expr))
        {
            out.add(t.text());
        }
        return out;
    }

    /**
     * @param expr an expression.
     * @return every factor of every term (the operands of +, -, * and /).
     */
    public static List<String> factors(final String expr)
    {
        final List<String> out = new ArrayList<>();
        for (final String term : terms(expr))
        {
            out.addAll(List.of(term.split("[*/]", -1)));
        }
        return out;
    }

    /**
     * One term and whether it is subtracted.
     *
     * @param text  the term.
     * @param minus true when it is subtracted.
     */
    public record Term(String text, boolean minus)
    {
    }

    /**
     * @param expr an expression.
     * @return its signed terms.
     */
    public static List<Term> split(final String expr)
    {
        final List<Term> out = new ArrayList<>();
        int start = 0;
        boolean minus = false;
        for (int i = 1; i < expr.length(); i++)
        {
            final char c = expr.charAt(i);
            if (c == '+' || c == '-')
            {
                out.add(new Term(expr.substring(start, i), minus));
                minus = c == '-';
                start = i + 1;
            }
        }
        out.add(new Term(expr.substring(start), minus));
        return out;
    }
}
