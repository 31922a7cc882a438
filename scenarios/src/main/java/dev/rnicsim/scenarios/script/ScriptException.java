package dev.rnicsim.scenarios.script;

/**
 * A script is malformed: the file, the line, and what was expected there. The command exits with status 2.
 */
public final class ScriptException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String file;
    private final int line;

    /**
     * @param file    the script's name.
     * @param line    1-based line number (0 when the whole file is concerned).
     * @param message what was expected there.
     */
    public ScriptException(final String file, final int line, final String message)
    {
        super(file + ":" + line + ": " + message);
        this.file = file;
        this.line = line;
    }

    /**
     * @return the script's name.
     */
    public String file()
    {
        return file;
    }

    /**
     * @return the 1-based line number.
     */
    public int line()
    {
        return line;
    }
}
