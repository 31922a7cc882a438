package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.FlagWatch;
import dev.rnicsim.simnic.GpuBuffer;
import dev.rnicsim.simnic.SimContext;
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
import dev.rnicsim.verbs.AsyncEvent;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The state of one script run: the fabric, what each name is bound to, and what the last step left to check
 * ({@code last.*}). Evaluates value expressions: the sum here, each term in {@link Evaluator}, the fields of names in
 * {@link MrFields} and {@link HostFields}. Not thread safe.
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

        /** @return a number. */
        static Val of(final long n)
        {
            return new Val(n, null, null, null, null);
        }

        /** @return a text (a QP state, a completion status, a rereg error). */
        static Val ofText(final String t)
        {
            return new Val(0, t, null, null, null);
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
    final Path baseDir;
    long lastDurationNs;
    long lastCount;
    List<WorkCompletion> lastCompletions = List.of();
    /** What the last {@code events} returned. */
    List<AsyncEvent> lastEvents = List.of();
    long nextWrId = 1;
    /** How the last {@code rereg} failed: ERR_INPUT or ERR_CMD, or NONE when it succeeded (or none ran). */
    String lastReregError = "NONE";
    /** The GPU virtual address of the first byte of each MR over GPU memory (a dma-buf MR's iova may differ). */
    final Map<SimPeerMr, Long> peerFirstVa = new HashMap<>();

    Session(final Path baseDir)
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
            final Val v = Evaluator.term(this, l, t.text());
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

    /** Evaluates an amount (bytes, pages) that cannot be negative, as {@link #evalCount} refuses one. */
    long evalAmount(final ScriptLine l, final String expr, final String what)
    {
        final long v = evalNum(l, expr);
        if (v < 0)
        {
            throw l.error("'" + expr + "' is " + v + "; expected " + what + " of 0 or more");
        }
        return v;
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
}
