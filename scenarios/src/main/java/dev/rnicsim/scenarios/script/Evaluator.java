package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.scenarios.script.Session.Val;
import dev.rnicsim.simnic.FlagWatch;
import dev.rnicsim.simnic.GpuBuffer;
import dev.rnicsim.simnic.SimAh;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimGpu;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.simnic.SimSrq;
import dev.rnicsim.simnic.SimXrcd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WorkCompletion;

/**
 * The terms of a value expression: numbers with units, {@code now}, {@code unlimited}, {@code last.FIELD}, and a
 * name with or without {@code .FIELD}, whose value depends on what the name is bound to (an address for a buffer or
 * an MR, a number for a QP or a PD, a text for a QP's state). {@link Session#eval} adds the terms up. Stateless.
 */
final class Evaluator
{
    private Evaluator()
    {
    }

    /** A term of an expression: factors joined by {@code *} and {@code /}. */
    static Val term(final Session s, final ScriptLine l, final String term)
    {
        if (term.contains("*") || term.contains("/"))
        {
            long acc = 0;
            char op = '*';
            int start = 0;
            for (int i = 0; i <= term.length(); i++)
            {
                if (i == term.length() || term.charAt(i) == '*' || term.charAt(i) == '/')
                {
                    final Val f = factor(s, l, term.substring(start, i));
                    if (!f.numeric())
                    {
                        throw l.error("'" + term + "': a text cannot be multiplied");
                    }
                    if (start == 0)
                    {
                        acc = f.num();
                    }
                    else if (op == '*')
                    {
                        try
                        {
                            acc = Math.multiplyExact(acc, f.num());
                        }
                        catch (final ArithmeticException e)
                        {
                            throw l.error("'" + term + "' overflows 64 bits");
                        }
                    }
                    else
                    {
                        if (f.num() == 0)
                        {
                            throw l.error("'" + term + "' divides by zero");
                        }
                        acc /= f.num();
                    }
                    if (i < term.length())
                    {
                        op = term.charAt(i);
                    }
                    start = i + 1;
                }
            }
            return Val.of(acc);
        }
        return factor(s, l, term);
    }

    /** A factor: a number, {@code now}, {@code unlimited}, {@code last.FIELD}, or NAME[.FIELD]. */
    private static Val factor(final Session s, final ScriptLine l, final String term)
    {
        final Long literal = Units.parse(term);
        if (literal != null)
        {
            return Val.of(literal);
        }
        if (term.equals("now"))
        {
            return Val.of(s.fabric.clock().nowNs());
        }
        if (term.equals("unlimited"))
        {
            return Val.of(UserProcess.RLIM_INFINITY);
        }
        final int dot = term.indexOf('.');
        final String base = dot < 0 ? term : term.substring(0, dot);
        final String field = dot < 0 ? null : term.substring(dot + 1);
        if (base.equals("last"))
        {
            return last(s, l, field);
        }
        final Object o = s.names.get(base);
        if (o == null)
        {
            throw l.error("'" + base + "' is not defined");
        }
        final Val keyed = keyedValue(l, base, o, field);
        return keyed != null ? keyed : machineValue(l, base, o, field);
    }

