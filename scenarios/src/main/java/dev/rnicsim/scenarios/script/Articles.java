package dev.rnicsim.scenarios.script;

import java.util.Locale;

/**
 * The indefinite article of a noun in a message, by its sound: "an MR", "an AH", "an SRQ", "an address handle",
 * "a QP", "a PD", "a GPU buffer", "a fast-registration MR". An acronym (its first word in capitals) is read letter
 * by letter, so it takes "an" when its first letter's name starts with a vowel (A, E, F, H, I, L, M, N, O, R, S, X);
 * a word takes "an" before a vowel letter. Stateless.
 */
final class Articles
{
    /** Letters whose names start with a vowel sound: "an MR", "an SRQ", "an FD". */
    private static final String VOWEL_LETTERS = "AEFHILMNORSX";

    /** Kinds in the alphabetical order of their words, whatever the case: AH, cache, context, CQ, ... */
    static final java.util.Comparator<Kind> BY_WORD = java.util.Comparator.comparing(k -> word(k).toLowerCase(
        Locale.ROOT));

    private Articles()
    {
    }

    /**
     * @param noun a noun or noun phrase, e.g. {@code MR}, {@code address handle}, {@code GPU buffer}.
     * @return the noun with its article: {@code an MR}, {@code an address handle}, {@code a GPU buffer}.
     */
    static String a(final String noun)
    {
        if (noun.isEmpty())
        {
            return noun;
        }
        final String first = noun.split("[ \\-(]", 2)[0];
        final boolean acronym = first.length() > 1 && first.equals(first.toUpperCase(Locale.ROOT))
            && Character.isLetter(first.charAt(0));
        final char c = noun.charAt(0);
        final boolean an = acronym ? VOWEL_LETTERS.indexOf(c) >= 0
            : "aeiou".indexOf(Character.toLowerCase(c)) >= 0 && !noun.startsWith("uni") && !noun.startsWith("use")
                && !noun.startsWith("usu") && !noun.startsWith("one");
        return (an ? "an " : "a ") + noun;
    }

    /**
     * @param choices nouns with their articles.
     * @return {@code a QP}, {@code a QP or an SRQ}, {@code a CQ, a PD or a QP}.
     */
    static String oneOf(final java.util.List<String> choices)
    {
        return choices.size() <= 2 ? String.join(" or ", choices)
            : String.join(", ", choices.subList(0, choices.size() - 1)) + " or " + choices.getLast();
    }

    /**
     * @param kind a kind of script object.
     * @return its name in the field's terms with the article: {@code an MR}, {@code a QP}, {@code an AH}.
     */
    static String a(final Kind kind)
    {
        return a(word(kind));
    }

    /**
     * @param kind a kind of script object.
     * @return its name in the field's terms: {@code MR}, {@code memory window}, {@code GPU buffer}.
     */
    static String word(final Kind kind)
    {
        return switch (kind)
        {
            case PD, MR, MW, CQ, QP, GPU, SRQ, AH, DM -> kind.name();
            case FASTMR -> "fast-registration MR";
            case GPU_BUFFER -> "GPU buffer";
            case DMABUF -> "dma-buf";
            case XRCD -> "XRC domain";
            default -> kind.name().toLowerCase(Locale.ROOT);
        };
    }
}
