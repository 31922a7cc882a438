package dev.rnicsim.keys;

import dev.rnicsim.keys.WorldModel.Buf;
import dev.rnicsim.keys.WorldModel.KeyName;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.keys.WorldModel.PdM;
import dev.rnicsim.keys.WorldModel.Ring;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One simulated world of the key-lifecycle suites under one key variant policy: two hosts, alpha (the requester: a
 * process with a registered scratch buffer, QPs, a CQ) and beta (the target: process app_b, whose memory, MRs,
 * windows, PDs and context the actions change), and beside them the test's reference model of beta: its address space
 * page by page (which frame each page maps, shared copy-on-write or not, swapped out or not), the frames with their
 * bytes, map counts and pins, the MRs with the frames they pinned, the windows, the PDs and QP pairs, the rings
 * (CQs and QPs pin memory too), the MPT ({@link MptModel}), and every key ever issued.
 *
 * <p>Each action predicts its outcome from the model, writes the script lines that replay it (with the prediction
 * as {@code expect} lines), runs it on the simulator through the verbs API, compares, and updates the model. The
 * model follows the documented semantics (docs/java-api.md and the Linux and rdma-core sources the Javadoc names):
 * <ul>
 * <li>a pinned frame stays allocated, with its bytes, until unpinned: after munmap or MADV_DONTNEED the MR keeps its
 * old frames while the address faults in new ones;</li>
 * <li>fork shares private pages copy-on-write; a MODERN kernel copies pinned pages for the child at fork, a LEGACY one
 * shares them, so the parent's next write moves its address away from the pinned frame; a read-only pin of a shared
 * page (or of the zero page) unshares it first on a MODERN kernel only;</li>
 * <li>reclaim swaps out only exclusive unpinned pages and compaction moves only unpinned ones; the bytes at every
 * address survive both.</li>
 * </ul>
 * This class holds the simulator's objects, the model's MRs, windows, PDs, buffers and keys, and the bookkeeping of the
 * steps (script lines, expectations, keys issued); its parts act on it: {@link BetaMemory} (the model of app_b's
 * memory), {@link MemoryVerbs}, {@link Connections} (PDs, the context and QP pairs), {@link Registrations},
 * {@link Windows}, {@link RemoteAccess} and {@link WorldChecks}; {@link Holders} finds the MR or window holding a
 * key. Not thread safe.
 */
