package dev.rnicsim.scenarios.errno;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Every place in the model's modules (pagetable, mtt, sim-nic, verbs-api) where an errno is raised with a message:
 * {@code new KernelException}, {@code new TableException}, {@code new VerbsException}, {@code new PostException},
 * {@code new ReregException}, {@code new SegmentationFault}, sim-nic's {@code Errors.invalid} and
 * {@code Errors.of(verb, errno, message)}, and ReregMr's {@code reregCmd} and {@code reregInput}. Found by reading
 * the sources, so a new errno site is found the day it is written. Stateless.
 */
final class ErrnoSites
{
    /** The modules whose errnos a user meets, below the CLI. */
    static final List<String> MODULES = List.of("pagetable", "mtt", "sim-nic", "verbs-api");

    /** The construction forms and the index of their message argument. */
    private static final Map<String, Integer> FORMS = Map.of("new KernelException(", 1, "new TableException(", 1,
        "new VerbsException(", 2, "new PostException(", 3, "new ReregException(", 2, "new SegmentationFault(", 1,
        "Errors.invalid(", 1, "Errors.of(", 2, "reregCmd(", 1, "reregInput(", 0);

    private static final Pattern FORM = Pattern.compile(String.join("|", FORMS.keySet().stream()
        .map(Pattern::quote).toList()));

    private static final Pattern LITERAL = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");

    /**
     * One errno site.
     *
     * @param module   its module.
     * @param file     its source file's name.
     * @param line     the line of the construction (1-based).
     * @param message  the message argument's source text.
     * @param literals the string literals of the message, in order.
     */
    record Site(String module, String file, int line, String message, List<String> literals)
    {
        /** @return {@code File.java:LINE}, where to look. */
        String where()
        {
            return module + "/" + file + ":" + line;
        }

        /** @return the literals joined by {@code …} where a value goes: the message as a reader sees it. */
        String text()
        {
            return String.join("…", literals);
        }

        /**
         * @return a stable name of the site that survives edits elsewhere in its file: the file and the first 40
         *         characters of its text.
         */
        String key()
        {
            final String t = text();
            return (file + ": " + (t.length() > 40 ? t.substring(0, 40) : t)).strip();
        }

        /**
         * @return true when the message wraps another failure's message ({@code e.detail()},
         *         {@code e.getMessage()}): that inner message is checked at its own site.
         */
        boolean wraps()
        {
            return message.contains(".detail()") || message.contains(".getMessage()");
        }

        /**
         * @return a pattern that finds this site's message in a failure's text: its literals in order. A
         *         ternary gives alternatives: {@code "a" + (c ? "x" : "y") + "b"} matches {@code a…x…b} or
         *         {@code a…y…b}, and a message that is a ternary as a whole matches either branch.
         */
        Pattern pattern()
        {
            final List<String> alternatives = new ArrayList<>();
            for (final List<String> branch : branches(message))
            {
                final List<String> parts = new ArrayList<>();
                for (final String l : branch)
                {
                    final String unescaped = l.replace("\\\"", "\"").replace("\\\\", "\\");
                    if (!unescaped.isBlank())
                    {
                        parts.add(Pattern.quote(unescaped));
                    }
                }
                alternatives.add("(?:" + String.join(".*?", parts) + ")");
            }
            return Pattern.compile(String.join("|", alternatives), Pattern.DOTALL);
        }
    }

    /**
     * @param expr a message's source text.
     * @return the literal sequences the message can produce: one per way through its ternaries (at most 16).
     */
    static List<List<String>> branches(final String expr)
    {
        List<List<String>> out = new ArrayList<>();
        out.add(new ArrayList<>());
        int i = 0;
        while (i < expr.length())
        {
            final char ch = expr.charAt(i);
            if (ch == '"')
            {
                final int end = stringEnd(expr, i);
                final String literal = expr.substring(i + 1, end);
                for (final List<String> b : out)
                {
                    b.add(literal);
                }
                i = end + 1;
            }
            else if (ch == '(')
            {
                final int close = matching(expr, i);
                final String inner = expr.substring(i + 1, close);
                final int q = topLevel(inner, '?', 0);
                final List<List<String>> inside = new ArrayList<>();
                if (q >= 0 && topLevel(inner, ':', q) >= 0)
                {
                    final int colon = topLevel(inner, ':', q);
                    inside.addAll(branches(inner.substring(q + 1, colon)));
                    inside.addAll(branches(inner.substring(colon + 1)));
                }
                else
                {
                    inside.addAll(branches(inner));
                }
                final List<List<String>> next = new ArrayList<>();
                for (final List<String> b : out)
                {
                    for (final List<String> in : inside)
                    {
                        if (next.size() < 16)
                        {
                            final List<String> joined = new ArrayList<>(b);
                            joined.addAll(in);
                            next.add(joined);
                        }
                    }
                }
                out = next;
                i = close + 1;
            }
            else if (ch == '?' && topLevel(expr, ':', i) >= 0)
            {
                // the whole message is a ternary: its condition's literals are not printed
                final int colon = topLevel(expr, ':', i);
                final List<List<String>> both = new ArrayList<>(branches(expr.substring(i + 1, colon)));
                both.addAll(branches(expr.substring(colon + 1)));
                return both;
            }
            else
            {
                i++;
            }
        }
        return out;
    }

