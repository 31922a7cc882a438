package dev.rnicsim.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.rnicsim.docs.Docs.Fence;
import dev.rnicsim.scenarios.cli.Rnicsim;
import dev.rnicsim.scenarios.script.RunResult;
import dev.rnicsim.scenarios.script.ScriptException;
import dev.rnicsim.scenarios.script.ScriptRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every example in the README and in {@code docs/} works as written: scripts run with every expect holding, Java
 * compiles against the modules, {@code ./rnicsim} commands exit 0 and print what the page says they print. The tag
 * after a fence's opening says what to do with it (docs/README.md lists the tags); a fence without a known tag fails,
 * so that no example escapes the check by omission.
 */
class DocExamplesTest
{
    /** The fence tags, by language, that this test knows. */
    private static final Set<String> LANGUAGES = Set.of("rnicsim-script", "java", "sh", "text", "yaml", "json", "xml",
        "mermaid");

    @TempDir
    static Path work;

    @TestFactory
    Stream<DynamicNode> everyExampleOfEveryPage()
    {
        return Docs.pages().stream().map(page ->
        {
            final Page p = new Page(page, work.resolve(page.replace('/', '_')));
            final List<DynamicNode> tests = new ArrayList<>();
            final List<Fence> java = new ArrayList<>();
            for (final Fence f : Docs.fences(page))
            {
                if (f.tag("from") != null)
                {
                    tests.add(DynamicTest.dynamicTest("copy of " + f.tag("from") + " at " + f.where(),
                        () -> assertThat(Docs.read(f.tag("from"))).as(f.where() + ": the page shows " + f.tag("from")
                            + " as it is; copy the file into the page again").contains(f.text())));
                    continue;
                }
                switch (f.language())
                {
                    case "rnicsim-script" ->
                    {
                        tests.add(DynamicTest.dynamicTest("script at " + f.where(), () -> runScript(f)));
                        if (f.tag("file") != null)
                        {
                            tests.add(DynamicTest.dynamicTest("file " + f.tag("file") + " at " + f.where(),
                                () -> p.write(f)));
                        }
                    }
                    case "java" -> java.add(f);
                    case "sh" ->
                    {
                        if (!f.has("norun"))
                        {
                            tests.add(DynamicTest.dynamicTest("commands at " + f.where(), () -> p.runCommands(f)));
                        }
                    }
                    case "text" ->
                    {
                        if (f.has("output"))
                        {
                            tests.add(DynamicTest.dynamicTest("output at " + f.where(), () -> p.checkOutput(f)));
                        }
                    }
                    case "yaml", "json" ->
                    {
                        if (f.tag("file") != null)
                        {
                            tests.add(DynamicTest.dynamicTest("file " + f.tag("file") + " at " + f.where(),
                                () -> p.write(f)));
                        }
                    }
                    default ->
                    {
                        if (!LANGUAGES.contains(f.language()))
                        {
                            tests.add(DynamicTest.dynamicTest("fence at " + f.where(), () -> fail(f.where()
                                + ": a fence tagged '" + f.info() + "': tag it with one of " + LANGUAGES
                                + " (and the tags docs/README.md lists), so the documentation tests know what to do "
                                + "with it")));
                        }
                    }
                }
            }
            if (!java.isEmpty())
            {
                tests.add(DynamicTest.dynamicTest("Java of " + page, () -> compile(page, java)));
            }
            return DynamicContainer.dynamicContainer(page, tests);
        });
    }

    // ------------------------------------------------------------------ scripts