final class KeyWorld
{
    static final long PAGE = 4096;
    static final long SCRATCH_BYTES = PAGE;
    static final int CQ_ENTRIES = 64;
    /** A CQ of 64 entries: mlx5 rounds up to 128 CQEs of 64 bytes (SimContext.createCq): 2 pages. */
    static final int CQ_RING_PAGES = 2;
    /** The script's default QP caps: 64 send WRs of 128 bytes (4 SGEs, 64 bytes inline) + 64 receive WRs of 64. */
    static final QpCap QP_CAP = new QpCap(64, 64, 4, 4, 64);
    /** 64 x 128 + 64 x 64 bytes: 3 pages. */
    static final int QP_RING_PAGES = 3;
    static final Set<Access> QP_RIGHTS = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    /** Rights that pin for writing (ib_access_writable). */
    static final Set<Access> WRITABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC,
        Access.MW_BIND);

    /** How a verb ended: "ok" or an errno name; the completion status of a work request. */
    record Result(String errno, Throwable thrown)
    {
        boolean ok()
        {
            return errno.equals("ok");
        }
    }

    // ------------------------------------------------------------------ state

    /** The parts that act on this world and check it (each reads and changes its state). */
    final BetaMemory memory = new BetaMemory(this);
    final MemoryVerbs memoryVerbs = new MemoryVerbs(this);
    final Connections connections = new Connections(this);
    final Registrations registrations = new Registrations(this);
    final Windows windows = new Windows(this);
    final RemoteAccess remoteAccess = new RemoteAccess(this);
    final WorldChecks checks = new WorldChecks(this);

    final VariantPolicy policy;
    final ChainParams params;
    final Script script = new Script();
    final MptModel mpt;
    final ReuseStats stats;

    final SimFabric fabric = new SimFabric();
    final SimHost hostA;
    final SimHost hostB;
    final SimDevice nicA;
    final SimDevice nicB;
    final SimContext ctxA;
    final ProtectionDomain pdA;
    final CompletionQueue cqA;
    final UserProcess appA;
    final long scratch;
    final MemoryRegion smr;
    final UserProcess appB;
    SimContext ctxB;
    String ctxName;
    CompletionQueue cqB;
    String cqName;
    Ring cqRing;
    final Map<String, Buf> bufs = new LinkedHashMap<>();
    final Map<String, MrM> mrs = new LinkedHashMap<>();
    final Map<String, MwM> mws = new LinkedHashMap<>();
    final Map<Integer, PdM> pds = new TreeMap<>();
    /** Every key issued, by the label N of its name kN (labels are unique in a chain, not consecutive). */
    final Map<Integer, KeyName> keys = new LinkedHashMap<>();
    /**
     * The values of {@link #mrs}, {@link #mws} and {@link #keys} in their order, to walk (the invariants walk them
     * after every action, which a LinkedHashMap's iterators made slower); changed only through {@link #putMr},
     * {@link #putWindow} and {@link #issueKey}.
     */
    final List<MrM> mrList = new ArrayList<>();
    final List<MwM> mwList = new ArrayList<>();
    final List<KeyName> keyList = new ArrayList<>();
    /** The values of {@link #pds} in its order (by index); changed only through {@link #putPd}. */
    final List<PdM> pdList = new ArrayList<>();
    final java.util.HashSet<String> bound = new java.util.HashSet<>();
    final byte[] scratchModel = new byte[(int)SCRATCH_BYTES];
    long nextWrId = 1;
    Script.Step step;
    /** What the last step was, a String or a {@link Script.Line}: for failure messages. */
    Object current = "setup";

    KeyWorld(final VariantPolicy policy, final ChainParams params, final ReuseStats stats)
    {
        this.policy = policy;
        this.params = params;
        this.stats = stats;
        this.mpt = new MptModel(policy, Math.min(params.maxMr() + 1, 1 << 24));
        script.header.addAll(WorldSetup.header(policy, params));
        hostA = fabric.addHost("alpha", WorldSetup.HOST_A);
        hostB = fabric.addHost("beta", WorldSetup.hostB(params));
        nicA = hostA.addDevice("sim:alpha/nic_a", DeviceProfiles.byName("connectx5"));
        nicB = hostB.addDevice("sim:beta/nic_b", WorldSetup.profileB(params, policy));
        appA = hostA.host().spawn("app_a");
        appA.rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        appA.capIpcLock(false);
        ctxA = nicA.open(appA);
        pdA = ctxA.allocPd();
        cqA = ctxA.createCq(CQ_ENTRIES);
        scratch = mmap4k(appA, SCRATCH_BYTES);
        smr = pdA.regMr(scratch, SCRATCH_BYTES, EnumSet.of(Access.LOCAL_WRITE));
        appB = hostB.host().spawn("app_b");
        appB.rlimitMemlockBytes(params.memlockBytes());
        appB.capIpcLock(false);
        ctxB = nicB.open(appB);
        ctxName = "ctx_b0";
        final List<Vma> before = appB.vmas();
        cqB = ctxB.createCq(CQ_ENTRIES);
        cqName = "cq_b0";
        cqRing = memory.newRing(before, CQ_RING_PAGES, "cq_b0");
        final PdM pd0 = new PdM(0);
        pd0.sim = (SimPd)ctxB.allocPd();
        pd0.live = true;
        putPd(pd0);
        bound.addAll(List.of("ctx_b0", "cq_b0", "pd_b0"));
        current = "setup";
        checks.checkInvariants();
    }

    private static final Set<MapFlag> PRIVATE_ANONYMOUS = Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS);

    /** The script's mmap with backing=4k: mmap, then MADV_NOHUGEPAGE over the length rounded up to 4 KiB. */
    static long mmap4k(final UserProcess p, final long len)
    {
        final long a = p.mmap(0, len, Prot.READ_WRITE, PRIVATE_ANONYMOUS);
        p.madvise(a, (len + PAGE - 1) & -PAGE, Madvice.NOHUGEPAGE);
        return a;
    }

    // ------------------------------------------------------------------ steps and expectations

    Script.Step begin(final String line)
    {
        return begin0(line);
    }

    /** Begins a step whose line is made only when the script is read. */
    Script.Step begin(final Script.Line line)
    {
        return begin0(line);
    }

    private Script.Step begin0(final Object line)
    {
        current = line;
        step = script.begin(line);
        return step;
    }

    /** Begins a step whose first line is the action's own. */
    Script.Step start(final String line)
    {
        begin0(line);
        step.lines.add(line);
        return step;
    }

    /** {@link #start(String)} with a line made only when the script is read. */
    Script.Step start(final Script.Line line)
    {
        begin0(line);
        step.lines.add(line);
        return step;
    }

    /** A step that does nothing in this run, with the reason as a comment. */
    void skipStep(final String line, final String why)
    {
        begin0(line);
        step.lines.add("# skipped: " + line + "   (" + why + ")");
    }

    /** {@link #skipStep(String, String)} with a line made only when the script is read. */
    void skipStep(final Script.Line line, final String why)
    {
        begin0(line);
        step.lines.add((Script.Line)() -> "# skipped: " + line.text() + "   (" + why + ")");
    }

    void line(final String l)
    {
        step.lines.add(l);
    }

    /** A line made only when the script is read (what it shows must not change once it is written). */
    void line(final Script.Line l)
    {
        step.lines.add(l);
    }

    /** An action whose names this run never bound (a creation failed here but not in the reference run). */
    boolean skipUnbound(final String line, final String... names)
    {
        final String n = firstUnbound(names);
        if (n != null)
        {
            skipStep(line, n + " was never created in this run");
            return true;
        }
        return false;
    }

    /** {@link #skipUnbound(String, String...)} with a line made only when the script is read. */
    boolean skipUnbound(final Script.Line line, final String... names)
    {
        final String n = firstUnbound(names);
        if (n != null)
        {
            skipStep(line, n + " was never created in this run");
            return true;
        }
        return false;
    }

    private String firstUnbound(final String... names)
    {
        for (final String n : names)
        {
            if (!bound.contains(n))
            {
                return n;
            }
        }
        return null;
    }

    /** Whether pd_bN was bound (every PD of {@link #pds} was; not building its name). */
    boolean pdBound(final int index)
    {
        return pds.containsKey(index);
    }

    /** Whether kN was bound (every key of {@link #keys} was; not building its name). */
    boolean keyBound(final int label)
    {
        return keys.containsKey(label);
    }

    AssertionError failure(final String what)
    {
        return failure(Mismatch.Kind.STATE, what);
    }

    AssertionError failure(final Mismatch.Kind kind, final String what)
    {
        return Mismatch.of(kind, "[keys=" + policy + ", " + params + "] " + Script.text(current) + ": " + what, null);
    }

    void expectEqual(final Object expected, final Object actual, final String what)
    {
        expectEqual(Mismatch.Kind.STATE, expected, actual, what);
    }

    void expectEqual(final Mismatch.Kind kind, final Object expected, final Object actual, final String what)
    {
        if (!java.util.Objects.equals(expected, actual))
        {
            throw failure(kind, what + ": expected " + expected + ", got " + actual);
        }
    }

    /** {@link #expectEqual(Object, Object, String)} of numbers, boxed only on a failure. */
    void expectEqual(final long expected, final long actual, final String what)
    {
        if (expected != actual)
        {
            throw failure(Mismatch.Kind.STATE, what + ": expected " + expected + ", got " + actual);
        }
    }

    /** {@link #expectEqual(long, long, String)} naming its subject in three parts, joined only on a failure. */
    void expectEqual(final long expected, final long actual, final String what1, final String what2,
        final String what3)
    {
        if (expected != actual)
        {
            expectEqual(expected, actual, what1 + what2 + what3);
        }
    }

    /** {@link #expectEqual(Object, Object, String)} naming its subject in three parts, joined only on a failure. */
    void expectEqual(final Object expected, final Object actual, final String what1, final String what2,
        final String what3)
    {
        if (!java.util.Objects.equals(expected, actual))
        {
            expectEqual(expected, actual, what1 + what2 + what3);
        }
    }

    /** A verb that ended well (a result holds no state: one for all). */
    private static final Result OK = new Result("ok", null);

    static Result run(final Runnable r)
    {
        try
        {
            r.run();
            return OK;
        }
        catch (final VerbsException e)
        {
            return new Result(e.errnoName().name(), e);
        }
        catch (final KernelException e)
        {
            return new Result(e.errno().name(), e);
        }
    }

    void expectOutcome(final String predicted, final Result r)
    {
        if (!predicted.equals(r.errno()))
        {
            final AssertionError e = failure(Mismatch.Kind.OUTCOME, "the model expected " + predicted
                + ", the simulator gave " + r.errno()
                + (r.thrown() == null ? "" : " (" + r.thrown().getMessage() + ")"));
            if (r.thrown() != null)
            {
                e.initCause(r.thrown());
            }
            throw e;
        }
    }

    /** Writes "expect ERRNO" for a predicted failure (the runner stops at a failing step without one). */
    void expectLine(final String predicted)
    {
        if (!predicted.equals("ok"))
        {
            line(() -> "expect " + predicted);
        }
    }

    long pinnedVmModel()
    {
        long n = 0;
        for (final MrM m : mrList)
        {
            if (m.live)
            {
                n += m.pages();
            }
        }
        for (final Ring r : memory.rings)
        {
            n += r.pages;
        }
        return n;
    }

    /**
     * A bug planted in the model, for the test that the chains still find and minimize one
     * ({@link PlantedBugTest}): with four or more live MRs the model expects one MTT entry too many.
     */
    static volatile boolean plantedMttBug;

    long mttModel()
    {
        long n = 0;
        int live = 0;
        for (final MrM m : mrList)
        {
            if (m.live)
            {
                n += m.reserved;
                live++;
            }
        }
        return plantedMttBug && live >= 4 ? n + 1 : n;
    }

    long liveMrs()
    {
        long n = 0;
        for (final MrM m : mrList)
        {
            n += m.live ? 1 : 0;
        }
        return n;
    }

    long liveWindows()
    {
        long n = 0;
        for (final MwM w : mwList)
        {
            n += w.live ? 1 : 0;
        }
        return n;
    }

    /** The live MRs and windows now, to find many keys' holders as {@link #holderOf} does. */
    Holders liveHolders()
    {
        return Holders.live(mrList, mwList);
    }

    /** The live MR or window whose key is exactly {@code key}, or null. */
    Object holderOf(final int key)
    {
        return Holders.holderOf(mrList, mwList, key);
    }

    long bufAddr(final String buf)
    {
        return bufs.get(buf).addr();
    }

    // ------------------------------------------------------------------ key bookkeeping

    /**
     * Names a key {@code kN}: {@code let kN ISSUER.FIELD}, or {@code let kN 0} when {@code field} is null (nothing was
     * issued).
     */
    void issueKey(final int n, final String issuedBy, final String field, final int value, final long lo,
        final long len, final boolean mrKey)
    {
        if (keys.containsKey(n))
        {
            throw new IllegalStateException("key name k" + n + " issued twice");
        }
        final KeyName k = new KeyName(n, value, issuedBy, lo, len, mrKey);
        line(() -> "let " + k.name + " " + (field == null ? "0" : issuedBy + "." + field)
            + (value == 0 ? "" : "   # " + Script.key(value)));
        keys.put(n, k);
        keyList.add(k);
        bound.add(k.name);
    }

    /** Adds a PD to the model under its index (in {@link #pds} and, in index order, {@link #pdList}). */
    void putPd(final PdM pd)
    {
        final PdM old = pds.put(pd.index, pd);
        if (old != null)
        {
            pdList.set(pdList.indexOf(old), pd);
            return;
        }
        int at = pdList.size();
        while (at > 0 && pdList.get(at - 1).index > pd.index)
        {
            at--;
        }
        pdList.add(at, pd);
    }

    /** Adds an MR to the model under its name (in {@link #mrs} and {@link #mrList}). */
    void putMr(final MrM m)
    {
        final MrM old = mrs.put(m.name, m);
        if (old == null)
        {
            mrList.add(m);
        }
        else
        {
            mrList.set(mrList.indexOf(old), m);
        }
    }

    /** Adds a window to the model under its name (in {@link #mws} and {@link #mwList}). */
    void putWindow(final MwM w)
    {
        final MwM old = mws.put(w.name, w);
        if (old == null)
        {
            mwList.add(w);
        }
        else
        {
            mwList.set(mwList.indexOf(old), w);
        }
    }

    /** An MR stopped holding {@code key}: its stale names start counting reuses of the index. */
    void mrKeyDied(final int key)
    {
        for (final KeyName k : keyList)
        {
            if (k.mrKey && k.value == key && k.allocationsAtDeath < 0)
            {
                k.allocationsAtDeath = mpt.allocations(MptModel.index(key));
            }
        }
    }

    /**
     * Checks a key the device handed out against the policy; on a difference the script gets the model's expectation
     * ({@code expect NAME.FIELD == KEY}, or the index or variant for RANDOM) so that its replay fails there too.
     */
    void allocatedKey(final String name, final String field, final int key, final boolean window)
    {
        final int expected = mpt.predict(window);
        final int index = mpt.nextIndex();
        final String problem = mpt.allocated(key, window);
        if (problem != null)
        {
            if (expected >= 0)
            {
                line("expect " + name + "." + field + " == " + Script.key(expected) + "   # the model's key");
            }
            else if (MptModel.index(key) != index)
            {
                line("expect " + name + ".index == " + index + "   # the model's MPT index");
            }
            else
            {
                line("expect " + name + ".variant != " + MptModel.variantOf(key) + "   # RANDOM excludes the index's "
                    + "previous variant");
            }
            throw failure(Mismatch.Kind.KEY, "the device handed out key " + Script.key(key) + "; the model expected "
                + problem);
        }
    }

    /** @return the script of this run with the model's invariants after its last step. */
    String replayScript()
    {
        return script.render(false);
    }
}

