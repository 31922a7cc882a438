package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.script.ScriptRunner;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rnicsim tour}: a guided walk through memory registration on a simulated NIC, in plain words, with every
 * figure from the model.
 */
@Command(name = "tour", mixinStandardHelpOptions = true,
    description = "A guided tour of memory registration, in 14 chapters: why registration exists; the page walk; "
        + "pinning and the MTT; lkey and rkey; a remote write; deregistration and a stale rkey; huge pages shrink the "
        + "MTT; MTT exhaustion although RAM is free; the memlock limit; a leaked MR; memory windows; on-demand "
        + "paging; GPU memory; relaxed ordering. Every figure comes from the model. Needs no input; runs in seconds. "
        + "Prints the narration and each step's figures, unless -q or -v says otherwise.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:the tour ran and every expect in it held", "1:an expect in the tour failed (a bug)"})
final class TourCommand implements Callable<Integer>
{
    @CommandLine.Mixin
    private Verbosity verbosity;

    @Option(names = "--trace", paramLabel = "FILE",
        description = "Write the tour's simulated timeline as Chrome trace-event JSON (open it in Perfetto).")
    private Path trace;

    @CommandLine.Mixin
    private StrictOption strict;
    @Option(names = "--html", paramLabel = "FILE", description = "Write every step of the tour as one "
        + "self-contained interactive page (page table, frames, MTT, MPT keys, translation cache, work requests).")
    private Path html;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
    {
        final TraceOption t = new TraceOption(trace);
        final String clash = OutputFile.clash("--trace", trace, "--html", html);
        final String problem = clash != null ? clash : t.problem() != null ? t.problem()
            : OutputFile.problem("--html", html);
        if (problem != null)
        {
            spec.commandLine().getErr().println(problem);
            return Rnicsim.MALFORMED;
        }
        final HtmlOption h = new HtmlOption(html, "tour.rsim");
        final int code = Scripts.run("tour.rsim", Catalogue.read("tour.rsim"), Path.of("."),
            verbosity.detail(ScriptRunner.Detail.FIGURES), t::attach, strict.on(), h.observer(),
            spec.commandLine().getOut(), spec.commandLine().getErr());
        return t.write(spec.commandLine().getErr()) && h.write(spec.commandLine().getOut(),
            spec.commandLine().getErr()) ? code : Rnicsim.MALFORMED;
    }
}
