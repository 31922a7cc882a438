package dev.rnicsim.ibverbs;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * The signals that ask a run to end (SIGINT, SIGTERM, SIGHUP) reach its program, as a shell waiting for a foreground
 * command lets them: the run catches them instead of the JVM ending at once (which would leave the program running
 * and the fabric's trace unwritten), sends each to the program with {@code kill(2)}, and waits for the program to
 * end. A SIGINT typed at the terminal (Ctrl-C) reaches every process of the terminal's foreground process group, the
 * program too: when this process is in that group, the first SIGINT is not sent again (a program catching SIGINT, as
 * Python does, would see two); a later one is. The names of signals are the C library's ({@code strsignal(3)},
 * glibc's {@code sigabbrev_np(3)}).
 *
 * <p>Thread safe: the handlers run on the JVM's signal thread.
 */
public final class ProgramSignals implements AutoCloseable
{
    /** The signals forwarded: each ends a program by default, and each is what an operator sends to stop a run. */
    private static final List<String> FORWARDED = List.of("INT", "TERM", "HUP");
    private static final MethodHandle KILL;
    private static final MethodHandle GETPGRP;
    private static final MethodHandle TCGETPGRP;
    private static final MethodHandle STRSIGNAL;
    private static final Optional<MethodHandle> SIGABBREV;

    static
    {
        final Linker linker = Linker.nativeLinker();
        final SymbolLookup libc = linker.defaultLookup();
        KILL = linker.downcallHandle(libc.find("kill").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        GETPGRP = linker.downcallHandle(libc.find("getpgrp").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT));
        TCGETPGRP = linker.downcallHandle(libc.find("tcgetpgrp").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        final FunctionDescriptor name = FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
        STRSIGNAL = linker.downcallHandle(libc.find("strsignal").orElseThrow(), name);
        // glibc 2.32 and later; older C libraries have no abbreviation to ask for
        SIGABBREV = libc.find("sigabbrev_np").map(s -> linker.downcallHandle(s, name));
    }

    /** The runs of this JVM forwarding signals now: the JVM has one handler per signal, shared by all of them. */
    private static final List<ProgramSignals> LIVE = new ArrayList<>();
    /** The handlers the JVM had before the first live run, restored when the last one closes. */
    private static final Map<Signal, SignalHandler> PREVIOUS = new LinkedHashMap<>();

    private Process program;
    private Thread waiter;
    private int received;
    private int afterProgram;
    private int interrupts;

    private ProgramSignals()
    {
    }

    /**
     * Catches SIGINT, SIGTERM and SIGHUP in this JVM until {@link #close}.
     *
     * @return the forwarding, with no program yet.
     */
    static ProgramSignals install()
    {
        final ProgramSignals s = new ProgramSignals();
        synchronized (LIVE)
        {
            if (LIVE.isEmpty())
            {
                for (final String name : FORWARDED)
                {
                    final Signal signal = new Signal(name);
                    try
                    {
                        PREVIOUS.put(signal, Signal.handle(signal, ProgramSignals::dispatch));
                    }
                    catch (final IllegalArgumentException e)
                    {
                        // ignored since this process started (a command run with '&' by a shell without job
                        // control ignores SIGINT): it stays ignored, as the shell meant
                    }
                }
            }
            LIVE.add(s);
        }
        return s;
    }

    private static void dispatch(final Signal signal)
    {
        final List<ProgramSignals> runs;
        synchronized (LIVE)
        {
            runs = List.copyOf(LIVE);
        }
        runs.forEach(r -> r.caught(signal));
    }

    /** @param p the program, started: signals caught before are sent to it now. */
    synchronized void program(final Process p)
    {
        program = p;
        if (received != 0)
        {
            send(p, received);
        }
    }

    /** @param t the thread that waits for the fabric's other programs, interrupted by a signal; or null. */
    synchronized void waiter(final Thread t)
    {
        waiter = t;
        if (t != null && received != 0)
        {
            t.interrupt();
        }
    }

    /** @return the number of the first signal caught, or 0. */
    synchronized int received()
    {
        return received;
    }

    /**
     * @return the number of the first signal caught after the program had ended (while the run served the fabric
     *         for other runs), or 0. One caught before that went to the program, whose exit status tells its end.
     */
    synchronized int afterProgram()
    {
        return afterProgram;
    }

    private synchronized void caught(final Signal signal)
    {
        final int number = signal.getNumber();
        if (received == 0)
        {
            received = number;
        }
        if (program != null && !program.isAlive() && afterProgram == 0)
        {
            afterProgram = number;
        }
        if (program != null && program.isAlive())
        {
            final boolean fromTerminal = "INT".equals(signal.getName()) && interrupts++ == 0 && inForegroundGroup();
            if (!fromTerminal)
            {
                send(program, number);
            }
        }
        if (waiter != null)
        {
            waiter.interrupt();
        }
    }

    /** Whether this process is in its terminal's foreground process group (whose members all get Ctrl-C). */
    private static boolean inForegroundGroup()
    {
        try
        {
            final int foreground = (int) TCGETPGRP.invokeExact(0);
            return foreground > 0 && foreground == (int) GETPGRP.invokeExact();
        }
        catch (final Throwable e)
        {
            return false;
        }
    }

    /** SIGSTOP and SIGCONT: Linux's numbers, the same on every architecture the JDK runs on but Alpha/MIPS/SPARC. */
    private static final int SIGSTOP = new Signal("STOP").getNumber();
    private static final int SIGCONT = new Signal("CONT").getNumber();

    /**
     * Sends the signal to the program and to the processes it started (a shell's commands, a test runner's workers),
     * as a terminal's Ctrl-C reaches every process of its foreground group: none is left running on its own.
     *
     * <p>The processes are found by their parent process ids, a list that changes while it is read: a process that
     * forks between the list and its signal would leave its new child out, and once it has ended that child is an
     * orphan (its parent process id is no longer the program's) that no later list finds. So the tree is first
     * stopped with SIGSTOP, listed again until a list finds no process not yet stopped, and only then signalled and
     * continued (SIGCONT). A stopped process cannot fork nor end, and a fork under way when SIGSTOP is sent either has
     * its child in the process table by the time kill(2) returns or is restarted after the stop (Linux's
     * {@code copy_process} gives up a fork when a signal is pending), so the last list is the whole tree. As
     * {@code killpg(2)} to a process group, which the program cannot have here: it stays in this process's group, so
     * that a terminal's Ctrl-C and job control reach it.
     */
    private static void send(final Process p, final int signal)
    {
        final java.util.Set<Long> stopped = new java.util.LinkedHashSet<>();
        stopped.add(p.pid());
        kill(p.pid(), SIGSTOP);
        while (true)
        {
            boolean more = false;
            for (final ProcessHandle h : p.descendants().toList())
            {
                if (stopped.add(h.pid()))
                {
                    kill(h.pid(), SIGSTOP);
                    more = true;
                }
            }
            if (!more)
            {
                break;
            }
        }
        stopped.forEach(pid -> kill(pid, signal));
        stopped.forEach(pid -> kill(pid, SIGCONT));
    }

    private static void kill(final long pid, final int signal)
    {
        try
        {
            final int ignored = (int) KILL.invokeExact((int) pid, signal);
        }
        catch (final Throwable e)
        {
            throw new IllegalStateException("kill(2) could not be called", e);
        }
    }

    /** Stops forwarding to this run; the last run of the JVM to stop restores the handlers the JVM had before. */
    @Override
    public void close()
    {
        synchronized (LIVE)
        {
            if (LIVE.remove(this) && LIVE.isEmpty())
            {
                PREVIOUS.forEach(Signal::handle);
                PREVIOUS.clear();
            }
        }
    }

    /**
     * @param signal a signal's number.
     * @return its description as a shell prints it, with its name and number, e.g. {@code Segmentation fault
     *         (SIGSEGV, signal 11)}.
     */
    public static String describe(final int signal)
    {
        try
        {
            final String text = ((MemorySegment) STRSIGNAL.invokeExact(signal)).reinterpret(256).getString(0);
            final String abbrev = SIGABBREV.isPresent() ? abbreviation(SIGABBREV.get(), signal) : null;
            return text + " (" + (abbrev == null ? "" : "SIG" + abbrev + ", ") + "signal " + signal + ")";
        }
        catch (final Throwable e)
        {
            return "signal " + signal;
        }
    }

    private static String abbreviation(final MethodHandle sigabbrev, final int signal) throws Throwable
    {
        final MemorySegment s = (MemorySegment) sigabbrev.invokeExact(signal);
        return s.equals(MemorySegment.NULL) ? null : s.reinterpret(32).getString(0);
    }
}
