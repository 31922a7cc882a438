package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.FlagWatch;
import dev.rnicsim.simnic.GpuBuffer;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimGpu;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import dev.rnicsim.verbs.strategy.StrategyCounters;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The state of one script run: the fabric, what each name is bound to, and what the last step left to check
 * ({@code last.*}). Evaluates value expressions. Not thread safe.
 */
final class Session
{
    /** A host with the defaults its new processes get. */
    record HostBinding(SimHost host, long memlockBytes, boolean capIpcLock)
    {
    }

    /** An address in a process. */
    record Buffer(UserProcess process, long addr, long lengthBytes)
    {
    }

    /** A memory pool ({@code pool}), with its configuration and the PD its chunks are registered in. */
    record PoolBinding(MemoryPool pool, MemoryPool.Config config, SimPd pd)
    {
    }

    /** A fragment of a pool ({@code alloc}), with the chunk MR whose keys it carries. */
    record FragmentBinding(MemoryPool.Fragment fragment, PoolBinding pool, MemoryRegion mr)
    {
    }

    /** A registration cache ({@code cache}), with its PD and whether munmap invalidates it. */
    record CacheBinding(RegistrationCache cache, RegistrationCache.Config config, SimPd pd, boolean hooked)
    {
    }

    /** An acquired registration ({@code acquire}): the range asked for and whether it was a hit. */
    record HandleBinding(RegistrationCache.Handle handle, CacheBinding cache, long addr, long lengthBytes,
        boolean hit)
    {
    }

    /** A dma-buf exported by {@code dmabuf}: its descriptor, the buffer and the range of it. */
    record DmabufBinding(SimGpu gpu, int fd, GpuBuffer buffer, long offset, long lengthBytes)
    {
        boolean closed()
        {
            return gpu.host().dmabuf(fd) == null;
        }
    }

    /**
     * A value: a number, or a text (states, statuses), with the process and MR it points into when it is an
     * address, or the window whose range it starts (its rkey goes with it to {@code remote=}), or the GPU buffer it
     * points into (a GPU buffer's name, or an MR over GPU memory).
     */
    record Val(long num, String text, UserProcess process, MemoryRegion mr, MemoryWindow mw, GpuBuffer gpu)
    {
        Val(final long num, final String text, final UserProcess process, final MemoryRegion mr,
            final MemoryWindow mw)
        {
            this(num, text, process, mr, mw, null);
        }

        /**
         * @return the rkey a remote address starting at an MR or a window carries, else 0.
         */
        int rkey()
        {
            return mw != null ? mw.rkey() : mr != null ? mr.rkey() : 0;
        }

        boolean numeric()
        {
            return text == null;
        }

        String show()
        {
            return text != null ? text : num + (num > 4095 || num < 0 ? " (0x" + Long.toHexString(num) + ")" : "");
        }
    }

    final SimFabric fabric = new SimFabric();
    /** True after {@code engine manual}: posted work waits for {@code progress} or {@code poll}. */
    boolean manualEngine;
    final Map<String, Object> names = new HashMap<>();
    /** Strict mode of the run (off until {@code strict on} or --strict). */
    final StrictScript strict = new StrictScript();
    final Map<SimHost, HostBinding> hosts = new HashMap<>();
    final java.nio.file.Path baseDir;
    long lastDurationNs;
    long lastCount;
    List<WorkCompletion> lastCompletions = List.of();
    /** What the last {@code events} returned. */
    List<dev.rnicsim.verbs.AsyncEvent> lastEvents = List.of();
    long nextWrId = 1;
    /** How the last {@code rereg} failed: ERR_INPUT or ERR_CMD, or NONE when it succeeded (or none ran). */
    String lastReregError = "NONE";
    /** The GPU virtual address of the first byte of each MR over GPU memory (a dma-buf MR's iova may differ). */
    final Map<SimPeerMr, Long> peerFirstVa = new HashMap<>();

    Session(final java.nio.file.Path baseDir)
    {
        this.baseDir = baseDir;
    }

    <T> T get(final ScriptLine l, final String name, final Class<T> type)
    {
        final Object o = names.get(name);
        if (type.isInstance(o))
        {
            return type.cast(o);
        }
        if (type == UserProcess.class && o instanceof SimContext c)
        {
            return type.cast(c.process());
        }
        if (type == SimHost.class && o instanceof HostBinding h)
        {
            return type.cast(h.host());
        }
        throw l.error("'" + name + "' is no " + kindName(type) + (o == null ? "" : "; it is " + Articles.a(kindOf(o))));
    }

