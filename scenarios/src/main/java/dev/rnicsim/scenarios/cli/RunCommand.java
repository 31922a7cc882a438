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
    description = "Run scenario scripts (one verb a line; see the README for the language). Each step is printed "
        + "with its outcome and the figures the model produced.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:every expect held", "1:an expect failed, or a step failed without an expect",
        "2:a malformed script (file:line and what was expected) or an unreadable file"})
final class RunCommand implements Callable<Integer>
{
    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Script files, run in order.")
    private List<Path> files;

    @Option(names = {"-q", "--quiet"}, description = "Print only narration, failures and the summary.")
    private boolean quiet;

    @Option(names = "--trace", paramLabel = "FILE",
        description = "Write the simulated timeline as Chrome trace-event JSON (open it in Perfetto).")
    private Path trace;

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
        for (final Path f : files)
        {
            final String problem = Problems.unreadable(f);
            if (problem != null)
            {
                spec.commandLine().getErr().println(f + ": cannot read the script: " + problem);
                return Rnicsim.MALFORMED;
            }
            final String text;
            try
            {
                text = Files.readString(f, StandardCharsets.UTF_8);
            }
            catch (final IOException e)
            {
                spec.commandLine().getErr().println(f + ": cannot read the script: " + Problems.reason(e));
                return Rnicsim.MALFORMED;
            }
            final Path dir = f.toAbsolutePath().getParent();
            final TraceOption t = new TraceOption(trace);
            final HtmlOption h = new HtmlOption(HtmlOption.pageFor(html, f, files.size()), f.toString());
            final int code = Scripts.run(f.toString(), text, dir, quiet ? ScriptRunner.Detail.NARRATION
                : ScriptRunner.Detail.FULL, t::attach, h.observer(), spec.commandLine().getOut(),
                spec.commandLine().getErr());
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
