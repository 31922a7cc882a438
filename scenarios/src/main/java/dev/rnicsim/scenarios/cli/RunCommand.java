package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.script.ScriptRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rnicsim run FILE...}: runs scenario scripts, each on a fresh simulated fabric.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
    description = "Run scenario scripts, each on a fresh simulated fabric (one verb a line; the language is in "
        + "docs/scripts.md). Prints every statement with its outcome, the figures the model produced and every "
        + "expect, unless -q says otherwise.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:every expect held", "1:an expect failed, or a step failed without an expect",
        "2:a malformed script (file:line and what was expected) or an unreadable file"})
final class RunCommand implements Callable<Integer>
{
    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Script files, run in order.")
    private List<Path> files;

    @CommandLine.Mixin
    private Verbosity verbosity;

    @Option(names = "--trace", paramLabel = "FILE",
        description = "Write the simulated timeline as Chrome trace-event JSON (open it in Perfetto).")
    private Path trace;

    @CommandLine.Mixin
    private StrictOption strict;
    @Option(names = "--html", paramLabel = "FILE", description = "Write every step as one self-contained "
        + "interactive page (page table, frames, MTT, MPT keys, translation cache, work requests); with several "
        + "scripts, one page each, named FILE with the script's name before the extension.")
    private Path html;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
    {
        int worst = 0;
        final String traceProblem = OutputFile.problem("--trace", trace);
        if (traceProblem != null)
        {
            spec.commandLine().getErr().println(traceProblem);
            return Rnicsim.MALFORMED;
        }
        for (final Path f : files)
        {
            final String problem = Problems.unreadable("the FILE argument", f);
            if (problem != null)
            {
                spec.commandLine().getErr().println((f.toString().isEmpty() ? "" : f + ": cannot read the script: ")
                    + problem);
                return Rnicsim.MALFORMED;
            }
        }
        final java.util.List<String> texts = new java.util.ArrayList<>();
        for (final Path f : files)
        {
            try
            {
                texts.add(Files.readString(f, StandardCharsets.UTF_8));
                // Every script is checked before the first one runs: a malformed one stops the command at once.
                new dev.rnicsim.scenarios.script.ScriptParser().parse(f.toString(), texts.get(texts.size() - 1));
            }
            catch (final IOException e)
            {
                spec.commandLine().getErr().println(f + ": cannot read the script: " + Problems.reason(e));
                return Rnicsim.MALFORMED;
            }
            catch (final dev.rnicsim.scenarios.script.ScriptException e)
            {
                spec.commandLine().getErr().println(e.getMessage());
                return Rnicsim.MALFORMED;
            }
        }
        final java.util.List<Path> pages = HtmlOption.pagesFor(html, files);
        String overInput = null;
        for (final Path f : files)
        {
            for (final Path page : pages == null ? java.util.List.<Path>of() : pages)
            {
                overInput = overInput != null ? overInput : OutputFile.overInput("--html", page, "the FILE argument", f);
            }
            overInput = overInput != null ? overInput : OutputFile.overInput("--trace", trace, "the FILE argument", f);
        }
        final String clash = overInput != null ? overInput : OutputFile.clash("--trace", trace, "--html", html);
        final String htmlProblem = clash != null ? clash : OutputFile.problem("--html", html);
        if (htmlProblem != null)
        {
            spec.commandLine().getErr().println(htmlProblem);
            return Rnicsim.MALFORMED;
        }
        for (int i = 0; i < files.size(); i++)
        {
            final Path f = files.get(i);
            final String text = texts.get(i);
            final Path dir = f.toAbsolutePath().getParent();
            final TraceOption t = new TraceOption(trace);
            final HtmlOption h = new HtmlOption(pages.get(i), f.toString());
            final int code = Scripts.run(f.toString(), text, dir, verbosity.detail(ScriptRunner.Detail.FULL),
                t::attach, strict.on(), h.observer(), spec.commandLine().getOut(), spec.commandLine().getErr());
            if (!t.write(spec.commandLine().getErr()) || !h.write(spec.commandLine().getOut(),
                spec.commandLine().getErr()))
            {
                return Rnicsim.MALFORMED;
            }
            worst = Math.max(worst, code);
            if (code == Rnicsim.MALFORMED)
            {
                return code;
            }
        }
        return worst;
    }
}
