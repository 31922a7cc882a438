package dev.rnicsim.scenarios.script;

import java.util.List;
import java.util.Map;

/**
 * One statement of a scenario script: its verb, positional arguments and {@code key=value} options, with where it
 * came from.
 *
 * @param file       the script's name.
 * @param line       1-based line number.
 * @param verb       the verb (first word).
 * @param args       positional arguments, quotes removed.
 * @param options    {@code key=value} options by key, in order.
 * @param flags      bare words that are flags of the verb (e.g. {@code unsignaled}).
 * @param text       the line after the verb, as written (for {@code say} and for printing).
 * @param body       the statements of a {@code repeat N} block (up to its {@code end}), else empty.
 */
public record ScriptLine(String file, int line, String verb, List<String> args, Map<String, String> options,
    List<String> flags, String text, List<ScriptLine> body)
{
    /**
     * @param message what was expected.
     * @return a malformed-script error at this line.
     */
    public ScriptException error(final String message)
    {
        return new ScriptException(file, line, message);
    }

    /**
     * @return {@code file:line}.
     */
    public String where()
    {
        return file + ":" + line;
    }
}
