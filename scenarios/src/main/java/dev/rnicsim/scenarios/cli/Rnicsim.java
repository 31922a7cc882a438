package dev.rnicsim.scenarios.cli;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code rnicsim} command. Exit codes: 0 success (every expect held), 1 an expect failed or a step failed
 * unexpectedly, 2 a malformed script, an unreadable file or a bad command line.
 */
@Command(name = "rnicsim", mixinStandardHelpOptions = true, version = "rnicsim 0.1.0",
    description = "An emulated RDMA NIC that shows memory registration: run scenario scripts, take the tour, "
        + "print device attributes, plan the capacity of a workload.",
    subcommands = {TourCommand.class, RunCommand.class, ScenarioCommand.class, DevinfoCommand.class, PlanCommand.class,
        ExecCommand.class, CommandLine.HelpCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:success: every expect held", "1:an expect failed, or a step failed without an expect",
        "2:a malformed script (file:line), an unreadable file, or a bad command line",
        "3:no JDK 25 found (by the ./rnicsim launcher)",
        "4:devinfo or plan --device: no such RDMA device (the reason, e.g. no kernel RDMA support, is printed)"})
public final class Rnicsim implements Runnable
{
    /** Exit status: every expect held. */
    public static final int OK = 0;
    /** Exit status: an expectation failed. */
    public static final int EXPECT_FAILED = 1;
    /** Exit status: malformed script, unreadable file or bad usage. */
    public static final int MALFORMED = 2;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * @param args the command line.
     */
    public static void main(final String[] args)
    {
        System.exit(execute(args, new PrintWriter(System.out, true, StandardCharsets.UTF_8),
            new PrintWriter(System.err, true, StandardCharsets.UTF_8)));
    }

    private static void shareVersion(final CommandLine cl, final String[] version)
    {
        for (final CommandLine sub : cl.getSubcommands().values())
        {
            if (sub.getCommandSpec().version().length == 0)
            {
                sub.getCommandSpec().version(version);
            }
            shareVersion(sub, version);
        }
    }

    /**
     * Runs the command with the given streams (for tests).
     *
     * @param args the command line.
     * @param out  standard output.
     * @param err  standard error.
     * @return the exit code.
     */
    public static int execute(final String[] args, final PrintWriter out, final PrintWriter err)
    {
        final CommandLine cl = new CommandLine(new Rnicsim());
        // '@' starts a legal file name: no argument is read as an argument file.
        cl.setExpandAtFiles(false);
        WholeNumbers.register(cl);
        // the program's own options follow it, as after env, strace or valgrind: 'exec ibv_devinfo -v'
        cl.getSubcommands().get("exec").setStopAtPositional(true);
        // -V on a subcommand prints the command's version, not an empty line
        shareVersion(cl, cl.getCommandSpec().version());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExitCodeExceptionMapper(e -> MALFORMED);
        cl.setParameterExceptionHandler((ex, a) -> BadCommandLine.report(ex, err));
        cl.setExecutionExceptionHandler((ex, c, parse) ->
        {
            err.println("rnicsim: " + ex.getMessage());
            return MALFORMED;
        });
        int code;
        try
        {
            code = cl.execute(args);
        }
        catch (final OutOfMemoryError e)
        {
            err.println("rnicsim: the simulation needs more Java heap than this JVM has (" + e.getMessage()
                + "); simulate less memory, or give the JVM more with JAVA_TOOL_OPTIONS=-Xmx...");
            code = MALFORMED;
        }
        catch (final StackOverflowError e)
        {
            err.println("rnicsim: the simulation ran out of stack");
            code = MALFORMED;
        }
        out.flush();
        err.flush();
        return code;
    }
}
