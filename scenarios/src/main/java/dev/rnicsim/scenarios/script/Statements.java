package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.strategy.StrategyCounters;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Runs one statement of a script: finds the verb's class (the script language groups its verbs as docs/scripts.md
 * does: {@link HostVerbs}, {@link ProcessVerbs}, {@link RegistrationVerbs}, {@link WindowVerbs},
 * {@link StrategyVerbs}, {@link PostVerbs}, {@link QpVerbs}, {@link Gpus}, ...), runs the few verbs of one line
 * itself ({@code pd}, {@code cq}, {@code let}, {@code strict}, {@code close}, ...), and turns the errno of a failed
 * verb or system call into the step's {@link Outcome}. Stateless.
 */
final class Statements
{
    private Statements()
    {
    }

    /**
     * @return the statement's outcome: ok with its figures, or the errno of the verb or system call that failed.
     * @throws ScriptException when the line cannot run (a name of the wrong kind, a value out of range).
     */
    static Outcome run(final Session s, final ScriptLine l)
    {
        try
        {
            return switch (l.verb())
            {
                case "host" -> HostVerbs.host(s, l);
                case "device" -> HostVerbs.device(s, l);
                case "process" -> HostVerbs.process(s, l);
                case "open" -> HostVerbs.open(s, l);
                case "mmap" -> ProcessVerbs.mmap(s, l);
                case "touch" -> ProcessVerbs.touch(s, l);
                case "write" -> ProcessVerbs.write(s, l);
                case "munmap" -> ProcessVerbs.memory(s, l, (p, a, n) -> p.munmap(a, n), "unmapped");
                case "madvise" -> ProcessVerbs.memory(s, l, (p, a, n) -> p.madvise(a, n,
                    Madvice.valueOf(l.args().get(2).toUpperCase(Locale.ROOT))), "advised");
                case "mprotect" -> ProcessVerbs.memory(s, l, (p, a, n) -> p.mprotect(a, n,
                    ProcessVerbs.prot(l.args().get(2))), "protected");
                case "fork" -> ProcessVerbs.fork(s, l);
                case "forkinit" -> Forks.forkInit(s, l);
                case "exit" -> ProcessVerbs.exit(s, l);
                case "reclaim" -> Outcome.ok("reclaimed " + s.get(l, l.args().get(0), SimHost.class).host()
                    .reclaim(s.evalAmount(l, l.args().get(1), "a number of pages")) + " pages");
                case "compact" -> Outcome.ok("compaction moved " + s.get(l, l.args().get(0), SimHost.class).host()
                    .compact() + " pages");
                case "pd" -> bind(s, l, s.get(l, l.args().get(1), SimContext.class).allocPd(), "");
                case "reg" -> RegistrationVerbs.reg(s, l);
                case "dereg" -> RegistrationVerbs.dereg(s, l);
                case "rereg" -> RegistrationVerbs.rereg(s, l);
                case "advise" -> RegistrationVerbs.advise(s, l);
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
                case "qp" -> PostVerbs.qp(s, l);
                case "connect" -> PostVerbs.connect(s, l);
                case "post" -> PostVerbs.post(s, l);
                case "recv" -> PostVerbs.recv(s, l);
                case "poll" -> PostVerbs.poll(s, l);
                case "progress" -> Engines.progress(s, l);
                case "engine" -> Engines.mode(s, l);
                case "modify" -> QpVerbs.modify(s, l);
                case "queryqp" -> QpVerbs.query(s, l);
                case "srq" -> QpVerbs.srq(s, l);
                case "srqlimit" -> QpVerbs.srqLimit(s, l);
                case "xrcd" -> XrcVerbs.xrcd(s, l);
                case "ah" -> QpVerbs.ah(s, l);
                case "mw" -> WindowVerbs.mw(s, l);
                case "bind" -> WindowVerbs.bindMw(s, l);
                case "unbind" -> WindowVerbs.unbindMw(s, l);
                case "fastmr" -> WindowVerbs.fastMr(s, l);
                case "map" -> WindowVerbs.mapFastMr(s, l);
                case "pool" -> StrategyVerbs.pool(s, l);
                case "alloc" -> StrategyVerbs.alloc(s, l);
                case "free" -> StrategyVerbs.free(s, l);
                case "cache" -> StrategyVerbs.cache(s, l);
                case "acquire" -> StrategyVerbs.acquire(s, l);
                case "release" -> StrategyVerbs.release(s, l);
                case "invalidate" -> StrategyVerbs.invalidate(s, l);
                case "close" -> close(s, l);
                case "nullmr" ->
                {
                    final MemoryRegion mr = s.get(l, l.args().get(1), SimPd.class).allocNullMr();
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
            return Outcome.failed(e.errnoName().name(), Objects.toString(e.getMessage(), ""));
        }
        catch (final KernelException e)
        {
            final String call = systemCall(l);
            final String message = Objects.toString(e.getMessage(), "");
            return Outcome.failed(e.errno().name(), message.startsWith(call) ? message : call + message);
        }
        catch (final TableException e)
        {
            return Outcome.failed(e.errno().name(), Objects.toString(e.getMessage(), ""));
        }
    }

    /**
     * The system call a step makes, naming a host error as verbs errors name their verb ({@code mmap: ENOMEM: ...}).
     */
    private static String systemCall(final ScriptLine l)
    {
        return switch (l.verb())
        {
            case "mmap", "munmap", "madvise", "mprotect", "fork", "exit" -> l.verb() + ": ";
            case "touch", "write" -> "page fault: ";
            default -> "";
        };
    }

    /** Binds the line's first argument to a new object. */
    private static Outcome bind(final Session s, final ScriptLine l, final Object value, final String figures)
    {
        s.names.put(l.args().get(0), value);
        return Outcome.ok(figures);
    }

    /** {@code strict on|off [max_reg_rate=] [ignore=]}. */
    private static Outcome strict(final Session s, final ScriptLine l)
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
            throw l.error(VerbChecks.maxRegRateError(String.valueOf(rate)));
        }
        final String ignore = l.options().getOrDefault("ignore", "");
        s.strict.on(s.fabric, rate, ignore.isEmpty() ? List.of() : List.of(ignore.toUpperCase(Locale.ROOT)
            .split(",")));
        return Outcome.ok("strict mode on: stale keys and mappings, leaks, unused MRs, flags before data, keys "
            + "retired in flight, and more than " + rate + " registrations per simulated second are warnings"
            + (ignore.isEmpty() ? "" : " (not " + ignore + ")"));
    }

    /** {@code close NAME}: closes, deregisters or frees what the name is bound to. */
    private static Outcome close(final Session s, final ScriptLine l)
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
            case MemoryRegion m -> m.close();
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
}
