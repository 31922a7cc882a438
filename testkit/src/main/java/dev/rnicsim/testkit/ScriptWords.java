package dev.rnicsim.testkit;

import dev.rnicsim.verbs.Access;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Sizes, addresses and rights written as the scenario-script language writes them, for the lines the actions of
 * {@link VerbsActions} print and the fixture script of {@link TestNic#script()}. Stateless.
 */
final class ScriptWords
{
    private ScriptWords()
    {
    }

    /**
     * @param bytes a size.
     * @return it in script units: {@code 64K}, {@code 2M}, {@code 1G} when a whole multiple, else the decimal
     * number of bytes.
     */
    static String size(final long bytes)
    {
        if (bytes != 0)
        {
            for (final String unit : List.of("G", "M", "K"))
            {
                final int shift = switch (unit)
                {
                    case "G" -> 30;
                    case "M" -> 20;
                    default -> 10;
                };
                if (bytes % (1L << shift) == 0)
                {
                    return (bytes >> shift) + unit;
                }
            }
        }
        return Long.toString(bytes);
    }

    /**
     * @param name   a name.
     * @param offset bytes from it.
     * @return {@code name}, {@code name+OFF} or {@code name-OFF} in script units.
     */
    static String at(final String name, final long offset)
    {
        return offset == 0 ? name : offset > 0 ? name + "+" + size(offset) : name + "-" + size(-offset);
    }

    /**
     * @param access rights.
     * @return them as the script's access words ({@code lw,rw,rr}), {@code none} for none.
     */
    static String accessWords(final Set<Access> access)
    {
        final List<String> words = new ArrayList<>();
        for (final Access a : Access.values())
        {
            if (access.contains(a))
            {
                words.add(switch (a)
                {
                    case LOCAL_WRITE -> "lw";
                    case REMOTE_WRITE -> "rw";
                    case REMOTE_READ -> "rr";
                    case REMOTE_ATOMIC -> "ra";
                    case MW_BIND -> "mw";
                    case ZERO_BASED -> "zb";
                    case ON_DEMAND -> "odp";
                    case RELAXED_ORDERING -> "ro";
                    default -> a.name().toLowerCase(Locale.ROOT);
                });
            }
        }
        return words.isEmpty() ? "none" : String.join(",", words);
    }
}
