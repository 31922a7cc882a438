package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/**
 * rdma-core's own test suite (pyverbs unittest, installed by the distribution's python3-pyverbs in
 * {@code /usr/share/doc/rdma-core/tests}, some files gzipped): the copy a run needs, the parse of its {@code -v}
 * output per test id, and the two files that say what is expected of it, the ledger of known-open cases and the
 * allow-list of skip reasons.
 */
final class RdmaCoreSuite
{
    /** Where python3-pyverbs installs the suite. */
    static final Path INSTALLED = Path.of("/usr/share/doc/rdma-core/tests");

    /** How a test ended, as unittest's verbose runner prints it. */
    enum Status
    {
        OK, FAIL, ERROR, SKIP, EXPECTED_FAILURE, UNEXPECTED_SUCCESS
    }

    /** One test's outcome; {@code reason} is the skip's reason, empty otherwise. */
    record Outcome(String id, Status status, String reason)
    {
    }

    /** One run's outcomes by test id and the totals unittest printed. */
    record Result(Map<String, Outcome> outcomes, int ran, String summary)
    {
        long count(final Status s)
        {
            return outcomes.values().stream().filter(o -> o.status() == s).count();
        }
    }

    /** A known-open case: the profiles it is open on ({@code *}: all), the test id and why. */
    record LedgerEntry(List<String> profiles, String id, String reason)
    {
        boolean appliesTo(final String profile)
        {
            return profiles.contains("*") || profiles.contains(profile);
        }

        /**
         * @return true for a case whose outcome depends on the tests run before it (its reason starts "varies:"):
         *         it may fail or pass, and either keeps the ledger exact.
         */
        boolean varies()
        {
            return reason.startsWith("varies:");
        }
    }

    /** A legitimate skip: the profiles it is legitimate on ({@code *}: all), the pattern its reason matches and why. */
    record AllowedSkip(List<String> profiles, Pattern reason, String why)
    {
        boolean allows(final String profile, final String skipReason)
        {
            return (profiles.contains("*") || profiles.contains(profile)) && reason.matcher(skipReason).matches();
        }
    }

    // "test_x (tests.test_mod.Class.test_x)" opens each test; the docstring's first line may follow on its own line
    private static final Pattern START = Pattern.compile("^(test\\w*) \\((tests\\.[\\w.]+)\\)", Pattern.MULTILINE);
    private static final Pattern STATUS = Pattern.compile(
        "(?:\\.\\.\\. |^)(ok|FAIL|ERROR|expected failure|unexpected success|skipped (['\"])(.*)\\2)$",
        Pattern.MULTILINE);
    private static final Pattern RAN = Pattern.compile("^Ran (\\d+) tests? in", Pattern.MULTILINE);

    private RdmaCoreSuite()
    {
    }