    private static void runScript(final Fence f)
    {
        final StringWriter out = new StringWriter();
        final RunResult r;
        try
        {
            r = new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL).run(f.where(), f.text(),
                Docs.root());
        }
        catch (final ScriptException e)
        {
            throw new AssertionError(f.where() + ": the script does not parse: " + e.getMessage(), e);
        }
        assertThat(r.exitCode()).as(f.where() + ": the script's run (exit 0: every expect held): " + r.failure()
            + "\n" + out).isZero();
    }

    // ------------------------------------------------------------------ commands

    /** One page's commands: the folder they run in, and the output of the last one. */
    private static final class Page
    {
        private final String page;
        private final Path dir;
        private String lastOut = "";
        private String lastCommand = "";

        Page(final String page, final Path dir)
        {
            this.page = page;
            this.dir = dir;
        }

        void write(final Fence f) throws IOException
        {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve(f.tag("file")), f.text(), StandardCharsets.UTF_8);
        }

        void runCommands(final Fence f) throws IOException
        {
            Files.createDirectories(dir);
            int ran = 0;
            for (final String command : commands(f.text()))
            {
                final List<String> words = words(command);
                if (words.isEmpty() || !words.get(0).equals("./rnicsim"))
                {
                    throw new AssertionError(f.where() + ": '" + command + "' in a sh fence that runs: only "
                        + "./rnicsim commands run here; tag the fence 'sh norun' if it must not run");
                }
                final List<String> args = new ArrayList<>();
                for (final String w : words.subList(1, words.size()))
                {
                    args.add(path(w));
                }
                final StringWriter out = new StringWriter();
                final StringWriter err = new StringWriter();
                final int code = Rnicsim.execute(args.toArray(String[]::new), new PrintWriter(out, true),
                    new PrintWriter(err, true));
                assertThat(code).as(f.where() + ": '" + command + "' exits 0; it printed:\n" + out + err).isZero();
                lastOut = out.toString();
                lastCommand = command;
                ran++;
            }
            assertThat(ran).as(f.where() + ": a sh fence with no ./rnicsim command; tag it 'sh norun'").isPositive();
        }

        void checkOutput(final Fence f)
        {
            assertThat(lastCommand).as(f.where() + ": an output fence with no command before it in " + page)
                .isNotEmpty();
            assertThat(flat(lastOut)).as(f.where() + ": the output of '" + lastCommand + "' contains the page's "
                + "text; it printed:\n" + lastOut).contains(flat(f.text()));
        }

        /**
         * A word that names a file (it has an extension and no colon) is resolved in the page's folder when a file
         * of the page has that name, else at the project root when it exists there, else in the page's folder (an
         * output such as {@code cost.svg}).
         */
        private String path(final String word)
        {
            final int eq = word.startsWith("--") ? word.indexOf('=') : -1;
            final String value = eq < 0 ? word : word.substring(eq + 1);
            if (value.startsWith("-") || value.contains(":") || !value.matches(".*\\.[a-z]{2,5}")
                || Path.of(value).isAbsolute())
            {
                return word;
            }
            Path p = dir.resolve(value);
            if (!Files.exists(p) && Files.exists(Docs.root().resolve(value)))
            {
                p = Docs.root().resolve(value);
            }
            return (eq < 0 ? "" : word.substring(0, eq + 1)) + p;
        }
    }

    /** The commands of a fence: lines joined where they end in a backslash, blank and comment lines left out. */
    static List<String> commands(final String text)
    {
        final List<String> out = new ArrayList<>();
        final StringBuilder cur = new StringBuilder();
        for (final String line : text.split("\n"))
        {
            final String l = line.strip();
            if (l.endsWith("\\"))
            {
                cur.append(l, 0, l.length() - 1).append(' ');
                cur.replace(0, cur.length(), cur.toString().replaceAll("\\s+$", " "));
                continue;
            }
            cur.append(l);
            final String c = cur.toString().strip();
            cur.setLength(0);
            if (!c.isEmpty() && !c.startsWith("#"))
            {
                out.add(c);
            }
        }
        return out;
    }

    /** Shell words: blanks separate, quotes group, {@code #} after a blank starts a comment. */
    static List<String> words(final String command)
    {
        final List<String> out = new ArrayList<>();
        final StringBuilder w = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (int i = 0; i < command.length(); i++)
        {
            final char c = command.charAt(i);
            if (quote != 0)
            {
                if (c == quote)
                {
                    quote = 0;
                }
                else
                {
                    w.append(c);
                }
            }
            else if (c == '\'' || c == '"')
            {
                quote = c;
                inWord = true;
            }
            else if (Character.isWhitespace(c))
            {
                if (inWord)
                {
                    out.add(w.toString());
                    w.setLength(0);
                    inWord = false;
                }
            }
            else if (c == '#' && !inWord)
            {
                break;
            }
            else
            {
                w.append(c);
                inWord = true;
            }
        }
        if (inWord)
        {
            out.add(w.toString());
        }
        return out;
    }

    private static String flat(final String s)
    {
        return s.replaceAll("\\s+", " ").strip();
    }

    // ------------------------------------------------------------------ Java

    private static final Pattern IMPORT = Pattern.compile("(?m)^import [\\w.*\\s]+;\\s*$");
    private static final Pattern CLASS = Pattern.compile("(?m)^(?:public\\s+|final\\s+|abstract\\s+)*(?:class|record"
        + "|interface|enum)\\s+(\\w+)");

    /** A source file made from the page's examples, with where each came from. */
    private record Unit(String className, String source, Fence fence)
    {
    }

    private static void compile(final String page, final List<Fence> fences) throws IOException
    {
        final List<Unit> units = new ArrayList<>();
        final String prefix = "Doc_" + page.replaceAll("[^A-Za-z0-9]", "_") + "_";
        final Map<String, String[]> named = new HashMap<>();      // id -> {imports, body}
        for (final Fence f : fences)
        {
            final StringBuilder own = new StringBuilder();
            final Matcher m = IMPORT.matcher(f.text());
            while (m.find())
            {
                own.append(m.group().strip()).append('\n');
            }
            final String code = IMPORT.matcher(f.text()).replaceAll("");
            if (f.has("file"))
            {
                final Matcher c = CLASS.matcher(code);
                if (!c.find())
                {
                    throw new AssertionError(f.where() + ": a 'java file' example declares no class");
                }
                units.add(new Unit(c.group(1), own + code, f));
                continue;
            }
            if (f.has("members"))
            {
                units.add(new Unit(prefix + f.line(), own + "class " + prefix + f.line() + " {\n" + code + "}\n", f));
                continue;
            }
            String imports = own.toString();
            String body = code;
            final String continues = f.tag("continues");
            if (continues != null)
            {
                final String[] before = named.get(continues);
                if (before == null)
                {
                    throw new AssertionError(f.where() + ": 'continues=" + continues + "' but no Java example before "
                        + "it in the page has 'id=" + continues + "'");
                }
                imports = before[0] + imports;
                body = splice(before[1], code);
                named.put(continues, new String[] {imports, body});
            }
            if (f.tag("id") != null)
            {
                named.put(f.tag("id"), new String[] {imports, body});
            }
            units.add(new Unit(prefix + f.line(), imports + "class " + prefix + f.line() + " {\n"
                + "    @SuppressWarnings(\"unused\")\n    void example() throws Exception {\n" + body
                + "    }\n}\n", f));
        }
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        final Path out = Files.createDirectories(work.resolve("classes").resolve(prefix));
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT,
            StandardCharsets.UTF_8))
        {
            final List<JavaFileObject> sources = new ArrayList<>();
            for (final Unit u : units)
            {
                sources.add(new SimpleJavaFileObject(java.net.URI.create("string:///" + u.className() + ".java"),
                    JavaFileObject.Kind.SOURCE)
                {
                    @Override
                    public CharSequence getCharContent(final boolean ignoreEncodingErrors)
                    {
                        return u.source();
                    }
                });
            }
            final String classPath = System.getProperty("surefire.test.class.path",
                System.getProperty("java.class.path"));
            final boolean ok = javac.getTask(null, files, diagnostics, List.of("-classpath", classPath, "-d",
                out.toString(), "-proc:none", "-Xlint:none", "--release", "25"), null, sources).call();
            if (!ok)
            {
                final StringBuilder why = new StringBuilder(page + ": examples that do not compile:\n");
                for (final Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics())
                {
                    if (d.getKind() != Diagnostic.Kind.ERROR)
                    {
                        continue;
                    }
                    final String name = d.getSource() == null ? "" : d.getSource().getName()
                        .replaceAll(".*/|\\.java$", "");
                    final Unit u = units.stream().filter(x -> x.className().equals(name)).findFirst().orElse(null);
                    final String line = u == null || d.getLineNumber() < 1 ? ""
                        : u.source().split("\n", -1)[(int)d.getLineNumber() - 1].strip();
                    why.append("  the example at ").append(u == null ? page : u.fence().where()).append(": ")
                        .append(d.getMessage(Locale.ROOT)).append("\n      in: ").append(line).append('\n');
                }
                fail(why.toString());
            }
        }
    }

    /** Puts code inside the previous example's last block: before its last line when that line closes a block. */
    static String splice(final String body, final String code)
    {
        final String trimmed = body.stripTrailing();
        final int last = trimmed.lastIndexOf('\n');
        final String lastLine = trimmed.substring(last + 1).strip();
        if (lastLine.startsWith("}"))
        {
            return trimmed.substring(0, last + 1) + code + trimmed.substring(last + 1) + "\n";
        }
        return body + code;
    }

    // ------------------------------------------------------------------ the checks themselves

    @Test
    void noPageNamesTheFoldersOfOneMachine()
    {
        final List<String> why = new ArrayList<>();
        for (final String page : Docs.pages())
        {
            final String[] lines = Docs.read(page).split("\n");
            for (int i = 0; i < lines.length; i++)
            {
                if (lines[i].matches(".*(/home/|/root/|/work/|/tmp/|temurin-|/Users/).*"))
                {
                    why.add(page + ":" + (i + 1) + ": " + lines[i].strip());
                }
            }
        }
        assertThat(why).as("lines naming one machine's folders (a user's home, a JDK build's folder)").isEmpty();
    }

    @Test
    void aBrokenExampleFailsWithItsPlaceAndReason()
    {
        assertThatThrownBy(() -> runScript(new Fence("docs/x.md", 3, "rnicsim-script",
            "host h ram=1G\nexpect h.mem_total == 2G\n"))).isInstanceOf(AssertionError.class)
            .hasMessageContaining("docs/x.md:3").hasMessageContaining("expect h.mem_total == 2G");
        assertThatThrownBy(() -> runScript(new Fence("docs/x.md", 3, "rnicsim-script", "host\n")))
            .isInstanceOf(AssertionError.class).hasMessageContaining("does not parse");
        assertThatThrownBy(() -> compile("docs/x.md", List.of(new Fence("docs/x.md", 7, "java",
            "import dev.rnicsim.verbs.Access;\n\nAccess a = Access.NO_SUCH_FLAG;\n"))))
            .isInstanceOf(AssertionError.class).hasMessageContaining("the example at docs/x.md:7")
            .hasMessageContaining("NO_SUCH_FLAG");
        final Page page = new Page("docs/x.md", work.resolve("broken"));
        assertThatThrownBy(() -> page.runCommands(new Fence("docs/x.md", 9, "sh", "./rnicsim scenario run nothing\n")))
            .isInstanceOf(AssertionError.class).hasMessageContaining("docs/x.md:9")
            .hasMessageContaining("no scenario 'nothing'");
    }

    @Test
    void shellWordsAndCommandsAreCutAsAShellCutsThem()
    {
        assertThat(words("./rnicsim plan --sweep size --svg 'a b.svg'  # a comment"))
            .containsExactly("./rnicsim", "plan", "--sweep", "size", "--svg", "a b.svg");
        assertThat(commands("# a comment\n./rnicsim run \\\n  x.rsim\n\n./rnicsim tour\n"))
            .containsExactly("./rnicsim run x.rsim", "./rnicsim tour");
    }

    @Test
    void aContinuedExampleGoesInsideTheBlockOfTheOneBefore()
    {
        assertThat(splice("try (A a = b()) {\n    a.x();\n}\n", "a.y();\n"))
            .isEqualTo("try (A a = b()) {\n    a.x();\na.y();\n}\n");
        assertThat(splice("int x = 1;\n", "x++;\n")).isEqualTo("int x = 1;\nx++;\n");
    }
}