    /** The index of the quote that closes the string literal opening at {@code start}. */
    private static int stringEnd(final String s, final int start)
    {
        for (int i = start + 1; i < s.length(); i++)
        {
            if (s.charAt(i) == '\\')
            {
                i++;
            }
            else if (s.charAt(i) == '"')
            {
                return i;
            }
        }
        return s.length() - 1;
    }

    /** The index of the parenthesis that closes the one at {@code open}, outside string literals. */
    private static int matching(final String s, final int open)
    {
        int depth = 0;
        for (int i = open; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            if (c == '"')
            {
                i = stringEnd(s, i);
            }
            else if (c == '\'' && i + 2 < s.length())
            {
                i += s.charAt(i + 1) == '\\' ? 3 : 2;
            }
            else if (c == '(')
            {
                depth++;
            }
            else if (c == ')' && --depth == 0)
            {
                return i;
            }
        }
        return s.length() - 1;
    }

    /** The index of {@code wanted} at parenthesis depth 0 and outside literals, from {@code from}, or -1. */
    private static int topLevel(final String s, final char wanted, final int from)
    {
        int depth = 0;
        for (int i = from; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            if (c == '"')
            {
                i = stringEnd(s, i);
            }
            else if (c == '\'' && i + 2 < s.length())
            {
                i += s.charAt(i + 1) == '\\' ? 3 : 2;
            }
            else if (c == '(')
            {
                depth++;
            }
            else if (c == ')')
            {
                depth--;
            }
            else if (c == wanted && depth == 0 && (wanted != ':' || i > from))
            {
                return i;
            }
        }
        return -1;
    }

    private ErrnoSites()
    {
    }

    /**
     * @param root the project's root folder.
     * @return every errno site with at least one literal in its message (a site that only passes on another
     *         failure's errno and detail has nothing of its own to check).
     */
    static List<Site> scan(final Path root)
    {
        final List<Site> sites = new ArrayList<>();
        for (final String module : MODULES)
        {
            final Path src = root.resolve(module).resolve("src/main/java");
            try (Stream<Path> files = Files.walk(src))
            {
                for (final Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList())
                {
                    scanFile(module, f, Files.readString(f), sites);
                }
            }
            catch (final IOException e)
            {
                throw new UncheckedIOException(e);
            }
        }
        return sites;
    }

    private static void scanFile(final String module, final Path f, final String src, final List<Site> sites)
    {
        final Matcher m = FORM.matcher(src);
        while (m.find())
        {
            final int lineStart = src.lastIndexOf('\n', m.start()) + 1;
            final String before = src.substring(lineStart, m.start());
            if (before.matches(".*\\b(static|private|public)\\b.*") || before.trim().startsWith("*")
                || before.trim().startsWith("//"))
            {
                continue; // the declaration of a helper, or a comment
            }
            final List<String> args = arguments(src, m.end());
            final int index = FORMS.get(m.group());
            if (args.size() <= index || m.group().equals("Errors.of(") && args.size() == 2)
            {
                continue; // Errors.of(verb, e): passes a lower failure on unchanged
            }
            final String message = args.get(index);
            final List<String> literals = new ArrayList<>();
            final Matcher l = LITERAL.matcher(message);
            while (l.find())
            {
                literals.add(l.group(1));
            }
            if (!literals.isEmpty())
            {
                final int line = (int)src.substring(0, m.start()).chars().filter(c -> c == '\n').count() + 1;
                sites.add(new Site(module, f.getFileName().toString(), line, message, literals));
            }
        }
    }

    /** The top-level arguments of the call whose parenthesis opens just before {@code from}. */
    private static List<String> arguments(final String src, final int from)
    {
        final List<String> args = new ArrayList<>();
        int depth = 1;
        int start = from;
        boolean inString = false;
        for (int i = from; i < src.length(); i++)
        {
            final char c = src.charAt(i);
            if (inString)
            {
                if (c == '\\')
                {
                    i++;
                }
                else if (c == '"')
                {
                    inString = false;
                }
                continue;
            }
            if (c == '"')
            {
                inString = true;
            }
            else if (c == '\'' && i + 2 < src.length())
            {
                i += src.charAt(i + 1) == '\\' ? 3 : 2; // a char literal, e.g. '(' or '\n'
            }
            else if (c == '(' || c == '[' || c == '{')
            {
                depth++;
            }
            else if (c == ')' || c == ']' || c == '}')
            {
                depth--;
                if (depth == 0)
                {
                    args.add(src.substring(start, i).trim());
                    return args;
                }
            }
            else if (c == ',' && depth == 1)
            {
                args.add(src.substring(start, i).trim());
                start = i + 1;
            }
        }
        return args;
    }
}
