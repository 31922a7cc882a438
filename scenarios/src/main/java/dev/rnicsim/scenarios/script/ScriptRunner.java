package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/**
 * Runs a checked scenario script on a fresh simulated fabric and prints each step with its outcome and the figures
 * the model produced. A step that fails must be followed by an {@code expect} of its outcome; otherwise the run
 * stops there. Not thread safe.
 */
public final class ScriptRunner
{
    /** How much a run prints. */
    public enum Detail
    {
        /** Narration ({@code say}), failures and nothing else. */
        NARRATION,
        /** Narration and each step's figures, without the statements and expects. */
        FIGURES,
        /** Every statement, its outcome and every expect. */
        FULL
    }

    private final PrintWriter out;
    private final Detail detail;
    private final StringBuilder paragraph = new StringBuilder();
    private Consumer<SimFabric> fabricHook = f -> { };
    private boolean strictFromStart;
    private StepObserver stepObserver;
    /** The {@code say} text since the last statement, for the step observer. */
    private final StringBuilder narration = new StringBuilder();

    /**
     * @param out    where steps and outcomes are printed, control characters escaped ({@link TerminalText}).
     * @param detail how much to print.
     */
    public ScriptRunner(final PrintWriter out, final Detail detail)
    {
        this.out = new PrintWriter(new TerminalText(out), true);
        this.detail = detail;
    }

    /**
     * @param hook called with the run's fabric before the first step (e.g. to attach a trace recorder).
     * @return this runner.
     */
    public ScriptRunner onFabric(final Consumer<SimFabric> hook)
    {
        this.fabricHook = hook;
        return this;
    }

    /**
     * @param strict true to run in strict mode from the first line ({@code --strict}), as if it began with
     *               {@code strict on}.
     * @return this runner.
     */
    public ScriptRunner strict(final boolean strict)
    {
        this.strictFromStart = strict;
        return this;
    }

    /**
     * @param observer called after each statement and each expect (e.g. to draw every step), or null for none.
     * @return this runner.
     */
    public ScriptRunner onStep(final StepObserver observer)
    {
        this.stepObserver = observer;
        return this;
    }

    /**
     * Parses, checks and runs a script.
     *
     * @param file    the script's name, for messages.
     * @param text    its text.
     * @param baseDir where relative file names in it (devinfo=FILE) are resolved.
     * @return how it ended.
     * @throws ScriptException when it is malformed (nothing has run then).
     */
    public RunResult run(final String file, final String text, final Path baseDir)
    {
        final List<ScriptLine> lines = new ScriptParser().parse(file, text);
        final Session s = new Session(baseDir);
        fabricHook.accept(s.fabric);
        if (strictFromStart)
        {
            s.strict.on(s.fabric, StrictScript.DEFAULT_MAX_REGISTRATIONS_PER_SECOND);
        }
        Outcome last = Outcome.ok("");
        int steps = 0;
        int held = 0;
        for (int i = 0; i < lines.size(); i++)
        {
            final ScriptLine l = lines.get(i);
            if (!l.verb().equals("say"))
            {
                flushParagraph();
            }
            switch (l.verb())
            {
                case "say" ->
                {
                    final String t = l.text().startsWith("\"") && l.text().endsWith("\"")
                        ? ScriptParser.unquote(l.text()) : l.text();
                    if (t.isEmpty() || t.startsWith("=="))
                    {
                        flushParagraph();
                    }
                    if (t.isEmpty())
                    {
                        out.println();
                    }
                    else if (t.startsWith("=="))
                    {
                        out.println(t);
                    }
                    else
                    {
                        paragraph.append(paragraph.length() > 0 ? " " : "").append(t);
                    }
                    if (!t.isEmpty())
                    {
                        narration.append(narration.length() > 0 ? " " : "").append(t);
                    }
                }
                case "expect" ->
                {
                    final String failure = Expects.expect(s, l, last);
                    if (stepObserver != null)
                    {
                        stepObserver.expect(l.where(), l.text(), failure);
                    }
                    if (failure != null)
                    {
                        out.println("  " + l.where() + "  expect " + l.text() + "\n    FAILED: " + failure);
                        return end(s, 1, steps, held, l.where() + ": expect " + l.text() + ": " + failure);
                    }
                    held++;
                    if (detail == Detail.FULL)
                    {
                        out.println("    expect " + l.text() + ": held");
                    }
                }
                default ->
                {
                    steps++;
                    if (detail == Detail.FULL)
                    {
                        out.println("  " + l.where() + "  " + l.verb() + " " + l.text());
                    }
                    final long before = s.fabric.clock().nowNs();
                    try
                    {
                        last = l.verb().equals("repeat") ? repeat(s, l) : step(s, l);
                    }
                    catch (final ExpectFailed e)
                    {
                        out.println("    FAILED: " + e.getMessage());
                        return end(s, 1, steps, held, e.getMessage());
                    }
                    catch (final OutOfMemoryError e)
                    {
                        final String why = outOfMemory(s, l, steps, e);
                        out.println("    FAILED: " + why);
                        return end(s, 1, steps, held, why);
                    }
                    catch (final ScriptException e)
                    {
                        throw e;
                    }
                    catch (final RuntimeException e)
                    {
                        // What the model refused outside any errno (a host name taken, a limit of the simulator).
                        throw l.error("cannot run this line: " + (e.getMessage() == null ? e.getClass().getSimpleName()
                            : e.getMessage()));
                    }
                    s.lastDurationNs = s.fabric.clock().nowNs() - before;
                    if (detail != Detail.NARRATION && !last.message().isEmpty() || !last.ok())
                    {
                        printOutcome(l, named(l, last));
                    }
                    s.strict.afterStep(s.fabric, s.names, out);
                    if (stepObserver != null)
                    {
                        stepObserver.step(ScriptStep.of(s, l, last, narration.toString()));
                    }
                    narration.setLength(0);
                    if (!last.ok() && !outcomeExpected(lines, i))
                    {
                        out.println("    FAILED: unexpected " + last.errno() + " (add 'expect " + last.errno()
                            + "' if this is the point)");
                        return end(s, 1, steps, held, l.where() + ": unexpected " + last.errno() + ": "
                            + last.message());
                    }
                }
            }
        }
        flushParagraph();
        return end(s, 0, steps, held, null);
    }

