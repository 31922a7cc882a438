package dev.rnicsim.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.cli.Catalogue;
import dev.rnicsim.scenarios.cli.Rnicsim;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The command line and its documentation agree: docs/cli.md has a section for every subcommand whose option table
 * names exactly the options the command has (from picocli's {@link CommandSpec}), every {@code --help} lists every
 * option with a description, the tour's help names each chapter the tour has, no help names a machine's folders, and
 * {@code -q}/{@code -v} mean the same on every command that runs a script.
 */
class CliReferenceTest
{
    private static final String PAGE = "docs/cli.md";
    private static final Pattern SECTION = Pattern.compile("^## `rnicsim ([a-z ]+?)(?: [A-Z].*)?`$");

    /** Every runnable subcommand by its path ({@code scenario run}), the help command left out. */
    private static Map<String, CommandSpec> commands()
    {
        final Map<String, CommandSpec> out = new LinkedHashMap<>();
        collect(new CommandLine(new Rnicsim()).getCommandSpec(), "", out);
        return out;
    }

    private static void collect(final CommandSpec spec, final String path, final Map<String, CommandSpec> out)
    {
        for (final Map.Entry<String, CommandLine> e : spec.subcommands().entrySet())
        {
            final CommandSpec sub = e.getValue().getCommandSpec();
            if (sub.userObject() instanceof CommandLine.HelpCommand || !sub.name().equals(e.getKey()))
            {
                continue;
            }
            final String p = (path.isEmpty() ? "" : path + " ") + sub.name();
            if (sub.subcommands().isEmpty())
            {
                out.put(p, sub);
            }
            collect(sub, p, out);
        }
    }

    private static Set<String> options(final CommandSpec spec)
    {
        final Set<String> out = new TreeSet<>();
        for (final OptionSpec o : spec.options())
        {
            if (!o.usageHelp() && !o.versionHelp())
            {
                out.addAll(List.of(o.names()));
            }
        }
        return out;
    }

    /** The sections of docs/cli.md for commands, each with the option names its table lists. */
    private static Map<String, Set<String>> documented()
    {
        final Map<String, Set<String>> out = new LinkedHashMap<>();
        for (final String line : Docs.read(PAGE).split("\n"))
        {
            final Matcher m = SECTION.matcher(line.strip());
            if (m.matches())
            {
                final Set<String> names = new TreeSet<>();
                for (final List<String> row : Docs.rows(Docs.section(PAGE, line.strip())))
                {
                    for (final String span : Docs.codeSpans(row.get(0)))
                    {
                        if (span.startsWith("-"))
                        {
                            names.add(span.split("[\\s=]")[0]);
                        }
                    }
                }
                out.put(m.group(1), names);
            }
        }
        return out;
    }

    @Test
    void everyCommandHasASectionWhoseTableNamesExactlyItsOptions()
    {
        final Map<String, Set<String>> doc = documented();
        final List<String> why = new ArrayList<>();
        for (final Map.Entry<String, CommandSpec> e : commands().entrySet())
        {
            final Set<String> real = options(e.getValue());
            final Set<String> written = doc.get(e.getKey());
            if (written == null)
            {
                why.add("'rnicsim " + e.getKey() + "' has no section '## `rnicsim " + e.getKey() + "`' in " + PAGE
                    + "; its options: " + real);
                continue;
            }
            final Set<String> missing = new TreeSet<>(real);
            missing.removeAll(written);
            final Set<String> unknown = new TreeSet<>(written);
            unknown.removeAll(real);
            if (!missing.isEmpty() || !unknown.isEmpty())
            {
                why.add("'rnicsim " + e.getKey() + "': options it has and " + PAGE + " does not list " + missing
                    + "; options listed that it does not have " + unknown);
            }
        }
        final Set<String> extra = new TreeSet<>(doc.keySet());
        extra.removeAll(commands().keySet());
        extra.remove("help");
        for (final String s : extra)
        {
            why.add(PAGE + " has a section for 'rnicsim " + s + "', which is no command");
        }
        assertThat(why).isEmpty();
    }

    private static String help(final String... command)
    {
        final List<String> args = new ArrayList<>(List.of(command));
        args.add("--help");
        final StringWriter out = new StringWriter();
        final int code = Rnicsim.execute(args.toArray(String[]::new), new PrintWriter(out, true),
            new PrintWriter(new StringWriter(), true));
        assertThat(code).as(String.join(" ", args)).isZero();
        return out.toString();
    }

    @Test
    void everyHelpListsEveryOptionOfItsCommandWithADescriptionAndNamesNoMachinesFolders()
    {
        for (final Map.Entry<String, CommandSpec> e : commands().entrySet())
        {
            final String help = help(e.getKey().split(" "));
            for (final OptionSpec o : e.getValue().options())
            {
                assertThat(help).as("rnicsim " + e.getKey() + " --help").contains(o.longestName());
                assertThat(String.join(" ", o.description())).as(e.getKey() + " " + o.longestName()).isNotBlank();
            }
            assertThat(help).as("rnicsim " + e.getKey() + " --help names no folder of one machine")
                .doesNotContain("/usr/lib/jvm").doesNotContain("/home/").doesNotContain("/root/")
                .doesNotContain("README");
        }
    }

    @Test
    void theToursHelpNamesEveryChapterOfTheTour()
    {
        final String help = help("tour").replaceAll("\\s+", " ").toLowerCase(Locale.ROOT);
        final List<String> chapters = new ArrayList<>();
        for (final String line : Catalogue.read("tour.rsim").split("\n"))
        {
            if (line.startsWith("say == "))
            {
                chapters.add(line.substring("say == ".length(), line.lastIndexOf(" ==")).toLowerCase(Locale.ROOT));
            }
        }
        assertThat(chapters).isNotEmpty();
        assertThat(chapters).allSatisfy(c -> assertThat(help).as("tour --help names the chapter '" + c + "'")
            .contains(c));
        assertThat(help).contains("in " + chapters.size() + " chapters");
    }

    private record Run(int code, String out, String err)
    {
    }

    private static Run rnicsim(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int code = Rnicsim.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString());
    }

    @TempDir
    Path dir;

    /** One command line per command that runs a script, the verbosity option to be added at the end. */
    private String[] command(final String which) throws Exception
    {
        return switch (which)
        {
            case "run" ->
            {
                final Path f = dir.resolve("s.rsim");
                Files.writeString(f, "say told\nhost h ram=256M\nexpect h.mem_total == 256M\n");
                yield new String[] {"run", f.toString()};
            }
            case "scenario run" -> new String[] {"scenario", "run", "first-registration"};
            default -> new String[] {"tour"};
        };
    }

    private static String[] with(final String[] base, final String... more)
    {
        return Stream.concat(Stream.of(base), Stream.of(more)).toArray(String[]::new);
    }

    @ParameterizedTest
    @ValueSource(strings = {"tour", "run", "scenario run"})
    void quietAndVerboseMeanTheSameOnEveryCommandThatRunsAScript(final String which) throws Exception
    {
        final Run quiet = rnicsim(with(command(which), "-q"));
        final Run verbose = rnicsim(with(command(which), "--verbose"));
        assertThat(quiet.code()).as(quiet.err()).isZero();
        assertThat(verbose.code()).as(verbose.err()).isZero();
        // -v prints each statement with its file and line, then each expect; -q neither.
        final Pattern statement = Pattern.compile("(?m)^  \\S+\\.rsim:\\d+  ");
        assertThat(statement.matcher(verbose.out()).find()).as(which + " -v prints the statements").isTrue();
        assertThat(verbose.out()).contains("expect ");
        assertThat(statement.matcher(quiet.out()).find()).as(which + " -q prints no statement").isFalse();
        assertThat(quiet.out()).doesNotContain(": held");
        assertThat(quiet.out().length()).isLessThan(verbose.out().length());
        final Run both = rnicsim(with(command(which), "-q", "-v"));
        assertThat(both.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(both.err()).contains("mutually exclusive");
    }
}