    private static String kindName(final Class<?> type)
    {
        return switch (type.getSimpleName())
        {
            case "SimMr", "SimOdpMr", "MemoryRegion" -> "MR";
            case "SimFastRegMr" -> "fast-registration MR (a name from 'fastmr')";
            case "SimMw" -> "memory window (a name from 'mw')";
            case "SimPd" -> "PD";
            case "SimCq" -> "CQ";
            case "SimQp" -> "QP";
            case "SimSrq" -> "shared receive queue (a name from 'srq')";
            case "SimAh" -> "address handle (a name from 'ah')";
            case "SimXrcd" -> "XRC domain (a name from 'xrcd')";
            case "SimContext" -> "context (a name from 'open')";
            case "PoolBinding" -> "pool (a name from 'pool')";
            case "FragmentBinding" -> "fragment (a name from 'alloc')";
            case "CacheBinding" -> "registration cache (a name from 'cache')";
            case "HandleBinding" -> "handle (a name from 'acquire')";
            case "SimDevice" -> "device";
            case "SimGpu" -> "GPU (a name from 'gpu')";
            case "GpuBuffer" -> "GPU buffer (a name from 'gpualloc')";
            case "DmabufBinding" -> "dma-buf (a name from 'dmabuf')";
            case "FlagWatch" -> "watch (a name from 'watch')";
            case "SimHost" -> "host";
            case "UserProcess" -> "process";
            case "SimDm" -> "device memory (a name from 'dm')";
            case "SimDmMr" -> "device-memory MR (a name from 'regdm'; free it with close)";
            case "SimNullMr" -> "null MR (a name from 'nullmr'; free it with close)";
            case "SimDmabuf" -> "dma-buf";
            case "SimPeerMr" -> "peer-memory MR";
            default -> type.getSimpleName();
        };
    }

    private static String kindOf(final Object o)
    {
        return switch (o)
        {
            case HostBinding h -> "host";
            case Buffer b -> "buffer";
            case Long v -> "number (from let)";
            default -> kindName(o.getClass());
        };
    }

    /**
     * Evaluates {@code term (+|- term)*}.
     */
    Val eval(final ScriptLine l, final String expr)
    {
        long sum = 0;
        UserProcess process = null;
        MemoryRegion mr = null;
        MemoryWindow mw = null;
        GpuBuffer gpu = null;
        String text = null;
        final List<Expressions.Term> terms = Expressions.split(expr);
        for (final Expressions.Term t : terms)
        {
            final Val v = term(l, t.text());
            if (!v.numeric())
            {
                if (terms.size() > 1)
                {
                    throw l.error("'" + t.text() + "' is a text (" + v.text() + "), which cannot be added");
                }
                text = v.text();
            }
            if (process == null && mr == null && mw == null && gpu == null)
            {
                process = v.process();
                mr = v.mr();
                mw = v.mw();
                gpu = v.gpu();
            }
            try
            {
                sum = t.minus() ? Math.subtractExact(sum, v.num()) : Math.addExact(sum, v.num());
            }
            catch (final ArithmeticException e)
            {
                throw l.error("'" + expr + "' overflows 64 bits");
            }
        }
        return new Val(sum, text, process, mr, mw, gpu);
    }

    /** Evaluates an expression that must be a number (not a text such as a QP state). */
    long evalNum(final ScriptLine l, final String expr)
    {
        final Val v = eval(l, expr);
        if (!v.numeric())
        {
            throw l.error("'" + expr + "' is the text " + v.text() + ", where a number is expected");
        }
        return v.num();
    }

    /** Evaluates a number that must fit a 32-bit count (queue sizes, limits, immediates). */
    int evalInt(final ScriptLine l, final String expr)
    {
        final long v = evalNum(l, expr);
        if (v < Integer.MIN_VALUE || v > 0xffff_ffffL)
        {
            throw l.error("'" + expr + "' is " + v + ", which does not fit 32 bits" + (names.containsKey(expr.strip())
                ? " (a name stands for its address; for a key write " + expr.strip() + ".rkey or "
                + expr.strip() + ".lkey)" : ""));
        }
        return (int)v;
    }

