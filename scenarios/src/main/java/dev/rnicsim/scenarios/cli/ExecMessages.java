package dev.rnicsim.scenarios.cli;

import dev.rnicsim.ibverbs.FabricOrigin;
import dev.rnicsim.ibverbs.ProgramRunner;
import dev.rnicsim.ibverbs.ProgramSignals;
import dev.rnicsim.simnic.DevinfoResult;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code rnicsim exec} says when a run differs from what was asked: a dump that lacks attributes, a fabric
 * joined that is not what the run named, a program ended by a signal. Stateless.
 */
final class ExecMessages
{
    /** Signals whose end a shell does not report (bash: an interrupt typed by the user, a reader gone). */
    private static final List<Integer> UNREPORTED = List.of(2, 13);
    /** Names of a dump's missing attributes printed before "and N more". */
    private static final int NAMES_SHOWN = 5;

    private ExecMessages()
    {
    }

    /**
     * @param dump the {@code --devinfo} file.
     * @param r    what was read from it, with attributes it lacks.
     * @return which attributes the dump lacks and where their values come from.
     */
    static String defaulted(final Path dump, final DevinfoResult r)
    {
        final List<String> missing = r.defaultedFields();
        final String names = missing.size() <= NAMES_SHOWN ? String.join(", ", missing)
            : String.join(", ", missing.subList(0, NAMES_SHOWN)) + " and " + (missing.size() - NAMES_SHOWN) + " more";
        final boolean shortDump = missing.contains("max_qp") || missing.contains("page_size_cap");
        return "--devinfo " + dump + ": " + missing.size() + " device attribute" + (missing.size() == 1 ? " is" : "s are")
            + " not in the dump (" + names + "; 'rnicsim devinfo -f " + dump + "' lists them): they take the values "
            + "of built-in profile " + r.defaultsFrom() + (shortDump ? "; a dump of 'ibv_devinfo -v' (with -v) has them"
            : "");
    }

    /**
     * @param fabricName the fabric's name.
     * @param running    what the run serving it was asked for.
     * @param asked      the devices this run named, or null when it named none (it then takes the fabric's).
     * @param traceFile  this run's {@code --trace} file, or null.
     * @return why this run must not join the fabric, or null when it may.
     */
    static String joinRefusal(final String fabricName, final FabricOrigin running, final String asked,
        final String traceFile)
    {
        final String served = "served by another rnicsim exec (process " + running.hostPid() + ")";
        if (asked != null && !asked.equals(running.devices()))
        {
            return "fabric '" + fabricName + "' is running with " + running.devices() + ", " + served
                + ", and this run asks for " + asked + ": a fabric keeps the devices it was started with. To join it, "
                + "give the same device or none; for " + asked + ", use another --fabric name";
        }
        if (traceFile != null)
        {
            return "--trace " + traceFile + ": fabric '" + fabricName + "' is " + served + ", which "
                + (running.trace() == null ? "keeps no trace" : "writes its trace to " + running.trace())
                + "; only the run that starts a fabric writes its trace: give --trace to that run (start it first), "
                + "or use another --fabric name";
        }
        return null;
    }

    /**
     * @param program the program as given.
     * @param r       how its run ended.
     * @return how a signal ended it, as a shell reports it, or null when none did (or a shell says nothing of it:
     *         an interrupt, a broken pipe).
     */
    static String ended(final String program, final ProgramRunner.Result r)
    {
        final int code = r.exitCode();
        if (r.signal() != 0)
        {
            return "caught " + ProgramSignals.describe(r.signal()) + " after " + program + " ended (exit status "
                + code + "), while serving the fabric for other runs: closed it, ends with " + (128 + r.signal());
        }
        // a signal's end as waitpid(2) told it, never guessed from the status: a program's own exit(130) is not SIGINT
        if (r.programSignal() != 0 && !UNREPORTED.contains(r.programSignal()))
        {
            return program + ": " + ProgramSignals.describe(r.programSignal());
        }
        return null;
    }
}
