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
    description = "A guided tour of memory registration: why it exists, the page walk, pinning and memlock, MTT "
        + "entries, keys, a remote write, the translation cache, a stale key, huge pages, MTT exhaustion, a leak. "
        + "Needs no input; runs in seconds.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:the tour ran and every expect in it held", "1:an expect in the tour failed (a bug)"})
final class TourCommand implements Callable<Integer>
{
    @Option(names = {"-v", "--verbose"}, description = "Also print every script step and expect, not only the "
        + "narration and the figures.")
    private boolean verbose;

    @Option(names = "--trace", paramLabel = "FILE",
        description = "Write the tour's simulated timeline as Chrome trace-event JSON (open it in Perfetto).")
    private Path trace;

    @Option(names = "--html", paramLabel = "FILE", description = "Write every step of the tour as one "
        + "self-contained interactive page (page table, frames, MTT, MPT keys, translation cache, work requests).")
    private Path html;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
    {
        final TraceOption t = new TraceOption(trace);
        final HtmlOption h = new HtmlOption(html, "tour.rsim");
        final int code = Scripts.run("tour.rsim", Catalogue.read("tour.rsim"), Path.of("."),
            verbose ? ScriptRunner.Detail.FULL : ScriptRunner.Detail.FIGURES, t::attach, h.observer(),
            spec.commandLine().getOut(), spec.commandLine().getErr());
        return t.write(spec.commandLine().getErr()) && h.write(spec.commandLine().getOut(),
            spec.commandLine().getErr()) ? code : Rnicsim.MALFORMED;
    }
}