    /** Evaluates a count: 0 to 2^31-1. */
    int evalCount(final ScriptLine l, final String expr)
    {
        final long v = evalNum(l, expr);
        if (v < 0 || v > Integer.MAX_VALUE)
        {
            throw l.error("'" + expr + "' is " + v + "; expected a count from 0 to " + Integer.MAX_VALUE);
        }
        return (int)v;
    }

    private Val term(final ScriptLine l, final String term)
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
                    final Val f = factor(l, term.substring(start, i));
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
            return num(acc);
        }
        return factor(l, term);
    }

    private Val factor(final ScriptLine l, final String term)
    {
        final Long literal = Units.parse(term);
        if (literal != null)
        {
            return num(literal);
        }
        if (term.equals("now"))
        {
            return num(fabric.clock().nowNs());
        }
        if (term.equals("unlimited"))
        {
            return num(UserProcess.RLIM_INFINITY);
        }
        final int dot = term.indexOf('.');
        final String base = dot < 0 ? term : term.substring(0, dot);
        final String field = dot < 0 ? null : term.substring(dot + 1);
        if (base.equals("last"))
        {
            return last(l, field);
        }
        final Object o = names.get(base);
        if (o == null)
        {
            throw l.error("'" + base + "' is not defined");
        }
        return switch (o)
        {
            case Buffer b -> field == null ? new Val(b.addr(), null, b.process(), null, null) : bufferField(b, field);
            case SimMr m -> field == null ? new Val(m.iova(), null, m.pd().context().process(), m, null)
                : "kind".equals(field) ? text("PINNED") : num(mrField(m, field));
            case SimOdpMr m -> field == null ? new Val(m.iova(), null, m.pd().context().process(), m, null)
                : "kind".equals(field) ? text("ODP") : num(odpField(m, field));
            case SimPeerMr m -> field == null ? new Val(m.iova(), null, m.pd().context().process(), m, null,
                m.buffer()) : "kind".equals(field) ? text(m.kind().name()) : num(peerField(m, field));
            case SimGpu g ->
            {
                if (field == null)
                {
                    throw l.error("a GPU has no value of its own; use a field, e.g. " + base + ".bar1_used, or a "
                        + "buffer's name (gpualloc)");
                }
                yield num(gpuField(g, field));
            }
            case GpuBuffer b -> field == null ? new Val(b.gpuVa(), null, null, null, null, b)
                : num(gpuBufferField(b, field));
            case DmabufBinding d -> num(field == null ? d.fd() : switch (field)
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
                yield num(switch (field)
                {
                    case "seen" -> w.flagSeen() ? 1 : 0;
                    case "torn" -> w.torn() ? 1 : 0;
                    default -> w.placementsBeforeFlag();
                });
            }
            case SimFastRegMr f -> field == null
                ? new Val(f.iova(), null, ((SimPd)f.pd()).context().process(), f, null) : num(fastMrField(f, field));
            case SimMw w -> field == null ? windowStart(w) : num(mwField(w, field));
            case SimQp q -> field == null ? num(q.qpNum()) : qpField(q, field);
            case dev.rnicsim.simnic.SimSrq q -> num(field == null ? q.receivesPosted() : switch (field)
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
            case dev.rnicsim.simnic.SimXrcd x -> num(field == null ? x.srqs().size() : switch (field)
            {
                case "qps" -> x.targetQps().size();
                case "closed" -> x.isClosed() ? 1 : 0;
                default -> x.srqs().size();
            });
            case dev.rnicsim.simnic.SimAh h -> num(field != null && field.equals("closed") ? (h.isClosed() ? 1 : 0)
                : h.attr().portNum());
            case SimPd p -> num(p.pdNum());
            case SimCq c -> num(field != null && field.equals("entries") ? c.cqe() : c.depth());
            case SimContext c -> field == null ? num(c.process().pid()) : num(processField(c.process(), field));
            case UserProcess p -> field == null ? num(p.pid()) : num(processField(p, field));
            case SimDevice d -> num(deviceField(l, d, field));
            case FragmentBinding f -> field == null ? new Val(f.fragment().addr(), null,
                f.pool().pd().context().process(), f.mr(), null) : num(fragmentField(f.fragment(), field));
            case HandleBinding h -> field == null ? new Val(h.addr(), null, h.cache().pd().context().process(),
                h.handle().mr(), null) : num(handleField(h, field));
            case PoolBinding p ->
            {
                if (field == null)
                {
                    throw l.error("a pool has no value of its own; use a field, e.g. " + base + ".hits");
                }
                yield num(strategyField(p.pool().counters(), p.pool().liveFragments(), field));
            }
            case CacheBinding c ->
            {
                if (field == null)
                {
                    throw l.error("a cache has no value of its own; use a field, e.g. " + base + ".hits");
                }
                yield num(strategyField(c.cache().counters(), c.cache().idleEntries(), field));
            }
            case HostBinding h ->
            {
                if (field == null)
                {
                    throw l.error("a host has no value of its own; use a field, e.g. " + base + ".mem_free");
                }
                yield num(hostField(l, h.host().host(), field));
            }
            case Long v -> num(v);
            case dev.rnicsim.verbs.DeviceMemory d -> num(d.lengthBytes());
            // A null MR (nullmr): its value is 0, the start of the address space it spans.
            case MemoryRegion m -> field == null ? new Val(m.iova(), null, null, m, null) : switch (field)
            {
                case "lkey" -> num(m.lkey());
                case "rkey" -> num(m.rkey());
                case "kind" -> text("NULL");
                default -> throw l.error("a null MR has the fields lkey, rkey and kind, not '" + field + "'");
            };
            default -> throw l.error("'" + base + "' has no value");
        };
    }

    private static Val num(final long n)
    {
        return new Val(n, null, null, null, null);
    }

    private static Val text(final String t)
    {
        return new Val(0, t, null, null, null);
    }

    /**
     * A field of an MR over GPU memory: the MR fields (nothing pinned in host memory), its BAR1 mapping, the
     * move_notify calls it received, the faults that re-mapped it, whether it was revoked.
     */
    static long peerField(final SimPeerMr m, final String field)
    {
        return switch (field)
        {
            case "addr" -> m.addr();
            case "length" -> m.lengthBytes();
            case "iova" -> m.iova();
            case "lkey" -> m.lkey() & 0xffffffffL;
            case "rkey" -> m.rkey() & 0xffffffffL;
            case "page_size" ->
            {
                final int shift = m.pd().context().device().tables().pageShift(m.lkey());
                yield shift < 0 ? 0 : 1L << shift;
            }
            case "mtt_entries", "mtt_reserved" -> m.mttEntries();
            case "index" -> (m.lkey() >>> 8) & 0xffffff;
            case "variant" -> m.lkey() & 0xff;
            case "closed" -> m.isClosed() ? 1 : 0;
            case "page_faults" -> m.pageFaults();
            case "moves" -> m.moves();
            case "revoked" -> m.isRevoked() ? 1 : 0;
            case "bar1" -> m.bar1MappedBytes();
            default -> 0;
        };
    }

    static long gpuField(final SimGpu g, final String field)
    {
        return switch (field)
        {
            case "vram" -> g.vramBytes();
            case "vram_used" -> g.vramUsedBytes();
            case "bar1" -> g.bar1Bytes();
            case "bar1_used" -> g.bar1UsedBytes();
            default -> g.buffers().size();
        };
    }

    static long gpuBufferField(final GpuBuffer b, final String field)
    {
        return switch (field)
        {
            case "addr" -> b.gpuVa();
            case "length" -> b.sizeBytes();
            case "vram_offset" -> b.vramOffset();
            default -> b.isFreed() ? 1 : 0;
        };
    }

    private Val last(final ScriptLine l, final String field)
    {
        final WorkCompletion wc = lastCompletions.isEmpty() ? null : lastCompletions.get(0);
        return switch (field)
        {
            case "duration_ns" -> num(lastDurationNs);
            case "count" -> num(lastCount);
            case "completions" -> num(lastCompletions.size());
            case "status" -> new Val(0, wc == null ? "NONE" : wc.status().name(), null, null, null);
            case "byte_len" -> num(wc == null ? 0 : wc.byteLen());
            case "imm" -> num(wc == null ? 0 : wc.immData() & 0xffffffffL);
            case "wr_id" -> num(wc == null ? 0 : wc.wrId());
            case "invalidated_rkey" -> num(wc == null || !wc.withInv() ? 0 : wc.invalidatedRkey() & 0xffffffffL);
            case "src_qp" -> num(wc == null ? 0 : wc.srcQp() & 0xffffffffL);
            case "wc_flags" -> num(wc == null ? 0 : wc.wcFlags());
            case "grh" -> num(wc != null && wc.withGrh() ? 1 : 0);
            case "slid" -> num(wc == null ? 0 : wc.slid());
            case "sl" -> num(wc == null ? 0 : wc.sl());
            case "pkey_index" -> num(wc == null ? 0 : wc.pkeyIndex());
            case "dlid_path_bits" -> num(wc == null ? 0 : wc.dlidPathBits());
            case "rereg_error" -> new Val(0, lastReregError, null, null, null);
            default -> throw l.error("last has no field '" + field + "'");
        };
    }

    private static Val bufferField(final Buffer b, final String field)
    {
        final UserProcess p = b.process();
        final long phys = p.exited() ? -1 : p.translate(b.addr());
        final PhysicalMemory pm = p.host().physicalMemory();
        return num(switch (field)
        {
            case "phys" -> phys;
            case "page_size" ->
            {
                final PageSize s = p.exited() ? null : p.mappedPageSize(b.addr());
                yield s == null ? 0 : s.bytes();
            }
            case "length" -> b.lengthBytes();
            case "pin_count" -> phys < 0 ? 0 : pm.pinCount(phys >>> PhysicalMemory.FRAME_SHIFT);
            case "map_count" -> phys < 0 ? 0 : pm.mapCount(phys >>> PhysicalMemory.FRAME_SHIFT);
            default -> 0;
        });
    }

    /** The key variant width of the device of a PD (8 on most drivers, 16 on hfi1's rdmavt lkeys). */
    private static int variantBits(final dev.rnicsim.simnic.SimPd pd)
    {
        return pd.context().device().profile().traits().keyVariantBits();
    }

    /** @return the MPT index a key of the device of a PD names ({@link dev.rnicsim.mtt.MKey#index}). */
    static long keyIndex(final dev.rnicsim.simnic.SimPd pd, final int key)
    {
        return dev.rnicsim.mtt.MKey.index(key, variantBits(pd));
    }

    /** @return the variant (the consumer-owned low bits) of a key of the device of a PD. */
    static int keyVariant(final dev.rnicsim.simnic.SimPd pd, final int key)
    {
        return dev.rnicsim.mtt.MKey.variant(key, variantBits(pd));
    }

    static long mrField(final SimMr m, final String field)
    {
        return switch (field)
        {
            case "addr" -> m.addr();
            case "length" -> m.lengthBytes();
            case "iova" -> m.iova();
            case "lkey" -> m.lkey() & 0xffffffffL;
            case "rkey" -> m.rkey() & 0xffffffffL;
            case "page_size" -> m.pageSizeBytes();
            case "mtt_entries" -> m.mttEntries();
            case "mtt_reserved" -> m.mttEntriesReserved();
            case "pinned_pages" -> m.pinnedPages();
            case "index" -> keyIndex(m.pd(), m.lkey());
            case "variant" -> keyVariant(m.pd(), m.lkey());
            case "closed" -> m.isClosed() ? 1 : 0;
            default -> 0;
        };
    }

    /**
     * A field of an on-demand-paging MR: the MR fields (nothing pinned; MTT entries as {@link OdpPages#mttEntries})
     * and its ODP figures.
     */
    static long odpField(final SimOdpMr m, final String field)
    {
        return switch (field)
        {
            case "addr" -> m.addr();
            case "length" -> m.lengthBytes();
            case "iova" -> m.iova();
            case "lkey" -> m.lkey() & 0xffffffffL;
            case "rkey" -> m.rkey() & 0xffffffffL;
            case "page_size" -> 1L << m.pageShift();
            case "mtt_entries", "mtt_reserved" -> OdpPages.mttEntries(m);
            case "index" -> (m.lkey() >>> 8) & 0xffffff;
            case "variant" -> m.lkey() & 0xff;
            case "closed" -> m.isClosed() ? 1 : 0;
            case "odp" -> 1;
            case "implicit" -> m.isImplicit() ? 1 : 0;
            case "page_faults" -> m.pageFaults();
            case "entries_mapped" -> m.entriesMapped();
            case "entries_zapped" -> m.entriesZapped();
            case "children" -> m.implicitChildren();
            case "mapped_pages" -> OdpPages.mappedBlocks(m);
            default -> 0;
        };
    }

    static long fragmentField(final MemoryPool.Fragment f, final String field)
    {
        return switch (field)
        {
            case "addr" -> f.addr();
            case "length" -> f.lengthBytes();
            case "lkey" -> f.lkey() & 0xffffffffL;
            case "rkey" -> f.rkey() & 0xffffffffL;
            default -> 0;
        };
    }

    static long handleField(final HandleBinding h, final String field)
    {
        return switch (field)
        {
            case "addr" -> h.addr();
            case "length" -> h.lengthBytes();
            case "lkey" -> h.handle().lkey() & 0xffffffffL;
            case "rkey" -> h.handle().rkey() & 0xffffffffL;
            case "hit" -> h.hit() ? 1 : 0;
            default -> 0;
        };
    }

    /**
     * A field of a pool or a cache: its counters, and {@code fragments} (a pool's fragments out) or {@code idle}
     * (a cache's idle entries), both given as {@code extra}.
     */
    static long strategyField(final StrategyCounters c, final long extra, final String field)
    {
        return switch (field)
        {
            case "hits" -> c.hits();
            case "misses" -> c.misses();
            case "evictions" -> c.evictions();
            case "invalidations" -> c.invalidations();
            case "registrations" -> c.registrations();
            case "bytes_registered" -> c.bytesRegistered();
            case "live" -> c.liveMrs();
            case "live_bytes" -> c.liveBytes();
            case "fragments", "idle" -> extra;
            default -> 0;
        };
    }

    static long fastMrField(final SimFastRegMr f, final String field)
    {
        return switch (field)
        {
            case "addr", "iova" -> f.addr();
            case "length" -> f.lengthBytes();
            case "lkey" -> f.lkey() & 0xffffffffL;
            case "rkey" -> f.rkey() & 0xffffffffL;
            case "index" -> (f.lkey() >>> 8) & 0xffffff;
            case "variant" -> f.lkey() & 0xff;
            case "max_num_sg" -> f.maxNumSg();
            case "valid" -> f.isValid() ? 1 : 0;
            case "closed" -> f.isClosed() ? 1 : 0;
            default -> 0;
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
        if (w.access().contains(dev.rnicsim.verbs.Access.ZERO_BASED))
        {
            return new Val(0, null, null, null, w);
        }
        return new Val(w.addr(), null, w.boundMr().pd().context().process(), null, w);
    }

    static long mwField(final SimMw w, final String field)
    {
        return switch (field)
        {
            case "rkey" -> w.rkey() & 0xffffffffL;
            case "type" -> w.type().code();
            case "index" -> (w.rkey() >>> 8) & 0xffffff;
            case "variant" -> w.rkey() & 0xff;
            case "bound" -> w.isBound() ? 1 : 0;
            case "addr" -> w.addr();
            case "length" -> w.lengthBytes();
            case "qp" -> w.boundQp() == null ? 0 : w.boundQp().qpNum();
            case "closed" -> w.isClosed() ? 1 : 0;
            default -> 0;
        };
    }

    private static Val qpField(final SimQp q, final String field)
    {
        return switch (field)
        {
            case "num" -> num(q.qpNum());
            case "state" -> new Val(0, q.state().name(), null, null, null);
            case "receives" -> num(q.receivesPosted());
            case "sends_waiting" -> num(q.sendsWaiting());
            case "type" -> new Val(0, q.type().name(), null, null, null);
            default -> qpAttrField(q.query(), field);
        };
    }

    /** The fields of ibv_query_qp's answer. */
    private static Val qpAttrField(final dev.rnicsim.verbs.QpAttr a, final String field)
    {
        return num(switch (field)
        {
            case "qkey" -> a.qkey() & 0xffffffffL;
            case "dest_qpn" -> a.destQpNum();
            case "path_mtu" -> dev.rnicsim.verbs.QpAttr.mtuBytes(a.pathMtu());
            case "access" -> dev.rnicsim.verbs.Access.toBits(a.qpAccessFlags());
            case "port" -> a.portNum();
            case "sq_psn" -> a.sqPsn();
            case "rq_psn" -> a.rqPsn();
            case "min_rnr_timer" -> a.minRnrTimer();
            case "timeout" -> a.timeout();
            case "max_rd_atomic" -> a.maxRdAtomic();
            case "max_dest_rd_atomic" -> a.maxDestRdAtomic();
            default -> 0;
        });
    }

    static long processField(final UserProcess p, final String field)
    {
        return switch (field)
        {
            case "pinned_vm" -> p.pinnedVmPages();
            case "pinned_vm_bytes" -> p.pinnedVmPages() << p.host().config().basePage().shift();
            case "locked_vm" -> p.lockedVmPages();
            case "memlock" -> p.rlimitMemlockBytes();
            case "vmas" -> p.exited() ? 0 : p.vmas().size();
            case "pid" -> p.pid();
            case "exited" -> p.exited() ? 1 : 0;
            case "max_map_count" -> p.host().config().maxMapCount();
            default -> 0;
        };
    }

    private static long deviceField(final ScriptLine l, final SimDevice d, final String field)
    {
        if (field == null)
        {
            throw l.error("a device has no value of its own; use a field, e.g. " + d.hcaId() + ".sim_mr_live");
        }
        for (final SimCounter c : SimCounter.values())
        {
            if (c.label().equals(field))
            {
                return d.counter(c);
            }
        }
        if (dev.rnicsim.simnic.HwCounters.known(field))
        {
            return dev.rnicsim.simnic.HwCounters.value(d, field);
        }
        final MttCounters m = d.tables().mtt().counters();
        return switch (field)
        {
            case "mtt_capacity" -> m.capacityEntries();
            case "mtt_free" -> m.entriesFree();
            case "mtt_largest_free" -> m.largestFreeBlock();
            case "mtt_requested" -> m.entriesRequested();
            case "max_mr" -> d.attributes().maxMr();
            case "cache_entries" -> d.profile().cacheEntries();
            case "page_size_cap" -> d.attributes().pageSizeCap();
            case "relaxed_ordering" -> d.profile().relaxedOrdering() ? 1 : 0;
            case "chunks_placed" -> d.writeOrdering().chunksPlaced();
            case "chunks_reordered" -> d.writeOrdering().chunksReordered();
            case "write_overtakes" -> d.writeOrdering().overtakes();
            case "chunks_in_flight" -> d.writeOrdering().inFlight();
            default ->
            {
                final Long v = DeviceFields.value(d, field);
                if (v == null)
                {
                    throw l.error("a device has no field '" + field + "'; ibv_query_device_ex and ibv_query_port "
                        + "fields: " + DeviceFields.names());
                }
                yield v;
            }
        };
    }

    private static long vmEvent(final ScriptLine l, final Host h, final String field)
    {
        for (final dev.rnicsim.pagetable.VmEvent e : dev.rnicsim.pagetable.VmEvent.values())
        {
            if (e.procName().equals(field))
            {
                return h.counter(e);
            }
        }
        throw l.error("a host has no field '" + field + "'");
    }

    /** {@code hugepages_free_SIZE} and {@code hugepages_total_SIZE}: 0 for a size the host has no pool of. */
    private static long hugepagesField(final ScriptLine l, final Host h, final String field)
    {
        final String word = field.substring(field.lastIndexOf('_') + 1);
        for (final PageSize size : PageSize.values())
        {
            if (size.word().equals(word))
            {
                final boolean known = size == PageSize.SIZE_2M || size == PageSize.SIZE_1G
                    || h.config().basePage().hugetlbSizes().contains(size);
                return !known ? 0 : field.startsWith("hugepages_free_") ? h.hugepagesFree(size) : h.hugepagesTotal(size);
            }
        }
        throw l.error("a host has no field '" + field + "'");
    }

    private static long hostField(final ScriptLine l, final Host h, final String field)
    {
        final PhysicalMemory pm = h.physicalMemory();
        return switch (field)
        {
            case "mem_total" -> pm.totalFrames() << 12;
            case "mem_free" -> pm.freeFrames() << 12;
            case "mem_used" -> pm.usedFrames() << 12;
            default -> field.startsWith("hugepages_") ? hugepagesField(l, h, field) : vmEvent(l, h, field);
        };
    }
}
