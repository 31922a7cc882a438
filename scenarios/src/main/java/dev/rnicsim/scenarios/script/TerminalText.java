package dev.rnicsim.scenarios.script;

import java.io.FilterWriter;
import java.io.IOException;
import java.io.Writer;

/**
 * A script's output as a terminal shows it: a control character a script carries (an ANSI escape such as ESC [ 3 1 m
 * in a {@code say} line or a name) is written as {@code \xNN}, so that a script cannot move the cursor, recolour or
 * retitle the user's terminal; line feeds and tabs pass. Not thread safe, as the writer it wraps.
 */
final class TerminalText extends FilterWriter
{
    TerminalText(final Writer out)
    {
        super(out);
    }

    @Override
    public void write(final int c) throws IOException
    {
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f || c >= 0x80 && c < 0xa0)
        {
            out.write(String.format(java.util.Locale.ROOT, "\\x%02x", c));
        }
        else
        {
            out.write(c);
        }
    }

    @Override
    public void write(final char[] cbuf, final int off, final int len) throws IOException
    {
        for (int i = off; i < off + len; i++)
        {
            write(cbuf[i]);
        }
    }

    @Override
    public void write(final String str, final int off, final int len) throws IOException
    {
        for (int i = off; i < off + len; i++)
        {
            write(str.charAt(i));
        }
    }
}
