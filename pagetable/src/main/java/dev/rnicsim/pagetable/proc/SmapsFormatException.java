package dev.rnicsim.pagetable.proc;

/**
 * A line of a {@code /proc/[pid]/smaps} or {@code /proc/[pid]/maps} text (format: {@code proc(5)}; kernel
 * {@code fs/proc/task_mmu.c}, {@code show_map_vma} and {@code show_smap}) that {@link SmapsParser} could not read.
 *
 * <p>The message has the shape {@code "line 3: expected <what>, found: '<line text>'"}: the 1-based line number,
 * what the parser expected there, and the offending line (shortened to {@value #MAX_QUOTED_CHARS} characters when
 * longer).
 *
 * <p>Immutable.
 */
public class SmapsFormatException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /** Longest line text quoted in the message; longer lines are cut and end in {@code "..."}. */
    public static final int MAX_QUOTED_CHARS = 200;

    private final int lineNumber;
    private final String lineText;

    /**
     * @param lineNumber the 1-based number of the offending line in the input.
     * @param lineText   the offending line, as read (without its line terminator).
     * @param expected   what the parser expected on that line, e.g.
     *                   {@code "a header 'start-end perms offset dev inode [pathname]' before any field line"}.
     */
    public SmapsFormatException(final int lineNumber, final String lineText, final String expected)
    {
        this(lineNumber, lineText, expected, null);
    }

    /**
     * @param lineNumber the 1-based number of the offending line in the input.
     * @param lineText   the offending line, as read (without its line terminator).
     * @param expected   what the parser expected on that line.
     * @param cause      the lower-level failure, e.g. a {@link NumberFormatException}; may be null.
     */
    public SmapsFormatException(final int lineNumber, final String lineText, final String expected,
                                final Throwable cause)
    {
        super("line " + lineNumber + ": expected " + expected + ", found: '" + shorten(lineText) + "'", cause);
        this.lineNumber = lineNumber;
        this.lineText = lineText;
    }

    /**
     * @return the 1-based number of the offending line.
     */
    public int lineNumber()
    {
        return lineNumber;
    }

    /**
     * @return the offending line in full, as read (without its line terminator).
     */
    public String lineText()
    {
        return lineText;
    }

    private static String shorten(final String text)
    {
        if (text == null)
        {
            return "";
        }
        return text.length() <= MAX_QUOTED_CHARS ? text : text.substring(0, MAX_QUOTED_CHARS) + "...";
    }
}
