package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.ProcFs;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import dev.rnicsim.simnic.DevinfoResult;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import dev.rnicsim.verbs.strategy.StrategyCounters;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
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
    private Consumer<dev.rnicsim.simnic.SimFabric> fabricHook = f -> { };
    private boolean strictFromStart;
    private StepObserver stepObserver;
    /** The {@code say} text since the last statement, for the step observer. */
    private final StringBuilder narration = new StringBuilder();

    /**
     * @param out    where steps and outcomes are printed.
     * @param detail how much to print.
     */
    public ScriptRunner(final PrintWriter out, final Detail detail)
    {
        this.out = out;
        this.detail = detail;
    }

    /**
     * @param hook called with the run's fabric before the first step (e.g. to attach a trace recorder).
     * @return this runner.
     */
    public ScriptRunner onFabric(final Consumer<dev.rnicsim.simnic.SimFabric> hook)
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
                    final String failure = expect(s, l, last);
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
        long usedBytes = 0;
        long frames = 0;
        for (final dev.rnicsim.simnic.SimHost h : s.fabric.hosts())
        {
            frames += h.host().physicalMemory().usedFrames();
        }
        usedBytes = frames * 4096;
        long mrs = 0;
        for (final dev.rnicsim.simnic.SimDevice d : s.fabric.devices())
        {
            mrs += d.counter(dev.rnicsim.simnic.SimCounter.MR_LIVE);
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
        final String file = java.nio.file.Path.of(l.file()).getFileName() == null ? l.file()
            : java.nio.file.Path.of(l.file()).getFileName().toString();
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
                    final String failure = expect(s, inner, o);
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
        final Outcome o = s.strict.tracked(s.fabric, s.names, stepBody(s, l));
        settle(s);
        return o;
    }

    /**
     * With the engine on {@code auto} (the default), lets the fabric work until nothing is left to do, so a posted
     * work request has run by the next statement; on {@code manual}, the engine moves only on {@code progress},
     * {@code poll} and key retirements that wait (docs/async.md).
     */
    /** Lets the engine run after a step that may have released queued work (auto mode). */
    static void settleAfter(final Session s)
    {
        settle(s);
    }

    private static void settle(final Session s)
    {
        if (!s.manualEngine)
        {
            s.fabric.progressAll();
        }
    }

    private Outcome stepBody(final Session s, final ScriptLine l)
    {
        try
        {
            return switch (l.verb())
            {
                case "host" -> host(s, l);
                case "device" -> device(s, l);
                case "process" -> process(s, l);
                case "open" -> open(s, l);
                case "mmap" -> mmap(s, l);
                case "touch" -> touch(s, l);
                case "write" -> write(s, l);
                case "munmap" -> memory(s, l, (p, a, n) -> p.munmap(a, n), "unmapped");
                case "madvise" -> memory(s, l, (p, a, n) -> p.madvise(a, n,
                    Madvice.valueOf(l.args().get(2).toUpperCase(Locale.ROOT))), "advised");
                case "mprotect" -> memory(s, l, (p, a, n) -> p.mprotect(a, n, prot(l.args().get(2))), "protected");
                case "fork" -> fork(s, l);
                case "forkinit" -> Forks.forkInit(s, l);
                case "exit" -> exit(s, l);
                case "reclaim" -> Outcome.ok("reclaimed " + s.get(l, l.args().get(0), SimHost.class).host()
                    .reclaim(s.evalNum(l, l.args().get(1))) + " pages");
                case "compact" -> Outcome.ok("compaction moved " + s.get(l, l.args().get(0), SimHost.class).host()
                    .compact() + " pages");
                case "pd" -> bind(s, l, s.get(l, l.args().get(1), SimContext.class).allocPd(), "");
                case "reg" -> reg(s, l);
                case "dereg" -> dereg(s, l);
                case "rereg" -> rereg(s, l);
                case "advise" -> advise(s, l);
                case "gpu" -> Gpus.gpu(s, l);
                case "gpualloc" -> Gpus.alloc(s, l);
                case "gpuwrite" -> Gpus.write(s, l);
                case "gpufree" -> Gpus.free(s, l);
                case "gpumove" -> Gpus.move(s, l);
                case "memcpy" -> Gpus.memcpy(s, l);
                case "dmabuf" -> Gpus.export(s, l);
                case "watch" -> Gpus.watch(s, l);
                case "cq" -> bind(s, l, s.get(l, l.args().get(1), SimContext.class).createCq(
                    l.args().size() > 2 ? s.evalCount(l, l.args().get(2)) : 64), "");
                case "qp" -> qp(s, l);
                case "connect" -> connect(s, l);
                case "post" -> post(s, l);
                case "recv" -> recv(s, l);
                case "poll" -> poll(s, l);
                case "progress" -> Engines.progress(s, l);
                case "engine" -> Engines.mode(s, l);
                case "modify" -> QpVerbs.modify(s, l);
                case "queryqp" -> QpVerbs.query(s, l);
                case "srq" -> QpVerbs.srq(s, l);
                case "srqlimit" -> QpVerbs.srqLimit(s, l);
                case "xrcd" -> XrcVerbs.xrcd(s, l);
                case "ah" -> QpVerbs.ah(s, l);
                case "mw" -> mw(s, l);
                case "bind" -> bindMw(s, l);
                case "unbind" -> unbindMw(s, l);
                case "fastmr" -> fastMr(s, l);
                case "map" -> mapFastMr(s, l);
                case "pool" -> pool(s, l);
                case "alloc" -> alloc(s, l);
                case "free" -> free(s, l);
                case "cache" -> cache(s, l);
                case "acquire" -> acquire(s, l);
                case "release" -> release(s, l);
                case "invalidate" -> invalidate(s, l);
                case "close" -> close(s, l);
                case "nullmr" ->
                {
                    final dev.rnicsim.verbs.MemoryRegion mr = s.get(l, l.args().get(1), SimPd.class).allocNullMr();
                    s.names.put(l.args().get(0), mr);
                    yield Outcome.ok(String.format(Locale.ROOT, "ibv_alloc_null_mr: lkey=0x%08x, no rkey; writes "
                        + "through it are discarded, reads give zeros", mr.lkey()));
                }
                case "regex" -> ConformanceVerbs.regMrEx(s, l);
                case "queryport" -> ConformanceVerbs.queryPort(s, l);
                case "events" -> EventVerbs.events(s, l);
                case "querygid" -> ConformanceVerbs.queryGid(s, l);
                case "querypkey" -> DeviceQueryVerbs.queryPkey(s, l);
                case "gidtable" -> DeviceQueryVerbs.gidTable(s, l);
                case "dm" -> ConformanceVerbs.allocDm(s, l);
                case "dmwrite" -> ConformanceVerbs.dmWrite(s, l);
                case "dmread" -> ConformanceVerbs.dmRead(s, l);
                case "regdm" -> ConformanceVerbs.regDmMr(s, l);
                case "dealloc" ->
                {
                    s.get(l, l.args().get(0), SimPd.class).dealloc();
                    yield Outcome.ok("ibv_dealloc_pd: the PD is freed");
                }
                case "let" ->
                {
                    final Session.Val v = s.eval(l, l.args().get(1));
                    if (!v.numeric())
                    {
                        throw l.error("let keeps numbers; '" + l.args().get(1) + "' is the text " + v.text());
                    }
                    s.names.put(l.args().get(0), v.num());
                    yield Outcome.ok(l.args().get(0) + " = " + v.show());
                }
                case "show" -> Outcome.ok(Views.show(s, l));
                case "strict" -> strict(s, l);
                default -> throw l.error("unknown verb '" + l.verb() + "'");
            };
        }
        catch (final VerbsException e)
        {
            return Outcome.failed(e.errnoName().name(), strip(e.getMessage()));
        }
        catch (final KernelException e)
        {
            final String call = systemCall(l);
            final String message = strip(e.getMessage());
            return Outcome.failed(e.errno().name(), message.startsWith(call) ? message : call + message);
        }
        catch (final TableException e)
        {
            return Outcome.failed(e.errno().name(), strip(e.getMessage()));
        }
    }

    /** The system call a step makes, naming a host error as verbs errors name their verb ({@code mmap: ENOMEM: ...}). */
    private static String systemCall(final ScriptLine l)
    {
        return switch (l.verb())
        {
            case "mmap", "munmap", "madvise", "mprotect", "fork", "exit" -> l.verb() + ": ";
            case "touch", "write" -> "page fault: ";
            default -> "";
        };
    }

        private static String strip(final String message)
    {
        return message == null ? "" : message;
    }

    private static Outcome bind(final Session s, final ScriptLine l, final Object value, final String figures)
    {
        s.names.put(l.args().get(0), value);
        return Outcome.ok(figures);
    }

    /** A host setting's message in the script's option names (HostConfig names its Java builder's). */
    private static String hostOptionNames(final String message)
    {
        return message.replace("physicalMemoryBytes=", "ram=").replace("hugepages2M=", "hugepages2m=")
            .replace("hugepages1G=", "hugepages1g=").replaceAll("hugepages\\((\\w+)\\)=", "hugepages$1=")
            .replace("movableZoneBytes=", "movable=").replace("swapBytes=", "swap=")
            .replace("maxMapCount=", "max_map_count=").replace("give those as hugepages2M and hugepages1G",
                "give those as hugepages2m and hugepages1g")
            + (message.contains("; ") ? "" : "; give a value within that limit on the host line");
    }

    private Outcome host(final Session s, final ScriptLine l)
    {
        final Map<String, String> o = l.options();
        final HostConfig.Builder b = HostConfig.builder();
        if (o.containsKey("ram"))
        {
            b.physicalMemoryBytes(s.evalNum(l, o.get("ram")));
        }
        if (o.containsKey("hugepages2m"))
        {
            b.hugepages2M(s.evalNum(l, o.get("hugepages2m")));
        }
        if (o.containsKey("hugepages1g"))
        {
            b.hugepages1G(s.evalNum(l, o.get("hugepages1g")));
        }
        for (final PageSize size : List.of(PageSize.SIZE_64K, PageSize.SIZE_32M, PageSize.SIZE_512M, PageSize.SIZE_16G))
        {
            if (o.containsKey("hugepages" + size.word()))
            {
                b.hugepages(size, s.evalNum(l, o.get("hugepages" + size.word())));
            }
        }
        if (o.containsKey("thp"))
        {
            b.thpMode(ThpMode.valueOf(o.get("thp").toUpperCase(Locale.ROOT)));
        }
        if (o.containsKey("fork"))
        {
            b.forkBehaviour(ForkBehaviour.valueOf(o.get("fork").toUpperCase(Locale.ROOT)));
        }
        if (o.containsKey("movable"))
        {
            b.movableZoneBytes(s.evalNum(l, o.get("movable")));
        }
        if (o.containsKey("swap"))
        {
            b.swapBytes(s.evalNum(l, o.get("swap")));
        }
        b.aged("yes".equals(o.get("aged")));
        if (o.containsKey("page"))
        {
            b.basePage(dev.rnicsim.pagetable.BasePage.of(o.get("page")));
        }
        if (o.containsKey("overcommit"))
        {
            b.overcommitMemory(Integer.parseInt(o.get("overcommit")));
        }
        if (o.containsKey("max_map_count"))
        {
            b.maxMapCount(s.evalCount(l, o.get("max_map_count")));
        }
        final HostConfig config;
        try
        {
            config = b.build();
        }
        catch (final dev.rnicsim.pagetable.KernelException e)
        {
            return Outcome.failed(e.errno().name(), hostOptionNames(e.detail()));
        }
        catch (final IllegalArgumentException e)
        {
            return Outcome.failed("EINVAL", hostOptionNames(e.getMessage()));
        }
        final long memlock = o.containsKey("memlock") ? s.evalNum(l, o.get("memlock"))
            : UserProcess.DEFAULT_RLIMIT_MEMLOCK_BYTES;
        final SimHost host = s.fabric.addHost(l.args().get(0), config);
        if (memlock < UserProcess.RLIM_INFINITY)
        {
            throw l.error("memlock=" + memlock + ": give a size in bytes, or unlimited");
        }
        final Session.HostBinding binding = new Session.HostBinding(host, memlock, "yes".equals(o.get("cap_ipc_lock")));
        s.names.put(l.args().get(0), binding);
        s.hosts.put(host, binding);
        host.peerMemoryClient("yes".equals(o.get("peermem")));
        final StringBuilder pools = new StringBuilder();
        for (final PageSize size : config.basePage().hugetlbSizes())
        {
            if (config.basePage() != dev.rnicsim.pagetable.BasePage.SIZE_4K || size == PageSize.SIZE_2M
                || size == PageSize.SIZE_1G || config.hugepages(size) > 0)
            {
                pools.append(' ').append(size.word().toUpperCase(Locale.ROOT)).append('=').append(config.hugepages(size));
            }
        }
        return Outcome.ok(Units.bytes(config.physicalMemoryBytes()) + " RAM, hugepages" + pools
            + ", THP " + config.thpMode().name().toLowerCase(Locale.ROOT)
            + ", fork " + config.forkBehaviour().name().toLowerCase(Locale.ROOT)
            + (config.aged() ? ", aged (scattered 4 KiB frames)" : "")
            + (config.basePage() == dev.rnicsim.pagetable.BasePage.SIZE_4K ? "" : ", base page "
                + Units.bytes(config.basePage().bytes()) + " (THP and the default hugetlb page: one PMD, "
                + Units.bytes(config.basePage().pmdBytes()) + ")") + ", RLIMIT_MEMLOCK "
            + (memlock == UserProcess.RLIM_INFINITY ? "unlimited" : Units.bytes(memlock))
            + (host.peerMemoryClient() ? ", peer-memory client (nvidia-peermem) loaded" : ""));
    }

    private Outcome device(final Session s, final ScriptLine l)
    {
        final Map<String, String> o = l.options();
        DeviceProfile p;
        String defaulted = "";
        if (o.containsKey("devinfo"))
        {
            final DevinfoResult r;
            final String problem = dev.rnicsim.scenarios.cli.Problems.unreadable(s.baseDir.resolve(o.get("devinfo")));
            if (problem != null)
            {
                throw l.error("cannot read devinfo file '" + o.get("devinfo") + "': " + problem);
            }
            try
            {
                r = DevinfoReader.read(s.baseDir.resolve(o.get("devinfo")));
            }
            catch (final IOException e)
            {
                throw l.error("cannot read devinfo file '" + o.get("devinfo") + "': "
                    + dev.rnicsim.scenarios.cli.Problems.reason(e));
            }
            catch (final IllegalArgumentException e)
            {
                throw l.error(e.getMessage());
            }
            p = r.profile();
            defaulted = (r.defaultedFields().isEmpty() ? "" : "; defaulted (not in the dump): "
                + String.join(", ", r.defaultedFields())) + (r.warnings().isEmpty() ? "" : "; warnings: "
                + String.join("; ", r.warnings()));
        }
        else
        {
            final String name = o.getOrDefault("profile", "connectx5");
            if (!DeviceProfiles.builtIn().containsKey(name))
            {
                throw l.error("no built-in profile '" + name + "'; built-in: " + DeviceProfiles.builtIn().keySet());
            }
            p = DeviceProfiles.byName(name);
        }
        try
        {
            if (o.containsKey("log_num_mtt") || o.containsKey("log_mtts_per_seg"))
            {
                p = p.withMtt(MttConfig.buddy(s.evalCount(l, o.getOrDefault("log_num_mtt", "20")),
                    s.evalCount(l, o.getOrDefault("log_mtts_per_seg", "3"))));
            }
            if (o.containsKey("max_mr"))
            {
                p = p.withAttributes(p.attributes().toBuilder().maxMr(s.evalCount(l, o.get("max_mr"))).build());
            }
            if (o.containsKey("cache"))
            {
                p = p.withCache(s.evalCount(l, o.get("cache")), Math.min(p.cacheWays(),
                    s.evalCount(l, o.get("cache"))));
            }
            if (o.containsKey("keys"))
            {
                p = p.withVariantPolicy(VariantPolicy.valueOf(o.get("keys").toUpperCase(Locale.ROOT)));
            }
            if (o.containsKey("dmabuf"))
            {
                p = Gpus.withDmabuf(p, o.get("dmabuf"));
            }
        }
        catch (final IllegalArgumentException | TableException e)
        {
            return Outcome.failed("EINVAL", e.getMessage());
        }
        final SimHost host = s.get(l, l.args().get(1), SimHost.class);
        final SimDevice d = host.addDevice("sim:" + host.name() + "/" + l.args().get(0), p);
        s.names.put(l.args().get(0), d);
        final MttCounters m = d.tables().mtt().counters();
        return Outcome.ok(p.name() + " (" + p.driver() + "): max_mr " + p.attributes().maxMr() + ", MTT "
            + m.capacityEntries() + " entries (" + p.mtt().allocator().name().toLowerCase(Locale.ROOT)
            + "), page_size_cap 0x" + Long.toHexString(p.attributes().pageSizeCap()) + ", keys "
            + p.variantPolicy().name().toLowerCase(Locale.ROOT) + (o.containsKey("dmabuf") ? Gpus.dmabufNote(p) : "")
            + defaulted);
    }

    private UserProcess spawn(final Session s, final ScriptLine l, final SimHost host, final String name)
    {
        final Session.HostBinding hb = s.hosts.get(host);
        final Map<String, String> env = Forks.env(l);
        final UserProcess p = host.host().spawn(name);
        final Map<String, String> o = l.options();
        p.rlimitMemlockBytes(o.containsKey("memlock") ? s.evalNum(l, o.get("memlock")) : hb.memlockBytes());
        p.capIpcLock(o.containsKey("cap_ipc_lock") ? "yes".equals(o.get("cap_ipc_lock")) : hb.capIpcLock());
        env.forEach(p::setenv);
        return p;
    }

    private Outcome process(final Session s, final ScriptLine l)
    {
        ProcessChecks.refuseSecondProcess(s, l);
        final UserProcess p = spawn(s, l, s.get(l, l.args().get(1), SimHost.class), l.args().get(0));
        s.names.put(l.args().get(0), p);
        return Outcome.ok("pid " + p.pid() + ", RLIMIT_MEMLOCK " + memlock(p) + Forks.envNote(p));
    }

    private static String memlock(final UserProcess p)
    {
        return (p.rlimitMemlockBytes() == UserProcess.RLIM_INFINITY ? "unlimited" : Units.bytes(p.rlimitMemlockBytes()))
            + (p.capIpcLock() ? ", CAP_IPC_LOCK" : "");
    }

    private Outcome open(final Session s, final ScriptLine l)
    {
        final SimDevice d = s.get(l, l.args().get(1), SimDevice.class);
        final UserProcess p = l.options().containsKey("process")
            ? s.get(l, l.options().get("process"), UserProcess.class)
            : spawn(s, l, d.host(), l.args().get(0));
        if (l.options().containsKey("process"))
        {
            ProcessChecks.refuseLateEnv(l, d, p);
            Forks.env(l).forEach(p::setenv);
        }
        final SimContext c = d.open(p);
        s.names.put(l.args().get(0), c);
        return Outcome.ok("process pid " + p.pid() + " opened " + d.hcaId() + ", RLIMIT_MEMLOCK " + memlock(p)
            + Forks.envNote(p));
    }

    /** @return the hugetlb page size a backing word names (64k, 2m, 32m, 512m, 1g, 16g). */
    private static PageSize hugeSizeOf(final String word)
    {
        for (final PageSize size : PageSize.values())
        {
            if (size.word().equals(word))
            {
                return size;
            }
        }
        throw new IllegalArgumentException("backing=" + word);
    }

    private Outcome mmap(final Session s, final ScriptLine l)
    {
        final UserProcess p = s.get(l, l.args().get(1), UserProcess.class);
        final long len = s.evalNum(l, l.args().get(2));
        final String backing = l.options().getOrDefault("backing", "4k");
        final Set<Prot> prot = prot(l.options().getOrDefault("prot", "rw"));
        final long addr = switch (backing)
        {
            case "hugetlb" -> p.mmap(0, len, prot, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB));
            case "64k", "2m", "32m", "512m", "1g", "16g" -> p.mmap(0, len, prot, Set.of(MapFlag.PRIVATE,
                MapFlag.ANONYMOUS, MapFlag.HUGETLB, MapFlag.hugeSize(hugeSizeOf(backing))));
            default ->
            {
                final long a = p.mmap(0, len, prot, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
                final long page = p.host().config().basePage().bytes();
                p.madvise(a, (len + page - 1) & -page, backing.equals("thp") ? Madvice.HUGEPAGE : Madvice.NOHUGEPAGE);
                yield a;
            }
        };
        s.names.put(l.args().get(0), new Session.Buffer(p, addr, len));
        return Outcome.ok("0x" + Long.toHexString(addr) + ", " + ProcessChecks.mappedLength(p, addr, len) + " (" + backing
            + ")");
    }

    private static Set<Prot> prot(final String word)
    {
        return switch (word)
        {
            case "r" -> Set.of(Prot.READ);
            case "none" -> Set.of();
            default -> Prot.READ_WRITE;
        };
    }

    private Outcome touch(final Session s, final ScriptLine l)
    {
        final Session.Val a = address(s, l, l.args().get(0));
        // process=: the same address in another process, e.g. a child after fork.
        final UserProcess p = l.options().containsKey("process")
            ? s.get(l, l.options().get("process"), UserProcess.class) : a.process();
        final long t0 = s.fabric.clock().nowNs();
        final long pages = s.fabric.cpuWork(p, "touch", () -> p.touch(a.num(),
            s.evalNum(l, l.args().get(1)), l.flags().contains("write")));
        return Outcome.ok(Units.count(pages, "page", "pages") + " faulted in (" + Units.duration(s.fabric.clock().nowNs() - t0)
            + " of page faults)");
    }

    private Outcome write(final Session s, final ScriptLine l)
    {
        final Session.Val a = address(s, l, l.args().get(0));
        final byte[] data = filled(s, l, data(l.args().get(1)), 2);
        s.fabric.cpuWork(a.process(), "write", () ->
        {
            a.process().write(a.num(), data);
            return null;
        });
        return Outcome.ok(data.length + " bytes at 0x" + Long.toHexString(a.num()));
    }

    /** A memory verb on ADDR SIZE. */
    private interface MemoryOp
    {
        void apply(UserProcess p, long addr, long length);
    }

    private Outcome memory(final Session s, final ScriptLine l, final MemoryOp op, final String done)
    {
        final Session.Val a = address(s, l, l.args().get(0));
        final long len = s.evalNum(l, l.args().get(1));
        op.apply(a.process(), a.num(), len);
        return Outcome.ok(done + " " + Units.bytes(len) + " at 0x" + Long.toHexString(a.num()));
    }

    private Session.Val address(final Session s, final ScriptLine l, final String expr)
    {
        final Session.Val v = s.eval(l, expr);
        if (v.process() == null || Gpus.at(s, l, v) != null)
        {
            throw l.error("'" + expr + "' is no address in a process: start it with a buffer or MR name"
                + (Gpus.at(s, l, v) != null ? " (it is GPU memory: gpuwrite stores there, memcpy copies)" : ""));
        }
        return v;
    }

    /**
     * @param data  the bytes of a DATA argument.
     * @param index where the optional SIZE argument is.
     * @return the bytes, repeated to SIZE bytes when SIZE is given.
     */
    static byte[] filled(final Session s, final ScriptLine l, final byte[] data, final int index)
    {
        if (l.args().size() <= index)
        {
            return data;
        }
        final long size = s.evalNum(l, l.args().get(index));
        if (size <= 0 || size > 1L << 30 || data.length == 0)
        {
            throw l.error("SIZE " + size + ": give 1 byte to 1 GiB of a non-empty pattern to repeat");
        }
        final byte[] out = new byte[(int)size];
        for (int i = 0; i < out.length; i++)
        {
            out[i] = data[i % data.length];
        }
        return out;
    }

    static byte[] data(final String token)
    {
        if (token.startsWith("hex:"))
        {
            return HexFormat.of().parseHex(token.substring(4));
        }
        return ScriptParser.unquote(token).getBytes(StandardCharsets.UTF_8);
    }

    private Outcome fork(final Session s, final ScriptLine l)
    {
        final UserProcess parent = s.get(l, l.args().get(1), UserProcess.class);
        final UserProcess child = parent.fork(l.args().get(0));
        s.names.put(l.args().get(0), child);
        final long notCopied = parent.vmaCount() - child.vmaCount();
        return Outcome.ok("child pid " + child.pid() + (notCopied > 0 ? ", without the " + notCopied
            + " VM_DONTCOPY (MADV_DONTFORK) VMAs of its parent" : ""));
    }

    private Outcome exit(final Session s, final ScriptLine l)
    {
        final UserProcess p = s.get(l, l.args().get(0), UserProcess.class);
        p.exit();
        return Outcome.ok("pid " + p.pid() + " exited; its contexts closed");
    }

    private Outcome reg(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final boolean implicit = l.args().size() == 3;
        // An implicit ODP MR is ibv_reg_mr(pd, NULL, SIZE_MAX, ...): addr 0, length -1 as a signed long.
        final long addr = implicit ? 0 : s.eval(l, l.args().get(2)).num();
        final long len = implicit ? -1L : s.evalNum(l, l.args().get(3));
        final Set<Access> access = Spec.accessFlags(l.options().getOrDefault("access", "local_write"));
        if (l.options().containsKey("dmabuf"))
        {
            return Gpus.regDmabuf(s, l, pd, addr, len, access);
        }
        final MemoryRegion registered = l.options().containsKey("iova")
            ? pd.regMr(addr, len, s.evalNum(l, l.options().get("iova")), access)
            : pd.regMr(addr, len, access);
        s.names.put(l.args().get(0), registered);
        final SimDevice d = pd.context().device();
        final List<RegistrationEvent> trace = d.recentRegistrations();
        final RegistrationEvent e = trace.get(trace.size() - 1);
        if (registered instanceof SimOdpMr odp)
        {
            return Outcome.ok(odpRegistered(odp, e));
        }
        if (registered instanceof SimPeerMr peer)
        {
            s.peerFirstVa.put(peer, peer.addr());
            return Outcome.ok(Gpus.registered(peer, e));
        }
        final SimMr mr = (SimMr)registered;
        return Outcome.ok(String.format(Locale.ROOT, "lkey=0x%08x rkey=0x%08x (index %d, variant %d); page size %s, "
            + "%s (%d reserved), %s pinned; %s", mr.lkey(), mr.rkey(), Session.mrField(mr, "index"),
            Session.mrField(mr, "variant"), Units.bytes(mr.pageSizeBytes()),
            Units.count(mr.mttEntries(), "MTT entry", "MTT entries"), mr.mttEntriesReserved(),
            Units.count(mr.pinnedPages(), "page", "pages"), Units.duration(e.durationNs())));
    }

    /** What registering an ODP MR did: its keys, its MTT entries, what it mapped at once, and no pinning. */
    private static String odpRegistered(final SimOdpMr mr, final RegistrationEvent e)
    {
        final String keys = String.format(Locale.ROOT, "lkey=0x%08x rkey=0x%08x (index %d, variant %d)", mr.lkey(),
            mr.rkey(), (mr.lkey() >>> 8) & 0xffffff, mr.lkey() & 0xff);
        if (mr.isImplicit())
        {
            return keys + String.format(Locale.ROOT, "; implicit ODP MR over the whole address space (0x0-0x%x): no "
                + "MTT entries until a fault, then a child of %d entries for each 1 GiB touched; 0 pages pinned, "
                + "nothing charged to RLIMIT_MEMLOCK; %s", UserProcess.TASK_SIZE, AdapterTables.IMPLICIT_CHILD_ENTRIES,
                Units.duration(e.durationNs()));
        }
        return keys + String.format(Locale.ROOT, "; ODP: page size %s, %d MTT entries, %d mapped now (pages the CPU "
            + "has present), the others on first access; 0 pages pinned, nothing charged to RLIMIT_MEMLOCK; %s",
            Units.bytes(1L << mr.pageShift()), OdpPages.mttEntries(mr), e.mttEntries(),
            Units.duration(e.durationNs()));
    }

    private Outcome dereg(final Session s, final ScriptLine l)
    {
        if (s.names.get(l.args().get(0)) instanceof SimFastRegMr f)
        {
            if (f.isClosed())
            {
                return Outcome.failed("EINVAL", "MR " + l.args().get(0) + " is deregistered already");
            }
            f.close();
            return Outcome.ok("fast-registration MR deregistered: its MTT room freed, its pages unpinned; the name "
                + l.args().get(0) + " keeps the old key 0x" + Integer.toHexString(f.lkey()) + " to try it later");
        }
        if (s.names.get(l.args().get(0)) instanceof SimOdpMr odp)
        {
            if (odp.isClosed())
            {
                return Outcome.failed("EINVAL", "MR " + l.args().get(0) + " is deregistered already");
            }
            final long faults = odp.pageFaults();
            odp.close();
            final List<RegistrationEvent> trace = odp.pd().context().device().recentRegistrations();
            final RegistrationEvent e = trace.get(trace.size() - 1);
            return Outcome.ok("ODP MR deregistered: nothing to unpin; its interval notifier"
                + (odp.isImplicit() ? "s" : "") + " removed, " + e.cacheEntriesDropped() + " cached translations "
                + "invalidated (" + faults + " page faults in its life); " + Units.duration(e.durationNs())
                + "; the name " + l.args().get(0) + " keeps the old key 0x" + Integer.toHexString(odp.lkey())
                + " to try it later");
        }
        if (s.names.get(l.args().get(0)) instanceof SimPeerMr peer)
        {
            return Gpus.dereg(l, peer);
        }
        if (s.names.get(l.args().get(0)) instanceof MemoryRegion other && !(other instanceof SimMr))
        {
            // A device-memory or null MR: ibv_dereg_mr frees it like any MR; it pinned no host page.
            if (other.isClosed())
            {
                return Outcome.failed("EINVAL", "MR " + l.args().get(0) + " is deregistered already");
            }
            other.close();
            return Outcome.ok("MR deregistered (ibv_dereg_mr): no host page was pinned for it; the name "
                + l.args().get(0) + " keeps the old key 0x" + Integer.toHexString(other.lkey()) + " to try it later");
        }
        final SimMr mr = s.get(l, l.args().get(0), SimMr.class);
        if (mr.isClosed())
        {
            return Outcome.failed("EINVAL", "MR " + l.args().get(0) + " is deregistered already");
        }
        mr.close();
        final List<RegistrationEvent> trace = mr.pd().context().device().recentRegistrations();
        final RegistrationEvent e = trace.get(trace.size() - 1);
        return Outcome.ok(Units.count(e.pagesPinned(), "page", "pages") + " unpinned, "
            + Units.count(e.mttEntries(), "MTT entry", "MTT entries") + " zapped, "
            + Units.count(e.cacheEntriesDropped(), "cached translation", "cached translations") + " invalidated; " + Units.duration(e.durationNs())
            + "; the name " + l.args().get(0) + " keeps the old key 0x" + Integer.toHexString(mr.lkey())
            + " to try it later");
    }

    private Outcome rereg(final Session s, final ScriptLine l)
    {
        final MemoryRegion mr = s.get(l, l.args().get(0), MemoryRegion.class);
        final Map<String, String> o = l.options();
        final Set<ReregFlag> flags = EnumSet.noneOf(ReregFlag.class);
        SimPd pd = null;
        if (o.containsKey("pd"))
        {
            flags.add(ReregFlag.CHANGE_PD);
            pd = s.get(l, o.get("pd"), SimPd.class);
        }
        long addr = 0;
        long len = 0;
        if (o.containsKey("addr") || o.containsKey("size"))
        {
            flags.add(ReregFlag.CHANGE_TRANSLATION);
            addr = o.containsKey("addr") ? s.eval(l, o.get("addr")).num() : mr.addr();
            len = o.containsKey("size") ? s.evalNum(l, o.get("size")) : mr.lengthBytes();
        }
        Set<Access> access = Set.of();
        if (o.containsKey("access"))
        {
            flags.add(ReregFlag.CHANGE_ACCESS);
            access = Spec.accessFlags(o.get("access"));
        }
        final int lkey = mr.lkey();
        final int rkey = mr.rkey();
        final long before = s.fabric.clock().nowNs();
        s.lastReregError = "NONE";
        try
        {
            mr.rereg(flags, pd, addr, len, access);
        }
        catch (final ReregException e)
        {
            // IBV_REREG_MR_ERR_DONT_FORK_NEW leaves the MR valid, as ERR_INPUT does (verbs.c ibv_rereg_mr).
            final boolean dontFork = e.reregError() == ReregException.ERR_DONT_FORK_NEW;
            final boolean input = e.reregError() == ReregException.ERR_INPUT || dontFork;
            s.lastReregError = dontFork ? "ERR_DONT_FORK_NEW" : input ? "ERR_INPUT" : "ERR_CMD";
            return Outcome.failed(e.errnoName().name(), strip(e.getMessage()) + " (IBV_REREG_MR_" + s.lastReregError
                + (dontFork ? ": fork support could not madvise the new range; the MR is unchanged and still valid)"
                : input ? ": the library refused the input; the MR is unchanged and still valid)"
                : ": the kernel refused it; an application must not use the MR any more, only deregister it)"));
        }
        final boolean kept = mr.lkey() == lkey && mr.rkey() == rkey;
        return Outcome.ok(String.format(Locale.ROOT, "%s: lkey 0x%08x -> 0x%08x, rkey 0x%08x -> 0x%08x (%s); addr "
            + "0x%x, %s, access %s; %s", flags.stream().map(Enum::name).collect(java.util.stream.Collectors.joining(
            "|")), lkey, mr.lkey(), rkey, mr.rkey(), kept ? "keys kept" : "new keys: the old ones no longer "
            + "translate", mr.addr(), Units.bytes(mr.lengthBytes()), mr.access(), Units.duration(
            s.fabric.clock().nowNs() - before)));
    }

    private Outcome advise(final Session s, final ScriptLine l)
    {
        final MemoryRegion mr = s.get(l, l.args().get(0), MemoryRegion.class);
        final MrAdvice advice = MrAdvice.valueOf(l.args().get(1).toUpperCase(Locale.ROOT));
        final boolean flush = l.flags().contains("flush");
        final SimPd pd = l.options().containsKey("pd") ? s.get(l, l.options().get("pd"), SimPd.class)
            : (SimPd)mr.pd();
        final long addr;
        final long len;
        if (l.args().size() == 4)
        {
            addr = s.eval(l, l.args().get(2)).num();
            len = s.evalNum(l, l.args().get(3));
        }
        else if (mr instanceof SimOdpMr odp && odp.isImplicit())
        {
            // As ibv_advise_mr with an SGE that cannot cover the whole address space: the call is refused.
            throw new dev.rnicsim.verbs.VerbsException("ibv_advise_mr", dev.rnicsim.verbs.Errno.EINVAL.code(),
                "an implicit MR covers the whole address space: give the range to advise, ADDR SIZE");
        }
        else
        {
            addr = mr.iova();
            len = mr.lengthBytes();
        }
        final Sge sge;
        try
        {
            sge = new Sge(addr, len, mr.lkey());
        }
        catch (final IllegalArgumentException e)
        {
            throw l.error("advise " + Units.bytes(len) + ": " + e.getMessage() + "; advise a part of the MR");
        }
        final SimDevice d = pd.context().device();
        final long prefetched = d.counter(dev.rnicsim.simnic.SimCounter.ODP_PAGE_PREFETCH);
        final long t0 = s.fabric.clock().nowNs();
        pd.adviseMr(advice, flush ? MrAdvice.FLAG_FLUSH : 0, List.of(sge));
        final long entries = d.counter(dev.rnicsim.simnic.SimCounter.ODP_PAGE_PREFETCH) - prefetched;
        return Outcome.ok(String.format(Locale.ROOT, "ibv_advise_mr %s%s 0x%x+%s: %d MTT entries mapped%s; %s",
            advice.name(), flush ? " FLAG_FLUSH" : "", addr, Units.bytes(len), entries,
            advice == MrAdvice.PREFETCH_NO_FAULT ? " (only pages the CPU has present)"
            : advice == MrAdvice.PREFETCH ? " (read-only)" : "",
            flush ? Units.duration(s.fabric.clock().nowNs() - t0) + ": the call returned once they were in the device"
            : "the work runs beside the caller (without flush the call returns at once)"));
    }

    private Outcome mw(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final String given = l.options().getOrDefault("type", "1");
        if (!given.matches("-?[0-9]{1,9}"))
        {
            throw l.error("type=" + given + ": the window type is a number (1 or 2)");
        }
        final SimMw mw = (SimMw)pd.allocMw(Integer.parseInt(given));
        final MwType type = mw.type();
        s.names.put(l.args().get(0), mw);
        return Outcome.ok(String.format(Locale.ROOT, "type %d, rkey=0x%08x (index %d, variant %d), unbound: it "
            + "grants nothing until a bind", type.code(), mw.rkey(), (mw.rkey() >>> 8) & 0xffffff, mw.rkey() & 0xff));
    }

    private static Set<SendFlag> sendFlags(final ScriptLine l)
    {
        final Set<SendFlag> flags = EnumSet.noneOf(SendFlag.class);
        if (!l.flags().contains("unsignaled"))
        {
            flags.add(SendFlag.SIGNALED);
        }
        if (l.flags().contains("inline"))
        {
            flags.add(SendFlag.INLINE);
        }
        if (l.flags().contains("fence"))
        {
            // IBV_SEND_FENCE: the WQE starts only after every earlier READ and atomic of the QP completed.
            flags.add(SendFlag.FENCE);
        }
        return flags;
    }

    private Outcome bindMw(final Session s, final ScriptLine l)
    {
        final SimMw mw = s.get(l, l.args().get(0), SimMw.class);
        final SimQp qp = s.get(l, l.args().get(1), SimQp.class);
        final MemoryRegion mr = s.get(l, l.args().get(2), MemoryRegion.class);
        final Map<String, String> o = l.options();
        final long addr = o.containsKey("addr") ? s.eval(l, o.get("addr")).num() : mr.iova();
        final long len = o.containsKey("length") ? s.evalNum(l, o.get("length")) : mr.lengthBytes();
        final Set<Access> access = Spec.accessFlags(o.getOrDefault("access", "remote_read,remote_write"));
        final long id = o.containsKey("id") ? s.evalNum(l, o.get("id")) : s.nextWrId++;
        final MwBindInfo info = new MwBindInfo(mr, addr, len, access);
        final int before = mw.rkey();
        final boolean wasErr = qp.state() == QpState.ERR;
        final String range = String.format(Locale.ROOT, "0x%x+%s of MR lkey 0x%08x, rights %s", addr,
            Units.bytes(len), mr.lkey(), access);
        if (mw.type() == MwType.TYPE_1)
        {
            if (o.containsKey("rkey"))
            {
                throw l.error("'" + l.args().get(0) + "' is a type 1 window: ibv_bind_mw picks its new rkey"
                    + " (ibv_inc_rkey), so rkey= is only for type 2 windows");
            }
            final int now = qp.bindMw(mw, id, sendFlags(l), info);
            settle(s);
            return Outcome.ok(String.format(Locale.ROOT, "ibv_bind_mw wr_id=%d (type 1): rkey 0x%08x -> 0x%08x "
                + "(set at post), %s%s", id, before, now, range, deviceNote(s, qp, wasErr) + keptKey(qp, wasErr,
                before)));
        }
        final int key = o.containsKey("rkey") ? s.evalInt(l, o.get("rkey")) : SendWr.incRkey(before);
        qp.postSend(new SendWr(id, WrOpcode.BIND_MW, List.of(), sendFlags(l), 0, 0, 0, 0, 0, 0,
            new SendWr.Bind(mw, key, info)));
        settle(s);
        final String note = deviceNote(s, qp, wasErr);
        return Outcome.ok(String.format(Locale.ROOT, "posted BIND_MW wr_id=%d (type 2, key byte 0x%02x), %s, "
            + "through QP 0x%x only%s", id, key & 0xff, range, qp.qpNum(), note.isEmpty() ? String.format(
            Locale.ROOT, ": rkey 0x%08x -> 0x%08x", before, mw.rkey()) : note + String.format(Locale.ROOT,
            "; the rkey stays 0x%08x", mw.rkey())));
    }

    private Outcome unbindMw(final Session s, final ScriptLine l)
    {
        final SimMw mw = s.get(l, l.args().get(0), SimMw.class);
        final SimQp qp = s.get(l, l.args().get(1), SimQp.class);
        final long id = l.options().containsKey("id") ? s.evalNum(l, l.options().get("id")) : s.nextWrId++;
        final int before = mw.rkey();
        final boolean wasErr = qp.state() == QpState.ERR;
        final int now = qp.bindMw(mw, id, sendFlags(l), MwBindInfo.unbind());
        settle(s);
        final String note = deviceNote(s, qp, wasErr);
        return Outcome.ok(String.format(Locale.ROOT, "ibv_bind_mw wr_id=%d (unbind): rkey 0x%08x -> 0x%08x (set at "
            + "post)%s", id, before, now, note.isEmpty() ? "; the window grants nothing"
            : note + keptKey(qp, wasErr, before)));
    }

    /**
     * A type 1 bind the device did not execute: ibv_bind_mw changed the window's rkey at post time, but the window
     * keeps its old binding under the old key (restoring mw->rkey is the application's job).
     */
    private static String keptKey(final SimQp qp, final boolean wasErr, final int keyBefore)
    {
        if (wasErr || qp.sendsWaiting() == 0 && qp.lastLocalFailure() != null)
        {
            return String.format(Locale.ROOT, "; the window keeps its previous state under rkey 0x%08x, while its "
                + "rkey field shows the new one, which the device never issued", keyBefore);
        }
        return "";
    }

    /**
     * What became of a local work request (BIND_MW, LOCAL_INV, REG_MR) just posted: the simulated device executes
     * it at once unless the QP is in ERR (flushed) or waits behind a send without a receive; on a manual engine it
     * stays queued until the engine moves.
     */
    private static String deviceNote(final Session s, final SimQp qp, final boolean wasErr)
    {
        if (wasErr)
        {
            return "; the QP is in ERR: flushed (poll shows IBV_WC_WR_FLUSH_ERR)";
        }
        if (s.manualEngine && qp.sendsWaiting() > 0)
        {
            return String.format(Locale.ROOT, "; queued (engine manual): it runs on progress or poll, %d WQE%s on "
                + "the send queue", qp.sendsWaiting(), qp.sendsWaiting() == 1 ? "" : "s");
        }
        if (qp.sendsWaiting() > 0)
        {
            return "; waiting behind a send the peer has no receive for (RNR)";
        }
        if (qp.lastLocalFailure() != null)
        {
            return String.format(Locale.ROOT, "; the device refused it: %s (poll shows the completion; the QP is in "
                + "%s)", qp.lastLocalFailure(), qp.state());
        }
        return "";
    }

    private Outcome fastMr(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final SimFastRegMr mr = (SimFastRegMr)pd.allocMr(s.evalCount(l, l.args().get(2)));
        s.names.put(l.args().get(0), mr);
        return Outcome.ok(String.format(Locale.ROOT, "key=0x%08x (index %d, variant %d), MTT room for %d pages; "
            + "INVALID until a REG_MR completes", mr.lkey(), (mr.lkey() >>> 8) & 0xffffff, mr.lkey() & 0xff,
            mr.maxNumSg()));
    }

    private Outcome mapFastMr(final Session s, final ScriptLine l)
    {
        final SimFastRegMr mr = s.get(l, l.args().get(0), SimFastRegMr.class);
        final Session.Val a = s.eval(l, l.args().get(1));
        final long len = s.evalNum(l, l.args().get(2));
        final int pages = mr.mapSg(a.num(), len);
        return Outcome.ok(String.format(Locale.ROOT, "%d pages of 4 KiB mapped and pinned at 0x%x (%s, iova 0x%x); "
            + "a REG_MR makes them valid under a new key", pages, a.num(), Units.bytes(len), mr.iova()));
    }

    // ------------------------------------------------------------------ registration strategies

    private Outcome pool(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final Map<String, String> o = l.options();
        final long chunk = s.evalNum(l, l.args().get(2));
        final int chunks = s.evalCount(l, o.getOrDefault("chunks", "16"));
        final long min = s.evalNum(l, o.getOrDefault("min", "4K"));
        final String backingWord = o.getOrDefault("backing", "4k");
        final Backing backing = switch (backingWord)
        {
            case "thp" -> Backing.TRANSPARENT_HUGE_PAGES;
            case "2m" -> Backing.HUGETLB_2M;
            case "1g" -> Backing.HUGETLB_1G;
            default -> Backing.BASE_PAGES;
        };
        final Set<Access> access = Spec.accessFlags(o.getOrDefault("access", "local_write"));
        final MemoryPool.Config config;
        try
        {
            config = new MemoryPool.Config(chunk, chunks, min, backing, access);
        }
        catch (final IllegalArgumentException e)
        {
            return Outcome.failed("EINVAL", e.getMessage());
        }
        final MemoryPool pool = MemoryPool.create(pd, pd.context().memory(), config);
        s.names.put(l.args().get(0), new Session.PoolBinding(pool, config, pd));
        return Outcome.ok(String.format(Locale.ROOT, "chunks of %s (%s pages, at most %d), fragments of %s to %s "
            + "(buddy), access %s; nothing registered until the first alloc", Units.bytes(chunk), backingWord, chunks,
            Units.bytes(min), Units.bytes(chunk), accessText(config.access())));
    }

    /** Access flags in their declaration order ({@code MemoryPool.Config} keeps them in a set of no fixed order). */
    static String accessText(final Set<Access> access)
    {
        return access.isEmpty() ? "[]" : EnumSet.copyOf(access).toString();
    }

    private Outcome alloc(final Session s, final ScriptLine l)
    {
        final Session.PoolBinding p = s.get(l, l.args().get(1), Session.PoolBinding.class);
        final long bytes = s.evalNum(l, l.args().get(2));
        final long regs = p.pool().counters().registrations();
        final long before = s.fabric.clock().nowNs();
        final MemoryPool.Fragment f = p.pool().allocate(bytes);
        MemoryRegion chunkMr = null;
        for (final MemoryRegion mr : p.pool().memoryRegions())
        {
            if (mr.lkey() == f.lkey())
            {
                chunkMr = mr;
            }
        }
        s.names.put(l.args().get(0), new Session.FragmentBinding(f, p, chunkMr));
        long block = p.config().minFragmentBytes();
        while (block < bytes)
        {
            block <<= 1;
        }
        final StrategyCounters c = p.pool().counters();
        return Outcome.ok(String.format(Locale.ROOT, "0x%x, %s (a block of %s), lkey=0x%08x rkey=0x%08x; %s",
            f.addr(), Units.bytes(f.lengthBytes()), Units.bytes(block), f.lkey(), f.rkey(),
            c.registrations() > regs ? String.format(Locale.ROOT, "no chunk had room: a chunk of %s mapped and "
            + "registered (chunk %d of at most %d, %s)", Units.bytes(p.config().chunkBytes()), c.liveMrs(),
            p.config().maxChunks(), Units.duration(s.fabric.clock().nowNs() - before))
            : "from a registered chunk: no registration"));
    }

    private Outcome free(final Session s, final ScriptLine l)
    {
        final Session.FragmentBinding f = s.get(l, l.args().get(0), Session.FragmentBinding.class);
        f.pool().pool().free(f.fragment());
        return Outcome.ok(String.format(Locale.ROOT, "0x%x back in the pool (merged with free buddies); its chunk "
            + "stays registered; %d fragment(s) out", f.fragment().addr(), f.pool().pool().liveFragments()));
    }

    private Outcome cache(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final Map<String, String> o = l.options();
        final int regions = o.containsKey("regions") ? s.evalCount(l, o.get("regions")) : Integer.MAX_VALUE;
        final long bytes = o.containsKey("bytes") ? s.evalNum(l, o.get("bytes")) : Long.MAX_VALUE;
        final RegistrationCache.Config config;
        try
        {
            config = new RegistrationCache.Config(regions, bytes);
        }
        catch (final IllegalArgumentException e)
        {
            return Outcome.failed("EINVAL", e.getMessage());
        }
        final boolean hook = "yes".equals(o.get("hook"));
        final RegistrationCache cache = RegistrationCache.create(pd, config);
        if (hook)
        {
            cache.hookUnmaps(pd.context().memory());
        }
        s.names.put(l.args().get(0), new Session.CacheBinding(cache, config, pd, hook));
        return Outcome.ok(bounds(config) + "; " + (hook ? "munmap hook installed: every munmap in pid "
            + pd.context().process().pid() + " invalidates the entries it overlaps"
            : "no munmap hook: entries outlive munmap unless 'invalidate' is called"));
    }

    /** A cache's bounds as text. */
    static String bounds(final RegistrationCache.Config c)
    {
        return "bounds: " + (c.maxRegions() == Integer.MAX_VALUE ? "no region bound" : "at most " + c.maxRegions()
            + " MRs") + ", " + (c.maxBytes() == Long.MAX_VALUE ? "no byte bound" : "at most "
            + Units.bytes(c.maxBytes()));
    }

    private Outcome acquire(final Session s, final ScriptLine l)
    {
        final Session.CacheBinding c = s.get(l, l.args().get(1), Session.CacheBinding.class);
        final Session.Val a = s.eval(l, l.args().get(2));
        final long len = s.evalNum(l, l.args().get(3));
        final Set<Access> access = Spec.accessFlags(l.options().getOrDefault("access", "local_write"));
        final StrategyCounters before = c.cache().counters();
        final long t0 = s.fabric.clock().nowNs();
        final RegistrationCache.Handle h = c.cache().acquire(a.num(), len, access);
        final StrategyCounters after = c.cache().counters();
        final boolean hit = after.hits() > before.hits();
        s.names.put(l.args().get(0), new Session.HandleBinding(h, c, a.num(), len, hit));
        final MemoryRegion mr = h.mr();
        final String range = String.format(Locale.ROOT, "MR 0x%x+%s lkey=0x%08x rkey=0x%08x access %s", mr.addr(),
            Units.bytes(mr.lengthBytes()), h.lkey(), h.rkey(), mr.access());
        if (hit)
        {
            return Outcome.ok("hit: " + range + ", registered earlier; no registration");
        }
        final long evicted = after.evictions() - before.evictions();
        return Outcome.ok("miss: registered " + range + " (the range widened to 4 KiB pages)"
            + (evicted == 0 ? "" : ", after evicting " + evicted + " idle MR(s), least recently used first") + "; "
            + Units.duration(s.fabric.clock().nowNs() - t0));
    }

    private Outcome release(final Session s, final ScriptLine l)
    {
        final Session.HandleBinding h = s.get(l, l.args().get(0), Session.HandleBinding.class);
        final RegistrationCache cache = h.cache().cache();
        final long live = cache.counters().liveMrs();
        cache.release(h.handle());
        if (cache.counters().liveMrs() < live)
        {
            return Outcome.ok("released: its entry was invalidated meanwhile, so the MR is deregistered now");
        }
        return Outcome.ok("released: the MR stays registered for later hits; " + cache.idleEntries() + " idle, "
            + cache.counters().liveMrs() + " MR(s) held");
    }

    private Outcome invalidate(final Session s, final ScriptLine l)
    {
        final Session.CacheBinding c = s.get(l, l.args().get(0), Session.CacheBinding.class);
        final long addr = s.eval(l, l.args().get(1)).num();
        final long len = s.evalNum(l, l.args().get(2));
        final long live = c.cache().counters().liveMrs();
        final int dropped = c.cache().invalidate(addr, len);
        final long deregistered = live - c.cache().counters().liveMrs();
        return Outcome.ok(String.format(Locale.ROOT, "%d entr%s dropped: %d idle MR(s) deregistered now%s", dropped,
            dropped == 1 ? "y" : "ies", deregistered, dropped > deregistered ? ", " + (dropped - deregistered)
            + " in use deregistered at their release" : ""));
    }

    private Outcome qp(final Session s, final ScriptLine l)
    {
        final Map<String, String> o = l.options();
        if (XrcVerbs.isTargetQp(l))
        {
            return XrcVerbs.targetQp(s, l);
        }
        // Default 4 SGEs, or the device's max_sge where it is lower (EFA: 2).
        final int sge = o.containsKey("sge") ? s.evalCount(l, o.get("sge")) : Math.min(4,
            s.get(l, l.args().get(1), SimPd.class).context().device().profile().attributes().maxSge());
        final QpCap cap = new QpCap(s.evalCount(l, o.getOrDefault("send_wr", "64")),
            s.evalCount(l, o.getOrDefault("recv_wr", "64")), sge, sge,
            s.evalCount(l, o.getOrDefault("inline", "64")));
        final SimCq cq = s.get(l, XrcVerbs.cqArg(l), SimCq.class);
        final QpType type = QpType.valueOf(o.getOrDefault("type", "rc").toUpperCase(Locale.ROOT));
        final dev.rnicsim.simnic.SimSrq srq = o.containsKey("srq")
            ? s.get(l, o.get("srq"), dev.rnicsim.simnic.SimSrq.class) : null;
        final Set<WrOpcode> sendOps = o.containsKey("ops") ? Spec.sendOps(o.get("ops")) : null;
        final QpInitAttr init = type == QpType.XRC_SEND ? XrcVerbs.sendAttr(cq, cap)
            : new QpInitAttr(cq, cq, type, cap, false, srq);
        final SimQp qp = (SimQp)s.get(l, l.args().get(1), SimPd.class).createQp(init.withSendOps(sendOps));
        s.names.put(l.args().get(0), qp);
        return Outcome.ok(type + " QP 0x" + Integer.toHexString(qp.qpNum()) + " in " + qp.state()
            + (srq == null ? "" : ", receives from the SRQ"));
    }

    private Outcome connect(final Session s, final ScriptLine l)
    {
        final SimQp a = s.get(l, l.args().get(0), SimQp.class);
        final SimQp b = s.get(l, l.args().get(1), SimQp.class);
        final Set<Access> access = Spec.accessFlags(l.options().getOrDefault("access",
            "remote_write,remote_read,remote_atomic"));
        final int rnrRetry = s.evalCount(l, l.options().getOrDefault("rnr_retry", "7"));
        final int timer = s.evalCount(l, l.options().getOrDefault("min_rnr_timer", "12"));
        final int retry = s.evalCount(l, l.options().getOrDefault("retry", "7"));
        for (final SimQp[] pair : a == b ? new SimQp[][] {{a, a}} : new SimQp[][] {{a, b}, {b, a}})
        {
            pair[0].modifyToInit(access);
            pair[0].modifyToRtr(pair[1].address(), timer);
            pair[0].modifyToRts(retry, rnrRetry);
        }
        return Outcome.ok("RTS both ways, qp_access_flags " + access + ", rnr_retry " + rnrRetry
            + (rnrRetry == 7 ? " (no limit)" : "") + ", min_rnr_timer " + timer + " ("
            + Units.duration(dev.rnicsim.simnic.CostModel.rnrTimerNs(timer)) + " a wait)");
    }

    private Outcome post(final Session s, final ScriptLine l)
    {
        final SimQp qp = s.get(l, l.args().get(1), SimQp.class);
        final Map<String, String> o = l.options();
        final List<Sge> sgl = sgl(s, l, o.get("sgl"));
        final long id = o.containsKey("id") ? s.evalNum(l, o.get("id")) : s.nextWrId++;
        final WrOpcode op = switch (l.args().get(0))
        {
            case "write" -> WrOpcode.RDMA_WRITE;
            case "write_imm" -> WrOpcode.RDMA_WRITE_WITH_IMM;
            case "read" -> WrOpcode.RDMA_READ;
            case "send" -> WrOpcode.SEND;
            case "send_imm" -> WrOpcode.SEND_WITH_IMM;
            case "cas" -> WrOpcode.ATOMIC_CMP_AND_SWP;
            case "send_inv" -> WrOpcode.SEND_WITH_INV;
            case "local_inv" -> WrOpcode.LOCAL_INV;
            case "reg_mr" -> WrOpcode.REG_MR;
            case "flush" -> WrOpcode.FLUSH;
            case "atomic_write" -> WrOpcode.ATOMIC_WRITE;
            default -> WrOpcode.ATOMIC_FETCH_AND_ADD;
        };
        long remote = 0;
        int rkey = 0;
        if (o.containsKey("remote"))
        {
            final Session.Val r = s.eval(l, o.get("remote"));
            remote = r.num();
            rkey = r.rkey();
        }
        if (o.containsKey("rkey"))
        {
            rkey = s.evalInt(l, o.get("rkey"));
        }
        if (op.isRdma() && !o.containsKey("remote"))
        {
            throw l.error("post " + l.args().get(0) + " needs remote=ADDR (and rkey=KEY unless ADDR starts at an MR)");
        }
        final Set<SendFlag> flags = sendFlags(l);
        final long compareAdd = op == WrOpcode.ATOMIC_FETCH_AND_ADD
            ? s.evalNum(l, o.getOrDefault("add", "1")) : s.evalNum(l, o.getOrDefault("compare", "0"));
        if (op == WrOpcode.LOCAL_INV || op == WrOpcode.REG_MR)
        {
            return postLocal(s, l, qp, op, id, flags, rkey);
        }
        final boolean inv = op == WrOpcode.SEND_WITH_INV;
        final SendWr wr = XrcVerbs.remoteSrqn(s, l, op == WrOpcode.FLUSH || op == WrOpcode.ATOMIC_WRITE
            ? ScriptPlacement.workRequest(s, l, op, id, sgl, flags, remote, rkey)
            : new SendWr(id, op, sgl, flags, inv ? 0 : remote, inv ? 0 : rkey,
            s.evalInt(l, o.getOrDefault("imm", "0")), compareAdd, s.evalNum(l, o.getOrDefault("swap", "0")),
            inv ? rkey : 0));
        if (o.containsKey("ah"))
        {
            qp.postSendUd(List.of(new dev.rnicsim.verbs.UdSendWr(wr, s.get(l, o.get("ah"),
                dev.rnicsim.simnic.SimAh.class), s.evalInt(l, o.getOrDefault("remote_qpn", "0")),
                s.evalInt(l, o.getOrDefault("qkey", "0")))));
        }
        else
        {
            qp.postSend(wr);
        }
        if (s.manualEngine)
        {
            return Outcome.ok(Engines.queued(qp, wr));
        }
        settle(s);
        return Outcome.ok("posted wr_id=" + id + " (" + ScriptPlacement.describe(wr)
            + (inv ? String.format(Locale.ROOT, ", invalidates rkey 0x%08x at the peer", rkey) : "") + ")"
            + (qp.sendsWaiting() > 0 ? "; waiting: the peer has no receive posted (RNR)" : ""));
    }

    /** post local_inv and post reg_mr: work requests the QP's own device executes. */
    private Outcome postLocal(final Session s, final ScriptLine l, final SimQp qp, final WrOpcode op, final long id,
        final Set<SendFlag> flags, final int rkey)
    {
        final boolean wasErr = qp.state() == QpState.ERR;
        if (op == WrOpcode.LOCAL_INV)
        {
            final SendWr inv = new SendWr(id, op, List.of(), flags, 0, 0, 0, 0, 0, rkey);
            qp.postSend(inv);
            if (s.manualEngine)
            {
                return Outcome.ok(Engines.queued(qp, inv));
            }
            settle(s);
            return Outcome.ok(String.format(Locale.ROOT, "posted wr_id=%d (LOCAL_INV of rkey 0x%08x)%s", id, rkey,
                deviceNote(s, qp, wasErr)));
        }
        final Map<String, String> o = l.options();
        final SimFastRegMr mr = s.get(l, o.get("mr"), SimFastRegMr.class);
        final int before = mr.lkey();
        final int key = o.containsKey("key") ? s.evalInt(l, o.get("key")) : SendWr.incRkey(before);
        final Set<Access> access = Spec.accessFlags(o.getOrDefault("access", "local_write"));
        qp.postSend(new SendWr(id, op, List.of(), flags, 0, 0, 0, 0, 0, 0, new SendWr.Reg(mr, key, access)));
        settle(s);
        return Outcome.ok(String.format(Locale.ROOT, "posted wr_id=%d (REG_MR of %s at 0x%x, key 0x%08x -> "
            + "0x%08x, access %s)%s", id, Units.bytes(mr.lengthBytes()), mr.iova(), before, key, access,
            deviceNote(s, qp, wasErr)));
    }

    private List<Sge> sgl(final Session s, final ScriptLine l, final String text)
    {
        final List<Sge> out = new ArrayList<>();
        if (text == null || text.isEmpty())
        {
            return out;
        }
        for (final String sge : text.split(","))
        {
            final String[] parts = sge.split(":");
            if (parts.length == 1)
            {
                out.add(wholeSge(s, l, sge));
                continue;
            }
            final Session.Val a = s.eval(l, parts[0]);
            final long len = s.evalNum(l, parts[1]);
            final int key;
            if (parts.length == 3)
            {
                key = s.evalInt(l, parts[2]);
            }
            else if (a.mr() != null)
            {
                key = a.mr().lkey();
            }
            else if (a.mw() != null)
            {
                throw l.error("SGE '" + sge + "': a memory window has no lkey (SGEs name local MRs); give "
                    + "ADDR:LEN:LKEY or start ADDR at an MR name");
            }
            else
            {
                throw l.error("SGE '" + sge + "': give the lkey (ADDR:LEN:LKEY) or start ADDR at an MR name");
            }
            try
            {
                out.add(new Sge(a.num(), len, key));
            }
            catch (final IllegalArgumentException e)
            {
                throw l.error("SGE '" + sge + "': " + e.getMessage());
            }
        }
        return out;
    }

    /** An SGE over the whole of a fragment or of the range a handle was acquired for, with its lkey. */
    private static Sge wholeSge(final Session s, final ScriptLine l, final String name)
    {
        try
        {
            return switch (s.names.get(name))
            {
                case Session.FragmentBinding f -> f.fragment().sge();
                case Session.HandleBinding h -> new Sge(h.addr(), h.lengthBytes(), h.handle().lkey());
                case null, default -> throw l.error("SGE '" + name + "': only a fragment or a handle stands alone;"
                    + " give ADDR:LEN or ADDR:LEN:LKEY");
            };
        }
        catch (final IllegalArgumentException e)
        {
            throw l.error("SGE '" + name + "': " + e.getMessage());
        }
    }

    private Outcome recv(final Session s, final ScriptLine l)
    {
        if (s.names.get(l.args().get(0)) instanceof dev.rnicsim.simnic.SimSrq srq)
        {
            final long id = l.options().containsKey("id") ? s.evalNum(l, l.options().get("id")) : s.nextWrId++;
            srq.postRecv(List.of(new RecvWr(id, sgl(s, l, l.options().get("sgl")))));
            settle(s);
            return Outcome.ok("ibv_post_srq_recv wr_id=" + id + " (" + srq.receivesPosted() + " waiting)");
        }
        final SimQp qp = s.get(l, l.args().get(0), SimQp.class);
        final long id = l.options().containsKey("id") ? s.evalNum(l, l.options().get("id")) : s.nextWrId++;
        qp.postRecv(new RecvWr(id, sgl(s, l, l.options().get("sgl"))));
        settle(s);
        return Outcome.ok("receive wr_id=" + id + " posted (" + qp.receivesPosted() + " waiting)");
    }

    private Outcome strict(final Session s, final ScriptLine l)
    {
        if (l.args().get(0).equals("off"))
        {
            s.strict.off();
            return Outcome.ok("strict mode off");
        }
        final long rate = l.options().containsKey("max_reg_rate") ? s.evalNum(l, l.options().get("max_reg_rate"))
            : StrictScript.DEFAULT_MAX_REGISTRATIONS_PER_SECOND;
        if (rate < 1)
        {
            throw l.error(ScriptParser.maxRegRateError(String.valueOf(rate)));
        }
        final String ignore = l.options().getOrDefault("ignore", "");
        s.strict.on(s.fabric, rate, ignore.isEmpty() ? List.of() : List.of(ignore.toUpperCase(Locale.ROOT)
            .split(",")));
        return Outcome.ok("strict mode on: stale keys and mappings, leaks, unused MRs, flags before data, keys "
            + "retired in flight, and more than " + rate + " registrations per simulated second are warnings"
            + (ignore.isEmpty() ? "" : " (not " + ignore + ")"));
    }

    private Outcome poll(final Session s, final ScriptLine l)
    {
        final SimCq cq = s.get(l, l.args().get(0), SimCq.class);
        final int n = l.args().size() > 1 ? s.evalCount(l, l.args().get(1)) : 16;
        s.lastCompletions = cq.poll(n);
        if (s.lastCompletions.isEmpty())
        {
            return Outcome.ok("no completion");
        }
        final StringBuilder sb = new StringBuilder();
        for (final WorkCompletion wc : s.lastCompletions)
        {
            if (sb.length() > 0)
            {
                sb.append('\n');
            }
            sb.append("wc wr_id=").append(wc.wrId()).append(' ').append(wc.status().cName());
            if (wc.ok())
            {
                sb.append(" opcode=").append(wc.opcode()).append(" byte_len=").append(wc.byteLen());
                if (wc.withImm())
                {
                    sb.append(" imm=0x").append(Integer.toHexString(wc.immData()));
                }
                if (wc.withInv())
                {
                    sb.append(String.format(Locale.ROOT, " invalidated_rkey=0x%08x", wc.invalidatedRkey()));
                }
                if (wc.withGrh() || wc.srcQp() != 0)
                {
                    // A UD receive (ibv_poll_cq(3)): the sender's QP and whether a GRH leads the buffer.
                    sb.append(String.format(Locale.ROOT, " src_qp=0x%x%s", wc.srcQp(), wc.withGrh() ? " grh" : ""));
                }
            }
            else
            {
                sb.append(String.format(Locale.ROOT, " vendor_err=0x%x", wc.vendorErr()));
                if (wc.diagnosis() != null)
                {
                    sb.append("\n  why: ").append(wc.diagnosis().text().replace("\n", "\n       "));
                }
            }
        }
        return Outcome.ok(sb.toString());
    }

    private Outcome close(final Session s, final ScriptLine l)
    {
        final Object o = s.names.get(l.args().get(0));
        switch (o)
        {
            case SimContext c -> c.close();
            case SimPd p -> p.close();
            case SimMr m -> m.close();
            case SimOdpMr m -> m.close();
            case SimPeerMr m -> m.close();
            case Session.DmabufBinding d ->
            {
                d.gpu().closeDmabuf(d.fd());
                return Outcome.ok("dma-buf fd " + d.fd() + " closed: MRs registered from it keep their own "
                    + "reference until deregistered");
            }
            case dev.rnicsim.simnic.FlagWatch w ->
            {
                w.close();
                return Outcome.ok("stopped polling");
            }
            case SimFastRegMr f -> f.close();
            case SimMw w -> w.close();
            case SimCq c -> c.close();
            case SimQp q -> q.close();
            case dev.rnicsim.simnic.SimSrq q -> q.close();
            case dev.rnicsim.simnic.SimXrcd x -> x.close();
            case dev.rnicsim.simnic.SimAh a -> a.close();
            case dev.rnicsim.verbs.MemoryRegion m -> m.close();
            case dev.rnicsim.verbs.DeviceMemory d -> d.close();
            case Session.PoolBinding p ->
            {
                final StrategyCounters before = p.pool().counters();
                final int out = p.pool().liveFragments();
                p.pool().close();
                return Outcome.ok(String.format(Locale.ROOT, "closed: %d chunk MR(s) (%s) deregistered and unmapped%s",
                    before.liveMrs(), Units.bytes(before.liveBytes()), out == 0 ? ""
                    : "; " + out + " fragment(s) still out are invalid now (their keys no longer translate)"));
            }
            case Session.CacheBinding c ->
            {
                final StrategyCounters before = c.cache().counters();
                final int idle = c.cache().idleEntries();
                c.cache().close();
                final long inUse = before.liveMrs() - idle;
                return Outcome.ok(String.format(Locale.ROOT, "closed: %d idle MR(s) deregistered%s", idle,
                    inUse == 0 ? "" : "; " + inUse + " in use stay registered (their handles' keys work) until"
                    + " their PD is closed"));
            }
            default -> throw l.error("'" + l.args().get(0) + "' cannot be closed");
        }
        return Outcome.ok("closed");
    }

    // ------------------------------------------------------------------ expect

    private String expect(final Session s, final ScriptLine l, final Outcome last)
    {
        final List<String> a = l.args();
        if (EventVerbs.isEventExpect(l))
        {
            return EventVerbs.expect(s, l);
        }
        if (a.size() == 2 && a.get(0).equals("warning"))
        {
            return s.strict.expectWarning(a.get(1));
        }
        if (a.size() == 2 && a.get(0).equals("no") && a.get(1).equals("warnings"))
        {
            return s.strict.expectNone();
        }
        if (a.size() == 1)
        {
            final String w = a.get(0);
            if (w.equals("ok") || ScriptParser.isErrno(w))
            {
                return w.equals(last.name()) ? null : "expected " + w + ", got " + last.name()
                    + (last.ok() ? "" : ": " + last.shown());
            }
            final String status = w.startsWith("IBV_WC_") ? w.substring(7) : w;
            if (s.lastCompletions.isEmpty())
            {
                return "expected a completion with " + status + ", but the last poll returned none";
            }
            final String got = s.lastCompletions.get(0).status().name();
            return got.equals(status) ? null : "expected IBV_WC_" + status + ", got IBV_WC_" + got;
        }
        if (a.get(0).equals("bytes"))
        {
            final byte[] want = data(a.get(2));
            final Gpus.At gpuAt = Gpus.at(s, l, s.eval(l, a.get(1)));
            if (gpuAt != null)
            {
                final byte[] got;
                try
                {
                    got = gpuAt.gpu().read(gpuAt.va(), want.length);
                }
                catch (final VerbsException e)
                {
                    return "reading " + want.length + " bytes of GPU memory at 0x" + Long.toHexString(gpuAt.va())
                        + " failed: " + e.getMessage();
                }
                return Arrays.equals(want, got) ? null : "expected bytes " + printable(want) + ", got "
                    + printable(got);
            }
            final Session.Val at = address(s, l, a.get(1));
            final byte[] got;
            try
            {
                got = at.process().read(at.num(), want.length);
            }
            catch (final KernelException e)
            {
                return "reading " + want.length + " bytes at 0x" + Long.toHexString(at.num()) + " failed: "
                    + e.getMessage();
            }
            return Arrays.equals(want, got) ? null : "expected bytes " + printable(want) + ", got " + printable(got);
        }
        final Session.Val left = s.eval(l, a.get(0));
        final String op = a.get(1);
        final String rightText = a.get(2);
        if (rightText.matches("[A-Z_]+") && !s.names.containsKey(rightText))
        {
            final String want = rightText.startsWith("IBV_WC_") ? rightText.substring(7) : rightText;
            if (left.numeric())
            {
                return a.get(0) + " is the number " + left.show() + ", not a text like " + rightText;
            }
            final String got = left.text();
            final boolean eq = want.equals(got);
            if (op.equals("==") ? eq : op.equals("!=") && !eq)
            {
                return null;
            }
            return a.get(0) + " is " + got + ", expected " + op + " " + want;
        }
        final Session.Val right = s.eval(l, rightText);
        if (left.numeric() != right.numeric())
        {
            return a.get(0) + " is " + left.show() + " and " + rightText + " is " + right.show()
                + ": a text is compared only with a text";
        }
        if (!left.numeric())
        {
            final boolean eq = left.text().equals(right.text());
            if (op.equals("==") || op.equals("!="))
            {
                return op.equals("==") == eq ? null : a.get(0) + " is " + left.text() + ", expected " + op + " "
                    + right.text();
            }
            return a.get(0) + " is the text " + left.text() + ": texts compare only with == and !=";
        }
        final long x = left.num();
        final long y = right.num();
        final boolean holds = switch (op)
        {
            case "==" -> x == y;
            case "!=" -> x != y;
            case "<" -> x < y;
            case "<=" -> x <= y;
            case ">" -> x > y;
            default -> x >= y;
        };
        return holds ? null : a.get(0) + " is " + left.show() + ", expected " + op + " " + right.show();
    }

    private static String printable(final byte[] b)
    {
        final String text = new String(b, StandardCharsets.UTF_8);
        return text.chars().allMatch(c -> c >= 32 && c < 127) ? "\"" + text + "\"" : "hex:" + HexFormat.of()
            .formatHex(b);
    }
}