    /**
     * The value of a name bound to an object that carries keys: an MR of any kind, a fast-registration MR, a window,
     * a fragment or a handle (an address, or a field), or a pool or cache (a field).
     *
     * @return the value, or null when the object is none of those.
     */
    private static Val keyedValue(final ScriptLine l, final String base, final Object o, final String field)
    {
        return switch (o)
        {
            case SimMr m -> field == null ? new Val(m.iova(), null, m.pd().context().process(), m, null)
                : "kind".equals(field) ? Val.ofText("PINNED") : Val.of(MrFields.mrField(m, field));
            case SimOdpMr m -> field == null ? new Val(m.iova(), null, m.pd().context().process(), m, null)
                : "kind".equals(field) ? Val.ofText("ODP") : Val.of(MrFields.odpField(m, field));
            case SimPeerMr m -> field == null ? new Val(m.iova(), null, m.pd().context().process(), m, null,
                m.buffer()) : "kind".equals(field) ? Val.ofText(m.kind().name()) : Val.of(MrFields.peerField(m, field));
            case SimFastRegMr f -> field == null ? new Val(f.iova(), null, f.pd().context().process(), f, null)
                : Val.of(MrFields.fastMrField(f, field));
            case SimMw w -> field == null ? windowStart(w) : Val.of(MrFields.mwField(w, field));
            case Session.FragmentBinding f -> field == null ? new Val(f.fragment().addr(), null,
                f.pool().pd().context().process(), f.mr(), null) : Val.of(MrFields.fragmentField(f.fragment(), field));
            case Session.HandleBinding h -> field == null ? new Val(h.addr(), null, h.cache().pd().context().process(),
                h.handle().mr(), null) : Val.of(MrFields.handleField(h, field));
            case Session.PoolBinding p ->
            {
                if (field == null)
                {
                    throw l.error("a pool has no value of its own; use a field, e.g. " + base + ".hits");
                }
                yield Val.of(MrFields.strategyField(p.pool().counters(), p.pool().liveFragments(), field));
            }
            case Session.CacheBinding c ->
            {
                if (field == null)
                {
                    throw l.error("a cache has no value of its own; use a field, e.g. " + base + ".hits");
                }
                yield Val.of(MrFields.strategyField(c.cache().counters(), c.cache().idleEntries(), field));
            }
            // A null MR (nullmr): its value is 0, the start of the address space it spans.
            case MemoryRegion m -> field == null ? new Val(m.iova(), null, null, m, null) : switch (field)
            {
                case "lkey" -> Val.of(m.lkey());
                case "rkey" -> Val.of(m.rkey());
                case "kind" -> Val.ofText("NULL");
                default -> throw l.error("a null MR has the fields lkey, rkey and kind, not '" + field + "'");
            };
            default -> null;
        };
    }

    /**
     * The value of a name bound to a part of the machine: a buffer (an address), a host, process, device, GPU and its
     * buffers, a QP and the other verbs objects, or a number from {@code let}.
     */
    private static Val machineValue(final ScriptLine l, final String base, final Object o, final String field)
    {
        return switch (o)
        {
            case Session.Buffer b -> field == null ? new Val(b.addr(), null, b.process(), null, null)
                : HostFields.bufferField(b, field);
            case SimGpu g ->
            {
                if (field == null)
                {
                    throw l.error("a GPU has no value of its own; use a field, e.g. " + base + ".bar1_used, or a "
                        + "buffer's name (gpualloc)");
                }
                yield Val.of(HostFields.gpuField(g, field));
            }
            case GpuBuffer b -> field == null ? new Val(b.gpuVa(), null, null, null, null, b)
                : Val.of(HostFields.gpuBufferField(b, field));
            case Session.DmabufBinding d -> Val.of(field == null ? d.fd() : switch (field)
            {
                case "offset" -> d.offset();
                case "length" -> d.lengthBytes();
                case "closed" -> d.closed() ? 1 : 0;
                default -> d.fd();
            });
            case FlagWatch w ->
            {
                if (field == null)
                {
                    throw l.error("a watch has no value of its own; use a field, e.g. " + base + ".torn");
                }
                yield Val.of(switch (field)
                {
                    case "seen" -> w.flagSeen() ? 1 : 0;
                    case "torn" -> w.torn() ? 1 : 0;
                    default -> w.placementsBeforeFlag();
                });
            }
            case SimQp q -> field == null ? Val.of(q.qpNum()) : HostFields.qpField(q, field);
            case SimSrq q -> Val.of(field == null ? q.receivesPosted() : switch (field)
            {
                case "max_wr" -> q.isClosed() ? 0 : q.query().maxWr();
                case "max_sge" -> q.isClosed() ? 0 : q.query().maxSge();
                case "limit" -> q.isClosed() ? 0 : q.query().srqLimit();
                case "qps" -> q.queuePairs().size();
                case "limit_events" -> q.limitEvents();
                case "num" -> q.srqNum();
                case "closed" -> q.isClosed() ? 1 : 0;
                default -> q.receivesPosted();
            });
            case SimXrcd x -> Val.of(field == null ? x.srqs().size() : switch (field)
            {
                case "qps" -> x.targetQps().size();
                case "closed" -> x.isClosed() ? 1 : 0;
                default -> x.srqs().size();
            });
            case SimAh h -> Val.of(field != null && field.equals("closed") ? (h.isClosed() ? 1 : 0)
                : h.attr().portNum());
            case SimPd p -> Val.of(p.pdNum());
            case SimCq c -> Val.of(field != null && field.equals("entries") ? c.cqe() : c.depth());
            case SimContext c -> field == null ? Val.of(c.process().pid())
                : Val.of(HostFields.processField(c.process(), field));
            case UserProcess p -> field == null ? Val.of(p.pid()) : Val.of(HostFields.processField(p, field));
            case SimDevice d -> Val.of(HostFields.deviceField(l, d, field));
            case Session.HostBinding h ->
            {
                if (field == null)
                {
                    throw l.error("a host has no value of its own; use a field, e.g. " + base + ".mem_free");
                }
                yield Val.of(HostFields.hostField(l, h.host().host(), field));
            }
            case Long v -> Val.of(v);
            case DeviceMemory d -> Val.of(d.lengthBytes());
            default -> throw l.error("'" + base + "' has no value");
        };
    }

