package dev.rnicsim.scenarios.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.scenarios.script.ScriptRunner;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rnicsim scenario list} and {@code rnicsim scenario run NAME}: the built-in scenarios.
 */
@Command(name = "scenario", mixinStandardHelpOptions = true,
    description = "The built-in scenarios: each is a script shipped with the tool, demonstrating points of "
        + "memory registration.",
    subcommands = {ScenarioCommand.ListCommand.class, ScenarioCommand.RunScenario.class,
        ScenarioCommand.ShowCommand.class})
final class ScenarioCommand implements Runnable
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** {@code scenario list}. */
    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the built-in scenarios with the "
        + "points they demonstrate (S1..S35: docs/points.md says what each is).")
    static final class ListCommand implements Callable<Integer>
    {
        @Option(names = "--json", description = "Print the list as JSON.")
        private boolean json;

        @CommandLine.Spec
        private CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception
        {
            if (json)
            {
                final ObjectMapper mapper = new ObjectMapper();
                final ArrayNode list = mapper.createArrayNode();
                for (final Catalogue.Entry e : Catalogue.entries())
                {
                    final ObjectNode n = list.addObject();
                    n.put("name", e.name());
                    n.put("title", e.title());
                    n.put("shows", e.shows());
                }
                spec.commandLine().getOut().println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(list));
                return Rnicsim.OK;
            }
            for (final Catalogue.Entry e : Catalogue.entries())
            {
                spec.commandLine().getOut().printf("%-24s %s%n%-24s (shows %s)%n", e.name(), e.title(), "",
                    e.shows());
            }
            return Rnicsim.OK;
        }
    }

    /** {@code scenario run NAME}. */
    @Command(name = "run", mixinStandardHelpOptions = true, description = "Run a built-in scenario. Prints every "
        + "statement with its outcome, its figures and every expect, unless -q says otherwise.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every expect held", "1:an expect failed, or a step failed without an expect",
            "2:no scenario of that name, or it has no chart for --svg"})
    static final class RunScenario implements Callable<Integer>
    {
        @Parameters(paramLabel = "NAME", description = "The scenario's name (see 'scenario list').")
        private String name;

        @CommandLine.Mixin
        private Verbosity verbosity;

        @Option(names = "--trace", paramLabel = "FILE",
            description = "Write the simulated timeline as Chrome trace-event JSON (open it in Perfetto).")
        private Path trace;

        @Option(names = "--html", paramLabel = "FILE", description = "Write every step as one self-contained "
            + "interactive page (page table, frames, MTT, MPT keys, translation cache, work requests).")
        private Path html;

        @Option(names = "--svg", paramLabel = "FILE",
            description = "Also draw the scenario's chart as SVG, where it has one (registration-cost, "
                + "thp-and-hugetlbfs, translation-cache, strategies).")
        private Path svg;

        @CommandLine.Mixin
        private StrictOption strict;

        @CommandLine.Spec
        private CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception
        {
            final Optional<Catalogue.Entry> e = Catalogue.entry(name);
            if (e.isEmpty())
            {
                spec.commandLine().getErr().println(UnknownName.scenario(name));
                return Rnicsim.MALFORMED;
            }
            if (svg != null && !Pictures.names().contains(name))
            {
                spec.commandLine().getErr().println("scenario '" + name + "' has no chart; charts: "
                    + Pictures.names());
                return Rnicsim.MALFORMED;
            }
            final TraceOption t = new TraceOption(trace);
            final String clash = OutputFile.clash("--trace", trace, "--svg", svg, "--html", html);
            final String outputProblem = clash != null ? clash : t.problem() != null ? t.problem()
                : OutputFile.problem("--svg", svg) != null ? OutputFile.problem("--svg", svg)
                : OutputFile.problem("--html", html);
            if (outputProblem != null)
            {
                spec.commandLine().getErr().println(outputProblem);
                return Rnicsim.MALFORMED;
            }
            final HtmlOption h = new HtmlOption(html, name + ".rsim");
            final int code = Scripts.run(name + ".rsim", e.get().script(), Path.of("."),
                verbosity.detail(ScriptRunner.Detail.FULL), t::attach, strict.on(), h.observer(),
                spec.commandLine().getOut(), spec.commandLine().getErr());
            if (!t.write(spec.commandLine().getErr()) || !h.write(spec.commandLine().getOut(),
                spec.commandLine().getErr()))
            {
                return Rnicsim.MALFORMED;
            }
            if (svg != null)
            {
                final String drawn;
                try
                {
                    drawn = Pictures.draw(name, svg);
                }
                catch (final java.io.UncheckedIOException failed)
                {
                    spec.commandLine().getErr().println(OutputFile.failed("--svg", svg, failed.getCause()));
                    return Rnicsim.MALFORMED;
                }
                if (drawn == null)
                {
                    spec.commandLine().getErr().println("scenario '" + name + "' has no chart; charts: "
                        + Pictures.names());
                    return Rnicsim.MALFORMED;
                }
                spec.commandLine().getOut().println("chart written to " + svg + ": " + drawn);
            }
            return code;
        }
    }

    /** {@code scenario show NAME}: prints the script. */
    @Command(name = "show", mixinStandardHelpOptions = true, description = "Print a built-in scenario's script.")
    static final class ShowCommand implements Callable<Integer>
    {
        @Parameters(paramLabel = "NAME", description = "The scenario's name.")
        private String name;

        @CommandLine.Spec
        private CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call()
        {
            final Optional<Catalogue.Entry> e = Catalogue.entry(name);
            if (e.isEmpty())
            {
                spec.commandLine().getErr().println(UnknownName.scenario(name));
                return Rnicsim.MALFORMED;
            }
            spec.commandLine().getOut().print(e.get().script());
            return Rnicsim.OK;
        }
    }
}