    /** Consecutive {@code say} lines form one paragraph, printed wrapped when a step or a blank say follows. */
    private void flushParagraph()
    {
        if (paragraph.length() > 0)
        {
            out.println(wrap(paragraph.toString()));
            paragraph.setLength(0);
        }
    }

    /** The run's fabric is dropped as a whole: nothing is torn down object by object. */
    private RunResult end(final Session s, final int code, final int steps, final int held, final String failure)
    {
        s.strict.finish(out);
        return new RunResult(code, steps, held, failure, s.fabric.clock().nowNs());
    }

    private void printOutcome(final ScriptLine l, final Outcome o)
    {
        if (o.ok())
        {
            for (final String line : o.message().split("\n"))
            {
                out.println("    " + line);
            }
        }
        else
        {
            out.println("    -> " + o.errno() + ": " + o.shown());
        }
    }

    /** The outcome of a step that names something, prefixed with the name, so that output lines say whose they are. */
    private static Outcome named(final ScriptLine l, final Outcome o)
    {
        final Spec spec = Spec.VERBS.get(l.verb());
        if (o.ok() && spec != null && !spec.args().isEmpty() && spec.args().get(0) instanceof Spec.NewName
            && !l.verb().equals("let") && !o.message().isEmpty())
        {
            return Outcome.ok(l.verb() + " " + l.args().get(0) + ": " + o.message());
        }
        return o;
    }

    private static boolean outcomeExpected(final List<ScriptLine> lines, final int i)
    {
        for (int j = i + 1; j < lines.size(); j++)
        {
            final ScriptLine n = lines.get(j);
            if (n.verb().equals("say"))
            {
                continue;
            }
            if (!n.verb().equals("expect"))
            {
                return false;
            }
            if (n.args().size() == 1 && (n.args().get(0).equals("ok") || ScriptParser.isErrno(n.args().get(0))))
            {
                return true;
            }
        }
        return false;
    }

