package dev.rnicsim.pagetable.proc;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the text of {@code /proc/[pid]/smaps} or {@code /proc/[pid]/maps} into one {@link SmapsEntry} per virtual
 * memory area. Format: {@code proc(5)}, sections "/proc/[pid]/maps" and "/proc/[pid]/smaps"; kernel
 * {@code fs/proc/task_mmu.c}, {@code show_map_vma} (header line) and {@code show_smap} (field lines).
 *
 * <p>The input is a sequence of areas. Each starts with a header line
 * {@code "start-end perms offset major:minor inode [pathname]"} (start, end and offset in hex, inode in decimal,
 * fields separated by spaces or tabs, the pathname being the rest of the line with leading whitespace removed).
 * In smaps each header is followed by field lines {@code "Name: value"}, where the name is a letter followed by
 * letters, digits or underscores: {@code "Name: <decimal> kB"} lines go to {@link SmapsEntry#fieldsKb()},
 * {@code "VmFlags: rd wr ..."} to {@link SmapsEntry#vmFlags()}, and any other to
 * {@link SmapsEntry#otherFields()}. A maps file is the same with header lines only, and
 * {@code /proc/[pid]/smaps_rollup} (one header, then fields) also parses. Blank lines are skipped.
 *
 * <p>Pure: it only reads the text it is given. Stateless and thread safe.
 */
public final class SmapsParser
{
    private static final String HEADER_SHAPE = "'start-end perms offset major:minor inode [pathname]'";

    private SmapsParser()
    {
    }

    /**
     * Parses smaps or maps text from a reader, up to its end. The reader is not closed.
     *
     * @param reader the text, e.g. of {@code /proc/self/smaps}.
     * @return the areas in input order; unmodifiable, empty for empty or blank input.
     * @throws SmapsFormatException if a line is malformed; its message gives the 1-based line number, what was
     *                              expected and the line: a field line before any header, a header without five
     *                              fields, bad hex, a start address not below the end address, perms other than
     *                              {@code [r-][w-][x-][ps]}, a bad device or inode, a {@code kB} field whose
     *                              value is not a decimal number, or a field repeated within one area.
     * @throws IOException          if reading fails.
     */
    public static List<SmapsEntry> parse(final Reader reader) throws IOException
    {
        final BufferedReader lines = reader instanceof BufferedReader buffered ? buffered : new BufferedReader(reader);
        final List<SmapsEntry> entries = new ArrayList<>();
        PendingEntry current = null;
        int lineNumber = 0;
        String line;
        while ((line = lines.readLine()) != null)
        {
            lineNumber++;
            if (line.isBlank())
            {
                continue;
            }
            final int colon = fieldNameEnd(line);
            if (colon >= 0)
            {
                if (current == null)
                {
                    throw new SmapsFormatException(lineNumber, line,
                        "a header line " + HEADER_SHAPE + " before any field line");
                }
                current.addField(lineNumber, line, line.substring(0, colon), line.substring(colon + 1).strip());
            }
            else
            {
                if (current != null)
                {
                    entries.add(current.toEntry());
                }
                current = parseHeader(lineNumber, line);
            }
        }
        if (current != null)
        {
            entries.add(current.toEntry());
        }
        return List.copyOf(entries);
    }

    /**
     * Parses an smaps or maps file, e.g. {@code Path.of("/proc/self/smaps")}. Bytes that are not valid UTF-8 (a
     * file name may hold any bytes) become U+FFFD in the pathname.
     *
     * @param path the file to read.
     * @return the areas in file order; unmodifiable.
     * @throws SmapsFormatException if a line is malformed; see {@link #parse(Reader)}.
     * @throws IOException          if the file cannot be opened or read.
     */
    public static List<SmapsEntry> parse(final Path path) throws IOException
    {
        try (Reader reader = new BufferedReader(
            new InputStreamReader(Files.newInputStream(path), StandardCharsets.UTF_8)))
        {
            return parse(reader);
        }
    }

    /**
     * @return the index of the colon ending a field name at the start of the line ({@code [A-Za-z][A-Za-z0-9_]*:}),
     *         or -1 when the line does not start with a field name (so should be a header).
     */
    private static int fieldNameEnd(final String line)
    {
        if (!isAsciiLetter(line.charAt(0)))
        {
            return -1;
        }
        for (int i = 1; i < line.length(); i++)
        {
            final char c = line.charAt(i);
            if (c == ':')
            {
                return i;
            }
            if (!isAsciiLetter(c) && !(c >= '0' && c <= '9') && c != '_')
            {
                return -1;
            }
        }
        return -1;
    }

    private static boolean isAsciiLetter(final char c)
    {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static PendingEntry parseHeader(final int lineNumber, final String line)
    {
        final Tokens tokens = new Tokens(line);
        final String range = tokens.next();
        final String perms = tokens.next();
        final String offset = tokens.next();
        final String device = tokens.next();
        final String inode = tokens.next();
        if (inode == null)
        {
            throw new SmapsFormatException(lineNumber, line,
                "a header line " + HEADER_SHAPE + " with at least 5 whitespace-separated fields");
        }
        final int dash = range.indexOf('-');
        if (dash < 0)
        {
            throw new SmapsFormatException(lineNumber, line,
                "an address range 'start-end' in hex as the first field (got '" + range + "')");
        }
        final long start = parseHex(lineNumber, line, range.substring(0, dash), "the start address");
        final long end = parseHex(lineNumber, line, range.substring(dash + 1), "the end address");
        if (Long.compareUnsigned(start, end) >= 0)
        {
            throw new SmapsFormatException(lineNumber, line,
                "a start address below the end address (got '" + range + "', start >= end)");
        }
        if (!isValidPerms(perms))
        {
            throw new SmapsFormatException(lineNumber, line,
                "perms of 4 characters [r-][w-][x-][ps], e.g. 'r-xp' (got '" + perms + "')");
        }
        final long offsetBytes = parseHex(lineNumber, line, offset, "the offset");
        if (!isValidDevice(device))
        {
            throw new SmapsFormatException(lineNumber, line,
                "a device 'major:minor' in hex, e.g. 'fd:01' (got '" + device + "')");
        }
        final long inodeNumber;
        try
        {
            if (!inode.chars().allMatch(c -> c >= '0' && c <= '9'))
            {
                throw new NumberFormatException("not decimal digits");
            }
            inodeNumber = Long.parseUnsignedLong(inode);
        }
        catch (final NumberFormatException e)
        {
            throw new SmapsFormatException(lineNumber, line,
                "the inode as an unsigned 64-bit decimal number (got '" + inode + "')", e);
        }
        return new PendingEntry(start, end, perms, offsetBytes, device, inodeNumber, tokens.rest().stripLeading());
    }

    private static long parseHex(final int lineNumber, final String line, final String text, final String what)
    {
        if (!isHex(text) || text.length() > 16)
        {
            throw new SmapsFormatException(lineNumber, line,
                what + " as 1 to 16 hex digits (got '" + text + "')");
        }
        return Long.parseUnsignedLong(text, 16);
    }

    private static boolean isHex(final String text)
    {
        return !text.isEmpty() && text.chars().allMatch(c -> Character.digit(c, 16) >= 0 && c < 128);
    }

    private static boolean isValidPerms(final String perms)
    {
        return perms.length() == 4
            && (perms.charAt(0) == 'r' || perms.charAt(0) == '-')
            && (perms.charAt(1) == 'w' || perms.charAt(1) == '-')
            && (perms.charAt(2) == 'x' || perms.charAt(2) == '-')
            && (perms.charAt(3) == 'p' || perms.charAt(3) == 's');
    }

    private static boolean isValidDevice(final String device)
    {
        final int colon = device.indexOf(':');
        return colon > 0 && isHex(device.substring(0, colon)) && isHex(device.substring(colon + 1));
    }

    /** Splits a header line into whitespace-separated tokens, and gives the untouched rest of the line. */
    private static final class Tokens
    {
        private final String line;
        private int position;

        Tokens(final String line)
        {
            this.line = line;
        }

        /** @return the next token, or null at the end of the line. A leading blank gives an empty token. */
        String next()
        {
            if (position >= line.length())
            {
                return null;
            }
            final int start = position;
            while (position < line.length() && !isSeparator(line.charAt(position)))
            {
                position++;
            }
            final String token = line.substring(start, position);
            while (position < line.length() && isSeparator(line.charAt(position)) && !token.isEmpty())
            {
                position++;
            }
            return token.isEmpty() ? null : token;
        }

        String rest()
        {
            return line.substring(position);
        }

        private static boolean isSeparator(final char c)
        {
            return c == ' ' || c == '\t';
        }
    }

    /** A header read so far and the field lines collected under it. Not thread safe. */
    private static final class PendingEntry
    {
        private final long start;
        private final long end;
        private final String perms;
        private final long offsetBytes;
        private final String device;
        private final long inode;
        private final String pathname;
        private final Map<String, Long> fieldsKb = new LinkedHashMap<>();
        private final Map<String, String> otherFields = new LinkedHashMap<>();
        private List<String> vmFlags;

        PendingEntry(final long start, final long end, final String perms, final long offsetBytes,
                     final String device, final long inode, final String pathname)
        {
            this.start = start;
            this.end = end;
            this.perms = perms;
            this.offsetBytes = offsetBytes;
            this.device = device;
            this.inode = inode;
            this.pathname = pathname;
        }

        void addField(final int lineNumber, final String line, final String name, final String value)
        {
            if (fieldsKb.containsKey(name) || otherFields.containsKey(name)
                || (name.equals("VmFlags") && vmFlags != null))
            {
                throw new SmapsFormatException(lineNumber, line,
                    "each field at most once per area (field '" + name + "' repeated)");
            }
            if (name.equals("VmFlags"))
            {
                vmFlags = value.isEmpty() ? List.of() : List.of(value.split("\\s+"));
                return;
            }
            if (value.endsWith("kB"))
            {
                final String number = value.substring(0, value.length() - 2).strip();
                try
                {
                    if (number.isEmpty() || !number.chars().allMatch(c -> c >= '0' && c <= '9'))
                    {
                        throw new NumberFormatException("not decimal digits");
                    }
                    fieldsKb.put(name, Long.parseLong(number));
                }
                catch (final NumberFormatException e)
                {
                    throw new SmapsFormatException(lineNumber, line,
                        "a field 'Name: <decimal number> kB' (got '" + value + "')", e);
                }
                return;
            }
            otherFields.put(name, value);
        }

        SmapsEntry toEntry()
        {
            return new SmapsEntry(start, end, perms.charAt(0) == 'r', perms.charAt(1) == 'w',
                perms.charAt(2) == 'x', perms.charAt(3) == 's', offsetBytes, device, inode, pathname,
                fieldsKb, otherFields, vmFlags == null ? List.of() : vmFlags);
        }
    }
}