    /** A field of {@code last}: the step before the expect and its first completion. */
    private static Val last(final Session s, final ScriptLine l, final String field)
    {
        final WorkCompletion wc = s.lastCompletions.isEmpty() ? null : s.lastCompletions.get(0);
        return switch (field)
        {
            case "duration_ns" -> Val.of(s.lastDurationNs);
            case "count" -> Val.of(s.lastCount);
            case "completions" -> Val.of(s.lastCompletions.size());
            case "status" -> Val.ofText(wc == null ? "NONE" : wc.status().name());
            case "byte_len" -> Val.of(wc == null ? 0 : wc.byteLen());
            case "imm" -> Val.of(wc == null ? 0 : wc.immData() & 0xffffffffL);
            case "wr_id" -> Val.of(wc == null ? 0 : wc.wrId());
            case "invalidated_rkey" -> Val.of(wc == null || !wc.withInv() ? 0 : wc.invalidatedRkey() & 0xffffffffL);
            case "src_qp" -> Val.of(wc == null ? 0 : wc.srcQp() & 0xffffffffL);
            case "wc_flags" -> Val.of(wc == null ? 0 : wc.wcFlags());
            case "grh" -> Val.of(wc != null && wc.withGrh() ? 1 : 0);
            case "slid" -> Val.of(wc == null ? 0 : wc.slid());
            case "sl" -> Val.of(wc == null ? 0 : wc.sl());
            case "pkey_index" -> Val.of(wc == null ? 0 : wc.pkeyIndex());
            case "dlid_path_bits" -> Val.of(wc == null ? 0 : wc.dlidPathBits());
            case "rereg_error" -> Val.ofText(s.lastReregError);
            default -> throw l.error("last has no field '" + field + "'");
        };
    }

    /**
     * A window's name as a value: the first address its rkey opens (0 when zero-based or unbound), in the bound
     * MR's process, carrying the window for its rkey.
     */
    private static Val windowStart(final SimMw w)
    {
        if (!w.isBound())
        {
            return new Val(0, null, null, null, w);
        }
        if (w.access().contains(Access.ZERO_BASED))
        {
            return new Val(0, null, null, null, w);
        }
        return new Val(w.addr(), null, w.boundMr().pd().context().process(), null, w);
    }
}