    private static String wrap(final String text)
    {
        final StringBuilder sb = new StringBuilder();
        int col = 0;
        for (final String w : text.split(" "))
        {
            if (col + w.length() > 100 && col > 0)
            {
                sb.append('\n');
                col = 0;
            }
            else if (col > 0)
            {
                sb.append(' ');
                col++;
            }
            sb.append(w);
            col += w.length();
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ steps

    /**
     * What a run that exhausted the Java heap says: the line, how much it had simulated, and how to give the JVM
     * more heap.
     */
    static String outOfMemory(final Session s, final ScriptLine l, final int steps, final OutOfMemoryError e)
    {
        long frames = 0;
        for (final SimHost h : s.fabric.hosts())
        {
            frames += h.host().physicalMemory().usedFrames();
        }
        final long usedBytes = frames << PhysicalMemory.FRAME_SHIFT;
        long mrs = 0;
        for (final SimDevice d : s.fabric.devices())
        {
            mrs += d.counter(SimCounter.MR_LIVE);
        }
        return l.where() + ": out of Java heap (" + e.getMessage() + ") in step " + steps + " ('" + l.verb() + " "
            + l.text() + "'), with " + frames + " pages (" + Units.bytes(usedBytes) + ") of simulated host memory in "
            + "use, " + mrs + " MRs live and " + Units.duration(s.fabric.clock().nowNs()) + " simulated; give the JVM "
            + "more heap (RNICSIM_JAVA_OPTS=-Xmx8g ./rnicsim ..., or JAVA_TOOL_OPTIONS=-Xmx8g), or simulate less "
            + "(smaller ram=, fewer repeats)";
    }

    /** Where a step comes from, as key histories and diagnoses name it: {@code file:line (verb args)}. */
    static String origin(final ScriptLine l)
    {
        final String file = Path.of(l.file()).getFileName() == null ? l.file()
            : Path.of(l.file()).getFileName().toString();
        return file + ":" + l.line() + " (" + l.verb() + (l.args().isEmpty() ? "" : " " + l.args().get(0)) + ")";
    }

    /** An expect inside a repeat block failed: the run ends with exit code 1. */
    private static final class ExpectFailed extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        ExpectFailed(final String message)
        {
            super(message, null, false, false);
        }
    }

    private Outcome repeatBlock(final Session s, final ScriptLine l)
    {
        final long n = Units.parse(l.text().strip());
        long done = 0;
        Outcome o = Outcome.ok("");
        iterations:
        while (done < n)
        {
            for (int k = 0; k < l.body().size(); k++)
            {
                final ScriptLine inner = l.body().get(k);
                if (inner.verb().equals("say"))
                {
                    continue;
                }
                if (inner.verb().equals("expect"))
                {
                    final String failure = Expects.expect(s, inner, o);
                    if (failure != null)
                    {
                        throw new ExpectFailed(inner.where() + ": expect " + inner.text() + " (repetition "
                            + (done + 1) + "): " + failure);
                    }
                    if (!o.ok())
                    {
                        // The error was the expected outcome of that step: the block goes on.
                        o = Outcome.ok("");
                    }
                    continue;
                }
                final long before = s.fabric.clock().nowNs();
                o = step(s, inner);
                s.lastDurationNs = s.fabric.clock().nowNs() - before;
                if (!o.ok() && !outcomeExpected(l.body(), k))
                {
                    break iterations;
                }
            }
            done++;
        }
        s.lastCount = done;
        final String summary = "repeat " + n + ": " + done + " done" + (o.ok() ? "" : ", then " + o.errno()
            + " in repetition " + (done + 1));
        return o.ok() ? Outcome.ok(summary) : Outcome.failed(o.errno(), summary + ": " + o.shown());
    }

    private Outcome repeat(final Session s, final ScriptLine l)
    {
        if (!l.body().isEmpty())
        {
            return repeatBlock(s, l);
        }
        final String[] parts = l.text().split("\\s+", 2);
        final long n = Units.parse(parts[0]);
        final ScriptLine inner = ScriptParser.statement(l.file(), l.line(), parts[1]);
        long done = 0;
        Outcome o = Outcome.ok("");
        while (done < n)
        {
            o = step(s, inner);
            if (!o.ok())
            {
                break;
            }
            done++;
        }
        s.lastCount = done;
        final String summary = "repeat " + n + ": " + done + " done" + (o.ok() ? "" : ", then " + o.errno()
            + " at repetition " + (done + 1));
        return o.ok() ? Outcome.ok(summary + (o.message().isEmpty() ? "" : "; last: " + o.message()))
            : Outcome.failed(o.errno(), summary + ": " + o.shown());
    }

    private Outcome step(final Session s, final ScriptLine l)
    {
        s.fabric.origin(origin(l));
        final Outcome o = s.strict.tracked(s.fabric, s.names, Statements.run(s, l));
        Engines.settle(s);
        return o;
    }
}