    /**
     * Copies the installed suite into {@code into}/tests, gunzipping each {@code .gz} file (the distribution
     * compresses the larger ones).
     *
     * @return the copy's run_tests.py.
     */
    static Path copy(final Path into) throws IOException
    {
        final Path tests = into.resolve("tests");
        Files.createDirectories(tests);
        try (Stream<Path> files = Files.list(INSTALLED))
        {
            for (final Path f : files.toList())
            {
                final String name = f.getFileName().toString();
                if (name.endsWith(".gz"))
                {
                    try (InputStream in = new GZIPInputStream(Files.newInputStream(f));
                        OutputStream out = Files.newOutputStream(tests.resolve(name.substring(0, name.length() - 3))))
                    {
                        in.transferTo(out);
                    }
                }
                else if (Files.isRegularFile(f))
                {
                    Files.copy(f, tests.resolve(name), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        return tests.resolve("run_tests.py");
    }

    /**
     * Parses the output of {@code run_tests.py -v}: each test's id, then (after its docstring's first line, and after
     * whatever the test itself printed) its status.
     *
     * @throws IllegalStateException when a test has no status, or the count differs from unittest's "Ran N tests".
     */
    static Result parse(final String output)
    {
        // the report of failures follows the last test's status: parse only what precedes it
        int end = output.length();
        for (final String mark : List.of("\n======", "\n------"))
        {
            final int i = output.indexOf(mark);
            if (i >= 0)
            {
                end = Math.min(end, i);
            }
        }
        final String run = output.substring(0, end);
        final Map<String, Outcome> outcomes = new LinkedHashMap<>();
        final Matcher start = START.matcher(run);
        final List<int[]> spans = new ArrayList<>();
        final List<String> ids = new ArrayList<>();
        while (start.find())
        {
            if (!spans.isEmpty())
            {
                spans.get(spans.size() - 1)[1] = start.start();
            }
            spans.add(new int[] {start.end(), run.length()});
            ids.add(start.group(2));
        }
        for (int i = 0; i < ids.size(); i++)
        {
            final String chunk = run.substring(spans.get(i)[0], spans.get(i)[1]);
            final Matcher m = STATUS.matcher(chunk);
            Outcome last = null;
            while (m.find())
            {
                last = outcome(ids.get(i), m);
            }
            if (last == null)
            {
                throw new IllegalStateException("no status for " + ids.get(i) + " in: " + chunk);
            }
            outcomes.put(ids.get(i), last);
        }
        final Matcher ran = RAN.matcher(output);
        if (!ran.find())
        {
            throw new IllegalStateException("no \"Ran N tests\" line: the suite did not finish");
        }
        final int n = Integer.parseInt(ran.group(1));
        if (n != outcomes.size())
        {
            throw new IllegalStateException("unittest ran " + n + " tests, the output shows " + outcomes.size());
        }
        final int after = output.indexOf('\n', ran.end());
        final String summary = after < 0 ? "" : output.substring(after).strip();
        return new Result(outcomes, n, summary);
    }

    private static Outcome outcome(final String id, final Matcher m)
    {
        final String s = m.group(1);
        return switch (s)
        {
            case "ok" -> new Outcome(id, Status.OK, "");
            case "FAIL" -> new Outcome(id, Status.FAIL, "");
            case "ERROR" -> new Outcome(id, Status.ERROR, "");
            case "expected failure" -> new Outcome(id, Status.EXPECTED_FAILURE, "");
            case "unexpected success" -> new Outcome(id, Status.UNEXPECTED_SUCCESS, "");
            default -> new Outcome(id, Status.SKIP, m.group(3));
        };
    }

    /**
     * Reads the ledger: {@code PROFILES TEST_ID REASON} a line, PROFILES {@code *} or a comma list; {@code #} starts a
     * comment line.
     */
    static List<LedgerEntry> ledger(final Path file) throws IOException
    {
        final List<LedgerEntry> out = new ArrayList<>();
        for (final String line : lines(file))
        {
            final String[] f = line.split("\\s+", 3);
            if (f.length < 3 || f[2].isBlank())
            {
                throw new IllegalStateException(file + ": \"" + line + "\" is not PROFILES TEST_ID REASON");
            }
            out.add(new LedgerEntry(List.of(f[0].split(",")), f[1], f[2]));
        }
        return out;
    }

    /**
     * Reads the allow-list: {@code PROFILES WHY :: REGEX} a line, PROFILES {@code *} or a comma list, the regex
     * matching the whole skip reason.
     */
    static List<AllowedSkip> allowedSkips(final Path file) throws IOException
    {
        final List<AllowedSkip> out = new ArrayList<>();
        for (final String line : lines(file))
        {
            final int sep = line.indexOf(" :: ");
            if (sep <= 0)
            {
                throw new IllegalStateException(file + ": \"" + line + "\" is not WHY :: REGEX");
            }
            final String[] head = line.substring(0, sep).strip().split("\\s+", 2);
            if (head.length < 2)
            {
                throw new IllegalStateException(file + ": \"" + line + "\" is not PROFILES WHY :: REGEX");
            }
            out.add(new AllowedSkip(List.of(head[0].split(",")), Pattern.compile(line.substring(sep + 4)), head[1]));
        }
        return out;
    }

    private static List<String> lines(final Path file) throws IOException
    {
        return Files.readAllLines(file, StandardCharsets.UTF_8).stream().map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    }
}
