package dev.rnicsim.keys;

import static dev.rnicsim.keys.WorldModel.ZERO;

import dev.rnicsim.keys.WorldModel.Buf;
import dev.rnicsim.keys.WorldModel.Frame;
import dev.rnicsim.keys.WorldModel.KeyName;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.keys.WorldModel.Page;
import dev.rnicsim.keys.WorldModel.Pair;
import dev.rnicsim.keys.WorldModel.PdM;
import dev.rnicsim.keys.WorldModel.Qp;
import dev.rnicsim.keys.WorldModel.Ring;
import dev.rnicsim.mtt.MptEntry;
import dev.rnicsim.mtt.MptState;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

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
 * Not thread safe.
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
    private record Result(String errno, Throwable thrown)
    {
        boolean ok()
        {
            return errno.equals("ok");
        }
    }

    // ------------------------------------------------------------------ state

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

    /** The model's pages of app_b; every put or remove counts in {@link #pagesVersion}. */
    final TreeMap<Long, Page> pages = new TreeMap<>();
    /** Changes to {@link #pages}. */
    private long pagesVersion;
    /** app_b's VMAs and {@link #pagesVersion} when they last matched (the VMA list is null until then). */
    private List<Vma> pagesMatchedVmas;
    private long pagesMatchedVersion = -1;
    final Map<String, Buf> bufs = new LinkedHashMap<>();
    final Map<String, MrM> mrs = new LinkedHashMap<>();
    final Map<String, MwM> mws = new LinkedHashMap<>();
    final Map<Integer, PdM> pds = new TreeMap<>();
    /** Every key issued, by the label N of its name kN (labels are unique in a chain, not consecutive). */
    final Map<Integer, KeyName> keys = new LinkedHashMap<>();
    final List<Ring> rings = new ArrayList<>();
    final java.util.HashSet<String> bound = new java.util.HashSet<>();
    final byte[] scratchModel = new byte[(int)SCRATCH_BYTES];
    private long nextWrId = 1;
    private Script.Step step;
    /** What the last step was: for failure messages. */
    private String current = "setup";

    KeyWorld(final VariantPolicy policy, final ChainParams params, final ReuseStats stats)
    {
        this.policy = policy;
        this.params = params;
        this.stats = stats;
        this.mpt = new MptModel(policy, Math.min(params.maxMr() + 1, 1 << 24));
        script.header.addAll(HEADERS.computeIfAbsent(List.of(policy, params), k -> header(policy, params)));
        hostA = fabric.addHost("alpha", HOST_A);
        hostB = fabric.addHost("beta", HOST_B.computeIfAbsent(params.fork(), f -> HostConfig.builder()
            .physicalMemoryBytes(256L << 20).swapBytes(64L << 20).forkBehaviour(f).aged(false).build()));
        nicA = hostA.addDevice("sim:alpha/nic_a", DeviceProfiles.byName("connectx5"));
        nicB = hostB.addDevice("sim:beta/nic_b", PROFILE_B.computeIfAbsent(List.of(params.buddyMtt(),
            params.maxMr(), policy), k -> profileB(params, policy)));
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
        cqRing = newRing(before, CQ_RING_PAGES, "cq_b0");
        final PdM pd0 = new PdM(0);
        pd0.sim = (SimPd)ctxB.allocPd();
        pd0.live = true;
        pds.put(0, pd0);
        bound.addAll(List.of("ctx_b0", "cq_b0", "pd_b0"));
        current = "setup";
        checkInvariants();
    }

    /** The scripts' headers by key policy and chain parameters (the same for every chain of both: made once each). */
    private static final Map<List<Object>, List<String>> HEADERS = new java.util.concurrent.ConcurrentHashMap<>();

    /** The lines of a script before its first step: hosts, devices, processes, the context, PD and CQ made here. */
    private static List<String> header(final VariantPolicy policy, final ChainParams params)
    {
        final String keysWord = policy.name().toLowerCase(Locale.ROOT);
        final List<String> h = new ArrayList<>();
        h.add("# rnic-sim key lifecycle (dev.rnicsim.keys): keys=" + keysWord + ", " + params);
        h.add("# replay: ./rnicsim run FILE   (exit 0: every expectation of the model held; 1: the simulator differs)");
        h.add("host alpha ram=256M memlock=unlimited");
        h.add("host beta ram=256M swap=64M fork=" + params.forkWord());
        h.add("device nic_a alpha profile=connectx5");
        h.add("device nic_b beta profile=connectx5" + (params.buddyMtt() ? " log_num_mtt=" + ChainParams.LOG_NUM_MTT
            + " log_mtts_per_seg=" + ChainParams.LOG_MTTS_PER_SEG : "") + " max_mr=" + params.maxMr() + " keys="
            + keysWord);
        h.add("open app_a nic_a");
        h.add("pd pd_a app_a");
        h.add("cq cq_a app_a");
        h.add("mmap scratch app_a 4K");
        h.add("reg smr pd_a scratch 4K");
        h.add("process app_b beta memlock=" + Script.size(params.memlockBytes()));
        h.add("open ctx_b0 nic_b process=app_b");
        h.add("cq cq_b0 ctx_b0");
        h.add("pd pd_b0 ctx_b0");
        return List.copyOf(h);
    }

    /** Host alpha's configuration (immutable: made once). */
    private static final HostConfig HOST_A = HostConfig.builder().physicalMemoryBytes(256L << 20).aged(false).build();
    /** Host beta's configuration by fork behaviour (immutable: made once each). */
    private static final Map<ForkBehaviour, HostConfig> HOST_B = new java.util.concurrent.ConcurrentHashMap<>();
    /** Device b's profile by MTT allocator, max_mr and key policy (immutable: made once each). */
    private static final Map<List<Object>, DeviceProfile> PROFILE_B = new java.util.concurrent.ConcurrentHashMap<>();

    private static DeviceProfile profileB(final ChainParams params, final VariantPolicy policy)
    {
        DeviceProfile p = DeviceProfiles.byName("connectx5");
        if (params.buddyMtt())
        {
            p = p.withMtt(dev.rnicsim.mtt.MttConfig.buddy(ChainParams.LOG_NUM_MTT, ChainParams.LOG_MTTS_PER_SEG));
        }
        p = p.withAttributes(p.attributes().toBuilder().maxMr(params.maxMr()).build());
        return p.withVariantPolicy(policy);
    }

    /** The script's mmap with backing=4k: mmap, then MADV_NOHUGEPAGE over the length rounded up to 4 KiB. */
    private static long mmap4k(final UserProcess p, final long len)
    {
        final long a = p.mmap(0, len, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
        p.madvise(a, (len + PAGE - 1) & -PAGE, Madvice.NOHUGEPAGE);
        return a;
    }

    // ------------------------------------------------------------------ steps and checks

    private Script.Step begin(final String line)
    {
        current = line;
        step = script.begin(line);
        return step;
    }

    /** Begins a step whose first line is the action's own. */
    private Script.Step start(final String line)
    {
        begin(line);
        step.lines.add(line);
        return step;
    }

    /** A step that does nothing in this run, with the reason as a comment. */
    private void skipStep(final String line, final String why)
    {
        begin(line);
        step.lines.add("# skipped: " + line + "   (" + why + ")");
    }

    private void line(final String l)
    {
        step.lines.add(l);
    }

    /** A line made only when the script is read (what it shows must not change once it is written). */
    private void line(final Script.Line l)
    {
        step.lines.add(l);
    }

    /** An action whose names this run never bound (a creation failed here but not in the reference run). */
    private boolean skipUnbound(final String line, final String... names)
    {
        for (final String n : names)
        {
            if (!bound.contains(n))
            {
                skipStep(line, n + " was never created in this run");
                return true;
            }
        }
        return false;
    }

    AssertionError failure(final String what)
    {
        return failure(Mismatch.Kind.STATE, what);
    }

    AssertionError failure(final Mismatch.Kind kind, final String what)
    {
        return Mismatch.of(kind, "[keys=" + policy + ", " + params + "] " + current + ": " + what, null);
    }

    private void expectEqual(final Object expected, final Object actual, final String what)
    {
        expectEqual(Mismatch.Kind.STATE, expected, actual, what);
    }

    private void expectEqual(final Mismatch.Kind kind, final Object expected, final Object actual, final String what)
    {
        if (!java.util.Objects.equals(expected, actual))
        {
            throw failure(kind, what + ": expected " + expected + ", got " + actual);
        }
    }

    /** {@link #expectEqual(Object, Object, String)} of numbers, boxed only on a failure. */
    private void expectEqual(final long expected, final long actual, final String what)
    {
        if (expected != actual)
        {
            throw failure(Mismatch.Kind.STATE, what + ": expected " + expected + ", got " + actual);
        }
    }

    /** {@link #expectEqual(long, long, String)} naming its subject in three parts, joined only on a failure. */
    private void expectEqual(final long expected, final long actual, final String what1, final String what2,
        final String what3)
    {
        if (expected != actual)
        {
            expectEqual(expected, actual, what1 + what2 + what3);
        }
    }

    /** {@link #expectEqual(Object, Object, String)} naming its subject in three parts, joined only on a failure. */
    private void expectEqual(final Object expected, final Object actual, final String what1, final String what2,
        final String what3)
    {
        if (!java.util.Objects.equals(expected, actual))
        {
            expectEqual(expected, actual, what1 + what2 + what3);
        }
    }

    private static Result run(final Runnable r)
    {
        try
        {
            r.run();
            return new Result("ok", null);
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

    private void expectOutcome(final String predicted, final Result r)
    {
        if (!predicted.equals(r.errno()))
        {
            final AssertionError e = failure(Mismatch.Kind.OUTCOME, "the model expected " + predicted + ", the simulator gave " + r.errno()
                + (r.thrown() == null ? "" : " (" + r.thrown().getMessage() + ")"));
            if (r.thrown() != null)
            {
                e.initCause(r.thrown());
            }
            throw e;
        }
    }

    /** Writes "expect ERRNO" for a predicted failure (the runner stops at a failing step without one). */
    private void expectLine(final String predicted)
    {
        if (!predicted.equals("ok"))
        {
            line(() -> "expect " + predicted);
        }
    }

    long pinnedVmModel()
    {
        long n = 0;
        for (final MrM m : mrs.values())
        {
            if (m.live)
            {
                n += m.pages();
            }
        }
        for (final Ring r : rings)
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
        for (final MrM m : mrs.values())
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
        for (final MrM m : mrs.values())
        {
            n += m.live ? 1 : 0;
        }
        return n;
    }

    long liveWindows()
    {
        long n = 0;
        for (final MwM w : mws.values())
        {
            n += w.live ? 1 : 0;
        }
        return n;
    }

    /** The invariants after every step: counters, tables and address space agree with the model. */
    void checkInvariants()
    {
        // The model's counters in one pass over the MRs (pinnedVmModel, liveMrs and mttModel each in one).
        long pinned = 0;
        long mrLive = 0;
        long reserved = 0;
        for (final MrM m : mrs.values())
        {
            if (m.live)
            {
                pinned += m.pages();
                mrLive++;
                reserved += m.reserved;
            }
        }
        for (final Ring r : rings)
        {
            pinned += r.pages;
        }
        final long mtt = plantedMttBug && mrLive >= 4 ? reserved + 1 : reserved;
        final long pinnedBytes = pinned * PAGE;
        if (step != null)
        {
            step.invariants = new long[] {pinned, mrLive, mtt, pinnedBytes};
        }
        expectEqual(pinned, appB.pinnedVmPages(), "pinned_vm of app_b (pages: live MR pins + CQ/QP rings)");
        expectEqual(mrLive, nicB.counter(SimCounter.MR_LIVE), "sim_mr_live");
        expectEqual(mtt, nicB.counter(SimCounter.MTT_ENTRIES_IN_USE),
            "sim_mtt_entries_in_use (sum of the live MRs' reserved MTT entries)");
        expectEqual(pinnedBytes, nicB.counter(SimCounter.PINNED_BYTES), "sim_pinned_bytes");
        final long mwLive = liveWindows();
        expectEqual(mwLive, nicB.tables().windowCount(), "memory windows in the tables");
        expectEqual(mpt.liveCount(), nicB.tables().mpt().inUse(), "MPT entries in use");
        expectEqual(mrLive + mwLive, nicB.tables().mpt().inUse(), "MPT entries = MRs + windows");
        // Every key ever issued: live in the tables iff the model has a live holder, with its fields.
        final Holders holders = liveHolders();
        for (final KeyName k : keys.values())
        {
            final MptEntry e = nicB.tables().mpt().entry(k.value);
            final Object holder = holders.of(k.value);
            if (holder == null)
            {
                if (e != null)
                {
                    throw failure(k.name + " = " + Script.key(k.value) + " (" + k.issuer + ") names a live MPT entry "
                        + e + ", the model none");
                }
                continue;
            }
            if (e == null)
            {
                throw failure(k.name + " = " + Script.key(k.value) + " should name " + describe(holder)
                    + " but names no live MPT entry");
            }
            if (holder instanceof MrM m)
            {
                expectEqual(m.pd.sim.pdNum(), e.pd(), k.name, ": PD of ", m.name);
                expectEqual(m.addr, e.iova(), k.name, ": iova of ", m.name);
                expectEqual(m.lengthBytes, e.lengthBytes(), k.name, ": length of ", m.name);
                expectEqual(Access.toBits(m.access), e.access(), k.name, ": access of ", m.name);
                expectEqual(MptState.VALID, e.state(), k.name, ": state of ", m.name);
            }
            else if (holder instanceof MwM w)
            {
                expectEqual(w.bound ? MptState.VALID : MptState.INVALID, e.state(), k.name, ": state of ", w.name);
                expectEqual(w.pd.sim.pdNum(), e.pd(), k.name, ": PD of ", w.name);
                if (w.bound)
                {
                    expectEqual(w.lo, e.iova(), k.name, ": start of ", w.name);
                    expectEqual(w.len, e.lengthBytes(), k.name, ": length of ", w.name);
                    expectEqual(Access.toBits(w.rights), e.access(), k.name, ": rights of ", w.name);
                }
            }
        }
        for (final MrM m : mrs.values())
        {
            if (m.live)
            {
                expectEqual(m.key, m.sim.lkey(), m.name, ".lkey", "");
                expectEqual(m.key, m.sim.rkey(), m.name, ".rkey (mlx5: rkey == lkey)", "");
                expectEqual(m.windows, m.sim.boundWindows(), m.name, ": windows bound", "");
                expectEqual((long)m.pages(), m.sim.pinnedPages(), m.name, ".pinned_pages", "");
            }
            else if (m.sim != null)
            {
                expectEqual(true, m.sim.isClosed(), m.name, " closed", "");
            }
        }
        for (final MwM w : mws.values())
        {
            if (w.sim == null)
            {
                continue;
            }
            expectEqual(!w.live, w.sim.isClosed(), w.name, " closed", "");
            if (w.live)
            {
                expectEqual(w.shownKey, w.sim.rkey(), w.name, ".rkey", "");
                expectEqual(w.bound, w.sim.isBound(), w.name, " bound", "");
            }
        }
        for (final PdM pd : pds.values())
        {
            if (pd.pair != null && !pd.pair.broken && pd.pair.qb.live)
            {
                expectEqual(QpState.RTS, pd.pair.qa.state(), "qa" + pd.index + ".state");
                expectEqual(QpState.RTS, pd.pair.qb.sim.state(), "qb" + pd.index + ".state");
            }
        }
        if (!mapsTheModelsPages())
        {
            final TreeSet<Long> sim = simPages();
            final TreeSet<Long> extra = new TreeSet<>(sim);
            extra.removeAll(pages.keySet());
            final TreeSet<Long> missing = new TreeSet<>(pages.keySet());
            missing.removeAll(sim);
            throw failure("app_b's mapped pages differ from the model: mapped but not in the model " + hexes(extra)
                + ", in the model but not mapped " + hexes(missing));
        }
    }

    private static String hexes(final Set<Long> vas)
    {
        return vas.stream().limit(8).map(v -> "0x" + Long.toHexString(v)).toList() + (vas.size() > 8 ? "..." : "");
    }

    private static String describe(final Object holder)
    {
        return holder instanceof MrM m ? "MR " + m.name : holder instanceof MwM w ? "window " + w.name : "nothing";
    }

    /** The pages app_b maps now, from its VMAs. */
    TreeSet<Long> simPages()
    {
        final TreeSet<Long> set = new TreeSet<>();
        for (final Vma v : appB.vmas())
        {
            for (long va = v.startAddress(); va < v.endAddress(); va += PAGE)
            {
                set.add(va);
            }
        }
        return set;
    }

    /**
     * Whether app_b's VMAs cover exactly the model's pages (what {@link #simPages} would say, without a set). When
     * neither side changed since the last comparison that held (the process hands out the same list of VMAs until
     * they change, and {@link #pagesVersion} counts the model's changes), that comparison's answer stands.
     */
    private boolean mapsTheModelsPages()
    {
        final List<Vma> vmas = appB.vmas();
        if (vmas == pagesMatchedVmas && pagesVersion == pagesMatchedVersion)
        {
            return true;
        }
        final java.util.Iterator<Long> model = pages.keySet().iterator();
        for (final Vma v : vmas)
        {
            for (long va = v.startAddress(); va < v.endAddress(); va += PAGE)
            {
                if (!model.hasNext() || model.next() != va)
                {
                    return false;
                }
            }
        }
        if (model.hasNext())
        {
            return false;
        }
        pagesMatchedVmas = vmas;
        pagesMatchedVersion = pagesVersion;
        return true;
    }

    /** The pages app_b maps now that no VMA of {@code before} (app_b's VMAs then, in address order) covered. */
    private TreeSet<Long> pagesSince(final List<Vma> before)
    {
        final TreeSet<Long> since = new TreeSet<>();
        int j = 0;
        for (final Vma v : appB.vmas())
        {
            for (long va = v.startAddress(); va < v.endAddress(); va += PAGE)
            {
                while (j < before.size() && before.get(j).endAddress() <= va)
                {
                    j++;
                }
                if (j == before.size() || before.get(j).startAddress() > va)
                {
                    since.add(va);
                }
            }
        }
        return since;
    }

    /** The live MRs and windows now, to find many keys' holders as {@link #holderOf} does. */
    Holders liveHolders()
    {
        return new Holders(mrs.values(), mws.values());
    }

    /**
     * The live MRs and windows of one moment, in the model's order, in arrays: a key's holder is found as
     * {@link #holderOf} finds it (an MR before a window), without walking the model's maps again or building one.
     */
    static final class Holders
    {
        private final MrM[] liveMrs;
        private final int mrCount;
        private final MwM[] liveWindows;
        private final int windowCount;

        Holders(final java.util.Collection<MrM> mrs, final java.util.Collection<MwM> mws)
        {
            liveMrs = new MrM[mrs.size()];
            int n = 0;
            for (final MrM m : mrs)
            {
                if (m.live)
                {
                    liveMrs[n++] = m;
                }
            }
            mrCount = n;
            liveWindows = new MwM[mws.size()];
            n = 0;
            for (final MwM w : mws)
            {
                if (w.live)
                {
                    liveWindows[n++] = w;
                }
            }
            windowCount = n;
        }

        /** The live MR or window whose key is exactly {@code key}, or null. */
        Object of(final int key)
        {
            for (int i = 0; i < mrCount; i++)
            {
                if (liveMrs[i].key == key)
                {
                    return liveMrs[i];
                }
            }
            for (int i = 0; i < windowCount; i++)
            {
                if (liveWindows[i].tableKey == key)
                {
                    return liveWindows[i];
                }
            }
            return null;
        }
    }

    /** The live MR or window whose key is exactly {@code key}, or null. */
    Object holderOf(final int key)
    {
        for (final MrM m : mrs.values())
        {
            if (m.live && m.key == key)
            {
                return m;
            }
        }
        for (final MwM w : mws.values())
        {
            if (w.live && w.tableKey == key)
            {
                return w;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ model of memory

    /** A new frame mapped once: a copy of {@code from}'s bytes, or zeros when null. */
    private static Frame newFrame(final Frame from)
    {
        final Frame f = new Frame(from == null ? null : from.copyOfBytes());
        f.mapCount = 1;
        return f;
    }

    private void swapIn(final Page p)
    {
        p.frame = newFrame(p.frame);
        p.swapped = false;
    }

    /** A CPU write fault (or the fault of a write pin): a private writable page. */
    private void writeFault(final Page p)
    {
        if (p.swapped)
        {
            swapIn(p);
        }
        if (p.frame == null || p.frame == ZERO)
        {
            p.frame = newFrame(null);
        }
        else if (p.frame.mapCount > 1)
        {
            final Frame copy = newFrame(p.frame);
            p.frame.mapCount--;
            p.frame = copy;
        }
    }

    /** A CPU read fault: the zero page for an untouched page, swap-in for a swapped one. */
    private void readFault(final Page p)
    {
        if (p.swapped)
        {
            swapIn(p);
        }
        else if (p.frame == null)
        {
            p.frame = ZERO;
        }
    }

    /** One page of pin_user_pages(FOLL_LONGTERM [| FOLL_WRITE]); returns the frame pinned. */
    private Frame pinPage(final Page p, final boolean write)
    {
        if (write)
        {
            writeFault(p);
        }
        else
        {
            readFault(p);
            if (params.fork() == ForkBehaviour.MODERN)
            {
                if (p.frame == ZERO)
                {
                    p.frame = newFrame(null);
                }
                else if (p.frame.mapCount > 1)
                {
                    final Frame copy = newFrame(p.frame);
                    p.frame.mapCount--;
                    p.frame = copy;
                }
            }
        }
        if (p.frame != ZERO)
        {
            p.frame.pins++;
        }
        return p.frame;
    }

    private static void unpin(final Frame[] frames)
    {
        for (final Frame f : frames)
        {
            if (f != ZERO)
            {
                f.pins--;
            }
        }
    }

    private void unmapPage(final long va)
    {
        final Page p = pages.remove(va);
        pagesVersion++;
        if (p != null)
        {
            drop(p);
        }
    }

    private static void drop(final Page p)
    {
        if (p.frame != null && p.frame != ZERO && !p.swapped)
        {
            p.frame.mapCount--;
        }
        p.frame = null;
        p.swapped = false;
    }

    private boolean allMapped(final long addr, final long len)
    {
        for (long va = addr & -PAGE; va < addr + len; va += PAGE)
        {
            if (!pages.containsKey(va))
            {
                return false;
            }
        }
        return true;
    }

    private long bufAddr(final String buf)
    {
        return bufs.get(buf).addr();
    }

    /** The bytes a CPU read of [addr, addr+len) returns, faulting pages in as the model says. */
    private byte[] cpuRead(final long addr, final int len)
    {
        final byte[] out = new byte[len];
        for (int i = 0; i < len;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(len - i, (int)PAGE - in);
            final Page p = pages.get((addr + i) & -PAGE);
            readFault(p);
            System.arraycopy(p.frame.bytes(), in, out, i, n);
            i += n;
        }
        return out;
    }

    private void cpuWrite(final long addr, final byte[] data)
    {
        for (int i = 0; i < data.length;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(data.length - i, (int)PAGE - in);
            final Page p = pages.get((addr + i) & -PAGE);
            writeFault(p);
            System.arraycopy(data, i, p.frame.writable(), in, n);
            i += n;
        }
    }

    /** The frame of an MR holding iova {@code a}. */
    private static Frame mrFrame(final MrM m, final long a)
    {
        return m.frames[(int)(((a & -PAGE) - m.firstPage()) / PAGE)];
    }

    private static byte[] mrRead(final MrM m, final long addr, final int len)
    {
        final byte[] out = new byte[len];
        for (int i = 0; i < len;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(len - i, (int)PAGE - in);
            System.arraycopy(mrFrame(m, addr + i).bytes(), in, out, i, n);
            i += n;
        }
        return out;
    }

    private void mrWrite(final MrM m, final long addr, final byte[] data)
    {
        for (int i = 0; i < data.length;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(data.length - i, (int)PAGE - in);
            final Frame f = mrFrame(m, addr + i);
            if (f == ZERO)
            {
                throw failure(Mismatch.Kind.BYTES, "model: a write through " + m.name + " would land on the zero page");
            }
            System.arraycopy(data, i, f.writable(), in, n);
            i += n;
        }
    }

    // ------------------------------------------------------------------ rings

    /**
     * The ring a CQ or QP creation just mapped and pinned: the pages that appeared in app_b since {@code before}
     * (so that the model knows which addresses it holds: a ring may land in a hole a munmap left).
     */
    private Ring newRing(final List<Vma> before, final int expectedPages, final String owner)
    {
        final TreeSet<Long> now = pagesSince(before);
        if (now.size() != expectedPages || now.last() - now.first() != (expectedPages - 1) * PAGE)
        {
            throw failure("the ring of " + owner + " should map and pin " + expectedPages + " contiguous pages, new "
                + "pages: " + hexes(now));
        }
        final Ring r = new Ring();
        r.addr = now.first();
        r.pages = expectedPages;
        r.frames = new Frame[expectedPages];
        for (int i = 0; i < expectedPages; i++)
        {
            final Page p = new Page();
            p.frame = newFrame(null);
            p.frame.pins = 1;
            pages.put(r.addr + i * PAGE, p);
            pagesVersion++;
            r.frames[i] = p.frame;
        }
        rings.add(r);
        return r;
    }

    /** Ring.release: unpin, then munmap its range (whatever is mapped there now). */
    private void releaseRing(final Ring r)
    {
        unpin(r.frames);
        for (int i = 0; i < r.pages; i++)
        {
            unmapPage(r.addr + i * PAGE);
        }
        rings.remove(r);
    }

    // ------------------------------------------------------------------ QP pairs

    private int ringRoom()
    {
        return (int)(params.memlockBytes() / PAGE - pinnedVmModel());
    }

    /**
     * Makes the pair of a live PD usable: creates it, or, after an error left its QPs in ERR, moves both to RESET
     * (ibv_modify_qp: what was queued is dropped) and connects them again, as an application recovers a connection;
     * the QPs keep their numbers, rings and the windows bound through them.
     *
     * @return false when its responder QP cannot be created (RLIMIT_MEMLOCK), with the lines saying so.
     */
    private boolean ensurePair(final PdM pd)
    {
        if (pd.pair != null && !pd.pair.broken && pd.pair.qb.live)
        {
            return true;
        }
        final String qa = "qa" + pd.index;
        final String qb = "qb" + pd.index;
        if (pd.pair != null && pd.pair.qb.live)
        {
            line(() -> "modify " + qa + " reset");
            line(() -> "modify " + qb + " reset");
            line(() -> "connect " + qa + " " + qb);
            final QpAttr reset = QpAttr.builder().state(QpState.RESET).build();
            final java.util.Set<dev.rnicsim.verbs.QpAttrMask> mask = EnumSet.of(dev.rnicsim.verbs.QpAttrMask.STATE);
            pd.pair.qa.modify(reset, mask);
            pd.pair.qb.sim.modify(reset, mask);
            connect(pd.pair.qa, pd.pair.qb.sim);
            connect(pd.pair.qb.sim, pd.pair.qa);
            pd.pair.broken = false;
            return true;
        }
        if (pd.pair != null)
        {
            line("close " + qa);
            pd.pair.qa.close();
            pd.pair.qa = null;
            if (pd.pair.qb.live)
            {
                line("close " + qb);
                closeQp(pd.pair.qb);
            }
            pd.pair = null;
        }
        line("qp " + qb + " pd_b" + pd.index + " " + cqName);
        final boolean fits = ringRoom() >= QP_RING_PAGES;
        final List<Vma> before = appB.vmas();
        final QueuePair[] created = new QueuePair[1];
        final Result r = run(() -> created[0] = pd.sim.createQp(new QpInitAttr(cqB, cqB, QpType.RC, QP_CAP, false)));
        expectLine(fits ? "ok" : "ENOMEM");
        expectOutcome(fits ? "ok" : "ENOMEM", r);
        if (!fits)
        {
            return false;
        }
        final Qp b = new Qp();
        b.sim = created[0];
        b.live = true;
        b.ring = newRing(before, QP_RING_PAGES, qb);
        bound.add(qb);
        line("qp " + qa + " pd_a cq_a");
        final QueuePair a = pdA.createQp(new QpInitAttr(cqA, cqA, QpType.RC, QP_CAP, false));
        bound.add(qa);
        line("connect " + qa + " " + qb);
        connect(a, b.sim);
        connect(b.sim, a);
        final Pair pair = new Pair();
        pair.qa = a;
        pair.qb = b;
        pd.pair = pair;
        return true;
    }

    /** One direction of the script's connect (default access rw,rr,ra, min_rnr_timer 12, retry 7, rnr_retry 7). */
    private static void connect(final QueuePair q, final QueuePair peer)
    {
        q.modifyToInit(QP_RIGHTS);
        q.modifyToRtr(peer.address(), 12);
        q.modifyToRts(7, 7);
    }

    private void closeQp(final Qp q)
    {
        q.sim.close();
        q.live = false;
        releaseRing(q.ring);
    }

    private List<WorkCompletion> poll(final CompletionQueue cq, final String cqLabel, final String expectedStatus)
    {
        line(() -> "poll " + cqLabel);
        line(() -> "expect " + expectedStatus);
        final List<WorkCompletion> wcs = cq.poll(16);
        if (wcs.size() != 1)
        {
            throw failure(Mismatch.Kind.OUTCOME, "expected one completion on " + cqLabel + ", got " + wcs);
        }
        expectEqual(Mismatch.Kind.OUTCOME, expectedStatus, wcs.get(0).status().name(), "completion status");
        return wcs;
    }

    // ------------------------------------------------------------------ key bookkeeping

    /**
     * Names a key {@code kN}: {@code let kN ISSUER.FIELD}, or {@code let kN 0} when {@code field} is null (nothing was
     * issued).
     */
    private void issueKey(final int n, final String issuedBy, final String field, final int value, final long lo,
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
        bound.add(k.name);
    }

    /** An MR stopped holding {@code key}: its stale names start counting reuses of the index. */
    private void mrKeyDied(final int key)
    {
        for (final KeyName k : keys.values())
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
    private void allocatedKey(final String name, final String field, final int key, final boolean window)
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
            throw failure(Mismatch.Kind.KEY, "the device handed out key " + Script.key(key) + "; the model expected " + problem);
        }
    }

    // ------------------------------------------------------------------ actions: memory

    void mmap(final String buf, final long size)
    {
        start("mmap " + buf + " app_b " + Script.size(size));
        final long addr = mmap4k(appB, size);
        for (long va = addr; va < addr + size; va += PAGE)
        {
            if (pages.containsKey(va))
            {
                throw failure("mmap placed " + buf + " over page 0x" + Long.toHexString(va) + ", mapped already");
            }
            pages.put(va, new Page());
            pagesVersion++;
        }
        bufs.put(buf, new Buf(buf, addr, size));
        bound.add(buf);
    }

    void cpuWrite(final String buf, final long off, final String text)
    {
        final String line = "write " + Script.at(buf, off) + " \"" + text + "\"";
        if (skipUnbound(line, buf))
        {
            return;
        }
        start(line);
        final long addr = bufAddr(buf) + off;
        final byte[] data = text.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        final String predicted = allMapped(addr, data.length) ? "ok" : "EFAULT";
        expectLine(predicted);
        expectOutcome(predicted, run(() -> appB.write(addr, data)));
        if (predicted.equals("ok"))
        {
            cpuWrite(addr, data);
        }
    }

    void cpuRead(final String buf, final long off, final int len)
    {
        final String line = "touch " + Script.at(buf, off) + " " + len;
        if (skipUnbound(line, buf))
        {
            return;
        }
        start(line);
        final long addr = bufAddr(buf) + off;
        if (!allMapped(addr, len))
        {
            expectLine("EFAULT");
            expectOutcome("EFAULT", run(() -> appB.touch(addr, len, false)));
            return;
        }
        final byte[] expected = cpuRead(addr, len);
        line(() -> "expect bytes " + Script.at(buf, off) + " " + Script.hex(expected));
        expectOutcome("ok", run(() -> appB.touch(addr, len, false)));
        final byte[] got = appB.read(addr, len);
        if (!Arrays.equals(expected, got))
        {
            throw failure(Mismatch.Kind.BYTES, "a CPU read of " + len + " bytes at 0x" + Long.toHexString(addr) + " gave "
                + Script.hex(got) + ", the model " + Script.hex(expected));
        }
    }

    void munmap(final String buf, final long off, final long len)
    {
        final String line = "munmap " + Script.at(buf, off) + " " + Script.size(len);
        if (skipUnbound(line, buf))
        {
            return;
        }
        start(line);
        final long addr = bufAddr(buf) + off;
        expectOutcome("ok", run(() -> appB.munmap(addr, len)));
        for (long va = addr; va < addr + len; va += PAGE)
        {
            unmapPage(va);
        }
    }

    void madvise(final String buf, final long off, final long len, final Madvice advice)
    {
        final String line = "madvise " + Script.at(buf, off) + " " + Script.size(len) + " "
            + advice.name().toLowerCase(Locale.ROOT);
        if (skipUnbound(line, buf))
        {
            return;
        }
        start(line);
        final long addr = bufAddr(buf) + off;
        final String predicted = allMapped(addr, len) ? "ok" : "ENOMEM";
        expectLine(predicted);
        expectOutcome(predicted, run(() -> appB.madvise(addr, len, advice)));
        if (!predicted.equals("ok"))
        {
            return;
        }
        for (long va = addr; va < addr + len; va += PAGE)
        {
            final Page p = pages.get(va);
            switch (advice)
            {
                case DONTNEED -> drop(p);
                case DONTFORK -> p.dontfork = true;
                case DOFORK -> p.dontfork = false;
                default ->
                {
                }
            }
        }
    }

    void fork(final String child)
    {
        start("fork " + child + " app_b");
        final boolean modern = params.fork() == ForkBehaviour.MODERN;
        expectOutcome("ok", run(() -> appB.fork(child)));
        for (final Page p : pages.values())
        {
            if (p.dontfork || p.swapped || p.frame == null || p.frame == ZERO)
            {
                continue;
            }
            if (!(modern && p.frame.pins > 0))
            {
                p.frame.mapCount++;
            }
        }
        bound.add(child);
    }

    void reclaim(final long target)
    {
        start("reclaim beta " + target);
        hostB.host().reclaim(target);
        for (final Map.Entry<Long, Page> e : pages.entrySet())
        {
            final Page p = e.getValue();
            if (p.swapped || p.frame == null || p.frame == ZERO || appB.translate(e.getKey()) >= 0)
            {
                continue;
            }
            if (p.frame.pins > 0 || p.frame.mapCount != 1)
            {
                throw failure("reclaim took page 0x" + Long.toHexString(e.getKey()) + ", whose frame has " + p.frame.pins
                    + " pin(s) and " + p.frame.mapCount + " mapping(s): only exclusive unpinned pages may go");
            }
            p.frame.mapCount--;
            p.swapped = true;
        }
    }

    void compact()
    {
        start("compact beta");
        hostB.host().compact();
        for (final Map.Entry<Long, Page> e : pages.entrySet())
        {
            final Page p = e.getValue();
            if (!p.swapped && p.frame != null && appB.translate(e.getKey()) < 0)
            {
                throw failure("compaction left page 0x" + Long.toHexString(e.getKey()) + " not present");
            }
        }
    }

    // ------------------------------------------------------------------ actions: PDs and contexts

    void allocPd(final int index)
    {
        start("pd pd_b" + index + " " + ctxName);
        final PdM pd = new PdM(index);
        final ProtectionDomain[] got = new ProtectionDomain[1];
        expectOutcome("ok", run(() -> got[0] = ctxB.allocPd()));
        pd.sim = (SimPd)got[0];
        pd.live = true;
        pds.put(index, pd);
        bound.add(pd.name);
    }

    void closePd(final int index)
    {
        final String name = "pd_b" + index;
        if (skipUnbound("close " + name, name))
        {
            return;
        }
        start("close " + name);
        final PdM pd = pds.get(index);
        expectOutcome("ok", run(() -> pd.sim.close()));
        if (pd.live)
        {
            pdClosed(pd);
        }
    }

    /** What closing a PD does, in the model: windows, then QPs and MRs, are closed. */
    private void pdClosed(final PdM pd)
    {
        for (final MwM w : mws.values())
        {
            if (w.live && w.pd == pd)
            {
                deallocated(w);
            }
        }
        if (pd.pair != null)
        {
            if (pd.pair.qb.live)
            {
                pd.pair.qb.live = false;
                releaseRing(pd.pair.qb.ring);
            }
            line("close qa" + pd.index);
            pd.pair.qa.close();
            pd.pair = null;
        }
        for (final MrM m : mrs.values())
        {
            if (m.live && m.pd == pd)
            {
                deregistered(m);
            }
        }
        pd.live = false;
    }

    void closeContext(final String newCtx, final String newCq)
    {
        start("close " + ctxName);
        expectOutcome("ok", run(() -> ctxB.close()));
        for (final PdM pd : pds.values())
        {
            if (pd.live)
            {
                pdClosed(pd);
            }
        }
        releaseRing(cqRing);
        line("open " + newCtx + " nic_b process=app_b");
        ctxB = nicB.open(appB);
        ctxName = newCtx;
        bound.add(newCtx);
        line("cq " + newCq + " " + newCtx);
        final boolean fits = ringRoom() >= CQ_RING_PAGES;
        if (!fits)
        {
            throw failure("model: no room for a CQ ring after closing the context");
        }
        final List<Vma> before = appB.vmas();
        cqB = ctxB.createCq(CQ_ENTRIES);
        cqName = newCq;
        bound.add(newCq);
        cqRing = newRing(before, CQ_RING_PAGES, newCq);
    }

    /** Closes the context of app_b at the end of a chain: nothing may stay pinned, registered or bound. */
    void closeEverything()
    {
        start("close " + ctxName);
        expectOutcome("ok", run(() -> ctxB.close()));
        for (final PdM pd : pds.values())
        {
            if (pd.live)
            {
                pdClosed(pd);
            }
        }
        releaseRing(cqRing);
        expectEqual(0L, liveMrs(), "MRs after closing the context (model)");
        checkInvariants();
        expectEqual(0L, appB.pinnedVmPages(), "pinned_vm after closing everything");
        expectEqual(0L, nicB.counter(SimCounter.MTT_ENTRIES_IN_USE), "MTT entries after closing everything");
        expectEqual(0L, nicB.counter(SimCounter.MR_LIVE), "MRs after closing everything");
        expectEqual(0, nicB.tables().windowCount(), "windows after closing everything");
        expectEqual(0L, nicB.tables().mpt().inUse(), "MPT entries after closing everything");
        expectEqual(0L, nicB.counter(SimCounter.PINNED_BYTES), "sim_pinned_bytes after closing everything");
    }

    // ------------------------------------------------------------------ actions: registration

    void reg(final String mr, final int pdIndex, final String buf, final long off, final long len,
        final Set<Access> access, final int keyN)
    {
        final String pdName = "pd_b" + pdIndex;
        final String line = "reg " + mr + " " + pdName + " " + Script.at(buf, off) + " " + Script.size(len)
            + " access=" + KeyOps.words(access);
        if (skipUnbound(line, pdName, buf))
        {
            issueKey(keyN, mr, null, 0, 0, 0, true);
            return;
        }
        start(line);
        final PdM pd = pds.get(pdIndex);
        final long addr = bufAddr(buf) + off;
        final int npages = MrM.pages(addr, len);
        final boolean write = !java.util.Collections.disjoint(access, WRITABLE);
        final String predicted;
        boolean faults = false;
        if (!pd.live)
        {
            predicted = "EINVAL";
        }
        else if ((access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
            && !access.contains(Access.LOCAL_WRITE))
        {
            predicted = "EINVAL";
        }
        else if (pinnedVmModel() + npages > params.memlockBytes() / PAGE)
        {
            predicted = "ENOMEM";
        }
        else if (!allMapped(addr, len))
        {
            predicted = "EFAULT";
        }
        else
        {
            faults = true;
            predicted = mpt.full() ? "ENOMEM" : "ok";
        }
        expectLine(predicted);
        final MemoryRegion[] got = new MemoryRegion[1];
        final Result r = run(() -> got[0] = pd.sim.regMr(addr, len, EnumSet.copyOf(access.isEmpty()
            ? EnumSet.noneOf(Access.class) : access)));
        expectOutcome(predicted, r);
        if (faults)
        {
            // The pages were faulted in (and pinned) before the MPT refused: the faults stay, the pins go.
            final Frame[] frames = pin(addr, len, write);
            if (!predicted.equals("ok"))
            {
                unpin(frames);
            }
            else
            {
                final MrM m = new MrM(mr);
                m.sim = (SimMr)got[0];
                m.pd = pd;
                m.addr = addr;
                m.lengthBytes = len;
                m.access = Set.copyOf(access);
                m.frames = frames;
                m.writePin = write;
                m.live = true;
                m.key = m.sim.lkey();
                learnEntries(m);
                allocatedKey(mr, "lkey", m.key, false);
                mrs.put(mr, m);
                bound.add(mr);
                issueKey(keyN, mr, "lkey", m.key, addr, len, true);
                return;
            }
        }
        issueKey(keyN, mr, null, 0, addr, len, true);
    }

    private Frame[] pin(final long addr, final long len, final boolean write)
    {
        final int n = MrM.pages(addr, len);
        final Frame[] frames = new Frame[n];
        for (int i = 0; i < n; i++)
        {
            frames[i] = pinPage(pages.get((addr & -PAGE) + i * PAGE), write);
        }
        return frames;
    }

    /** MTT entries of a new translation, read from the MR, checked against its page size. */
    private void learnEntries(final MrM m)
    {
        final long pageSize = m.sim.pageSizeBytes();
        if (pageSize < PAGE || Long.bitCount(pageSize) != 1)
        {
            throw failure(m.name + ": page size " + pageSize + " is no power of two of 4 KiB or more");
        }
        final long blocks = (((m.addr + m.lengthBytes + pageSize - 1) & -pageSize) - (m.addr & -pageSize)) / pageSize;
        expectEqual(blocks, m.sim.mttEntries(), m.name + ".mtt_entries for page size " + pageSize);
        m.entries = m.sim.mttEntries();
        m.reserved = params.reserved(m.entries);
        expectEqual(m.reserved, m.sim.mttEntriesReserved(), m.name + ".mtt_reserved ("
            + (params.buddyMtt() ? "buddy: a power of two, at least a segment of 8" : "exact allocator") + ")");
    }

    void dereg(final String mr)
    {
        final String line = "dereg " + mr;
        if (skipUnbound(line, mr))
        {
            return;
        }
        start(line);
        final MrM m = mrs.get(mr);
        if (!m.live)
        {
            // The script refuses to deregister a name twice; the verbs API's close is idempotent.
            expectLine("EINVAL");
            expectEqual(true, m.sim.isClosed(), mr + " closed");
            return;
        }
        // mlx5 (DEREG_MR_INVALIDATES_BOUND_WINDOWS) lets the MR go and its windows translate nothing; others refuse
        final boolean letsGo = nicB.profile().follows(
            dev.rnicsim.simnic.ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS);
        final String predicted = m.windows > 0 && !letsGo ? "EINVAL" : "ok";
        expectLine(predicted);
        expectOutcome(predicted, run(() -> m.sim.close()));
        if (predicted.equals("ok"))
        {
            for (final MwM w : mws.values())
            {
                if (w.bound && w.mr == m)
                {
                    w.bound = false;
                    w.mr = null;
                    w.lo = 0;
                    w.len = 0;
                    w.rights = Set.of();
                    w.qp = null;
                }
            }
            m.windows = 0;
            deregistered(m);
        }
    }

    private void deregistered(final MrM m)
    {
        unpin(m.frames);
        mpt.freed(m.key, false);
        mrKeyDied(m.key);
        m.live = false;
    }

    private static long mkeyCapacity(final long entries)
    {
        return entries <= 1 ? 1 : Long.highestOneBit(entries - 1) << 1;
    }

    void rereg(final String mr, final Integer pdIndex, final String buf, final long off, final long len,
        final Set<Access> access, final int keyN)
    {
        final StringBuilder sb = new StringBuilder("rereg " + mr);
        if (pdIndex != null)
        {
            sb.append(" pd=pd_b").append(pdIndex);
        }
        if (buf != null)
        {
            sb.append(" addr=").append(Script.at(buf, off)).append(" size=").append(Script.size(len));
        }
        if (access != null)
        {
            sb.append(" access=").append(KeyOps.words(access));
        }
        final String line = sb.toString();
        final List<String> needed = new ArrayList<>(List.of(mr));
        if (pdIndex != null)
        {
            needed.add("pd_b" + pdIndex);
        }
        if (buf != null)
        {
            needed.add(buf);
        }
        if (skipUnbound(line, needed.toArray(String[]::new)))
        {
            issueKey(keyN, mr, null, 0, 0, 0, true);
            return;
        }
        start(line);
        final MrM m = mrs.get(mr);
        final PdM target = pdIndex == null ? null : pds.get(pdIndex);
        final boolean translation = buf != null;
        final long newAddr = translation ? bufAddr(buf) + off : m.addr;
        final long newLen = translation ? len : m.lengthBytes;
        final Set<Access> rights = access != null ? access : m.access;
        final Set<ReregFlag> flags = EnumSet.noneOf(ReregFlag.class);
        if (pdIndex != null)
        {
            flags.add(ReregFlag.CHANGE_PD);
        }
        if (translation)
        {
            flags.add(ReregFlag.CHANGE_TRANSLATION);
        }
        if (access != null)
        {
            flags.add(ReregFlag.CHANGE_ACCESS);
        }
        // SimPd.rereg's order: the library's input checks, then the kernel's, then the change.
        String predicted = null;
        if (!m.live)
        {
            predicted = "EINVAL";
        }
        else if (flags.isEmpty())
        {
            predicted = "EINVAL";
        }
        else if (target != null && (!target.live || target.sim.context() != m.pd.sim.context()))
        {
            predicted = "EINVAL";
        }
        else if (access != null && (access.contains(Access.REMOTE_WRITE) || access.contains(Access.REMOTE_ATOMIC))
            && !access.contains(Access.LOCAL_WRITE))
        {
            predicted = "EINVAL";
        }
        else if (m.windows > 0)
        {
            predicted = "EINVAL";
        }
        final boolean writePin = !java.util.Collections.disjoint(rights, WRITABLE);
        // mlx5 and rxe register anew, pinned for writing, an access change that needs it (a read-only pin).
        final boolean repin = translation || writePin && !m.writePin;
        final int newPages = MrM.pages(newAddr, newLen);
        boolean faults = false;
        boolean uncertain = false;
        if (predicted == null && repin)
        {
            if (pinnedVmModel() + newPages > params.memlockBytes() / PAGE)
            {
                predicted = "ENOMEM";
            }
            else if (!allMapped(newAddr, newLen))
            {
                predicted = "EFAULT";
            }
            else
            {
                faults = true;
                // In place when the new translation fits the mkey's entries (can_use_umr_rereg_pas); at most one
                // entry per page, so it surely fits when its pages do; else it depends on the page size.
                final boolean surelyInPlace = newPages <= mkeyCapacity(m.entries);
                if (surelyInPlace || !mpt.full())
                {
                    predicted = "ok";
                }
                else
                {
                    uncertain = true;
                }
            }
        }
        else if (predicted == null)
        {
            predicted = "ok";
        }
        if (!uncertain)
        {
            expectLine(predicted);
        }
        final PdM newPd = target != null ? target : m.live ? m.pd : null;
        final Result r = run(() -> m.sim.rereg(flags, target == null ? null : target.sim, translation ? newAddr : 0,
            translation ? newLen : 0, access == null ? Set.of() : access));
        if (uncertain)
        {
            if (!r.ok() && !r.errno().equals("ENOMEM"))
            {
                expectOutcome("ENOMEM", r);
            }
            predicted = r.errno();
            expectLine(predicted);
            line("# (the model allowed ENOMEM or a rereg in place here: it depends on the new page size)");
        }
        expectOutcome(predicted, r);
        if (faults)
        {
            final Frame[] frames = pin(newAddr, newLen, writePin);
            if (!predicted.equals("ok"))
            {
                unpin(frames);
            }
            else
            {
                final int oldKey = m.key;
                final long oldEntries = m.entries;
                final Frame[] old = m.frames;
                m.frames = frames;
                m.addr = newAddr;
                m.lengthBytes = newLen;
                m.access = Set.copyOf(rights);
                m.writePin = writePin;
                m.pd = newPd;
                learnEntries(m);
                final boolean fits = m.entries <= mkeyCapacity(oldEntries);
                final int newKey = m.sim.lkey();
                if (fits)
                {
                    expectEqual(Mismatch.Kind.KEY, oldKey, newKey, "key after a rereg in place (" + m.entries + " entries fit the mkey's "
                        + mkeyCapacity(oldEntries) + ")");
                }
                else
                {
                    if (newKey == oldKey)
                    {
                        throw failure(Mismatch.Kind.KEY, "rereg kept key " + Script.key(oldKey) + " though " + m.entries
                            + " entries do not fit the mkey's " + mkeyCapacity(oldEntries)
                            + " (REREG_TRANSLATION_NEW_KEY)");
                    }
                    allocatedKey(mr, "lkey", newKey, false);
                    mpt.freed(oldKey, false);
                    mrKeyDied(oldKey);
                    m.key = newKey;
                }
                unpin(old);
            }
        }
        else if (predicted.equals("ok"))
        {
            m.access = Set.copyOf(rights);
            m.pd = newPd;
        }
        issueKey(keyN, mr, "lkey", m.sim == null ? 0 : m.sim.lkey(), m.addr, m.lengthBytes, true);
        if (m.live && m.sim.lkey() != m.key)
        {
            throw failure(Mismatch.Kind.KEY, mr + ".lkey is " + Script.key(m.sim.lkey()) + ", the model " + Script.key(m.key));
        }
    }

    // ------------------------------------------------------------------ actions: windows

    void allocMw(final String mw, final int pdIndex, final MwType type, final int keyN)
    {
        final String pdName = "pd_b" + pdIndex;
        final String line = "mw " + mw + " " + pdName + " type=" + type.code();
        if (skipUnbound(line, pdName))
        {
            issueKey(keyN, mw, null, 0, 0, 0, false);
            return;
        }
        start(line);
        final PdM pd = pds.get(pdIndex);
        final String predicted = !pd.live ? "EINVAL" : mpt.full() ? "ENOMEM" : "ok";
        expectLine(predicted);
        final dev.rnicsim.verbs.MemoryWindow[] got = new dev.rnicsim.verbs.MemoryWindow[1];
        expectOutcome(predicted, run(() -> got[0] = pd.sim.allocMw(type)));
        if (!predicted.equals("ok"))
        {
            issueKey(keyN, mw, null, 0, 0, 0, false);
            return;
        }
        final MwM w = new MwM(mw, type);
        w.sim = (SimMw)got[0];
        w.pd = pd;
        w.live = true;
        w.tableKey = w.sim.rkey();
        w.shownKey = w.tableKey;
        allocatedKey(mw, "rkey", w.tableKey, true);
        mws.put(mw, w);
        bound.add(mw);
        issueKey(keyN, mw, "rkey", w.shownKey, 0, 0, false);
    }

    private void deallocated(final MwM w)
    {
        if (w.bound)
        {
            w.mr.windows--;
        }
        mpt.freed(w.tableKey, true);
        w.live = false;
        w.bound = false;
        // deallocMw: the handle's rkey shows the table key again.
        w.shownKey = w.tableKey;
    }

    void dealloc(final String mw)
    {
        final String line = "close " + mw;
        if (skipUnbound(line, mw))
        {
            return;
        }
        start(line);
        final MwM w = mws.get(mw);
        expectOutcome("ok", run(() -> w.sim.close()));
        if (w.live)
        {
            deallocated(w);
        }
    }

    /**
     * A bind (type 1: ibv_bind_mw; type 2: a posted BIND_MW with the next key byte) of {@code [mr+off, +len)} with
     * {@code rights}, through the QP of pair {@code pdIndex}.
     */
    void bind(final String mw, final int pdIndex, final String mr, final long off, final long len,
        final Set<Access> rights, final int keyN)
    {
        final String qb = "qb" + pdIndex;
        final String line = "bind " + mw + " " + qb + " " + mr + " addr=" + Script.at(mr, off) + " length="
            + Script.size(len) + " access=" + KeyOps.words(rights);
        if (skipUnbound(line, mw, mr, "pd_b" + pdIndex))
        {
            issueKeyOfWindow(keyN, mw);
            return;
        }
        final PdM pd = pds.get(pdIndex);
        if (!pd.live)
        {
            skipStep(line, "pd_b" + pdIndex + " is closed");
            issueKeyOfWindow(keyN, mw);
            return;
        }
        begin(line);
        if (!ensurePair(pd))
        {
            step.lines.add("# the bind is not posted: no QP");
            issueKeyOfWindow(keyN, mw);
            return;
        }
        line(line);
        final MwM w = mws.get(mw);
        final MrM m = mrs.get(mr);
        // The runner evaluates addr=mr+off from the MR's iova, as here.
        final long addr = m.sim.iova() + off;
        final Pair pair = pd.pair;
        final MwBindInfo info = new MwBindInfo(m.sim, addr, len, rights);
        final long wrId = nextWrId++;
        if (w.type == MwType.TYPE_1)
        {
            final String atPost = !w.live || !pair.qb.live ? "EINVAL" : m.pd != w.pd ? "EPERM" : "ok";
            if (!atPost.equals("ok"))
            {
                expectLine(atPost);
                expectOutcome(atPost, run(() -> pair.qb.sim.bindMw(w.sim, wrId, EnumSet.of(SendFlag.SIGNALED),
                    info)));
                issueKeyOfWindow(keyN, mw);
                return;
            }
            final String why = bindProblem(w, m, addr, len, rights, pair.qb);
            final int[] posted = new int[1];
            expectOutcome("ok", run(() -> posted[0] = pair.qb.sim.bindMw(w.sim, wrId, EnumSet.of(SendFlag.SIGNALED),
                info)));
            final int newKey = SendWr.incRkey(w.shownKey);
            expectEqual(Mismatch.Kind.KEY, newKey, posted[0], "ibv_bind_mw's new rkey (ibv_inc_rkey at post)");
            w.shownKey = newKey;
            poll(cqB, cqName, why == null ? "SUCCESS" : "MW_BIND_ERR");
            if (why == null)
            {
                bound(w, m, addr, len, rights, newKey, null);
            }
            else
            {
                pair.broken = true;
                line("# refused: " + why);
            }
        }
        else
        {
            final int newKey = SendWr.incRkey(w.shownKey);
            final String why = !w.live ? "the window is deallocated" : bindProblem(w, m, addr, len, rights, pair.qb);
            expectOutcome("ok", run(() -> pair.qb.sim.postSend(List.of(new SendWr(wrId, WrOpcode.BIND_MW, List.of(),
                EnumSet.of(SendFlag.SIGNALED), 0, 0, 0, 0, 0, 0, new SendWr.Bind(w.sim, newKey, info))))));
            poll(cqB, cqName, why == null ? "SUCCESS" : "MW_BIND_ERR");
            if (why == null)
            {
                bound(w, m, addr, len, rights, newKey, pair.qb);
            }
            else
            {
                pair.broken = true;
                line("# refused: " + why);
            }
        }
        issueKeyOfWindow(keyN, mw);
    }

    private void issueKeyOfWindow(final int keyN, final String mw)
    {
        final MwM w = mws.get(mw);
        if (w == null)
        {
            issueKey(keyN, mw, null, 0, 0, 0, false);
            return;
        }
        issueKey(keyN, mw, "rkey", w.shownKey, w.bound ? w.lo : 0, w.bound ? w.len : 0, false);
    }

    /** Why the device refuses the bind (rxe_check_bind_mw's order, LocalOps), or null. */
    private static String bindProblem(final MwM w, final MrM m, final long addr, final long len,
        final Set<Access> rights, final Qp qp)
    {
        if (w.type == MwType.TYPE_1 && w.shownKey != w.tableKey)
        {
            return "an earlier bind failed: ibv_bind_mw names the window by a key the device never issued";
        }
        if (w.type == MwType.TYPE_2 && w.bound)
        {
            return "type 2 window bound already";
        }
        if (w.type == MwType.TYPE_2 && qp.sim.pd() != w.pd.sim)
        {
            return "QP of another PD";
        }
        if (!m.live)
        {
            return "MR deregistered";
        }
        if (m.pd != w.pd)
        {
            return "MR of another PD";
        }
        if (!m.access.contains(Access.MW_BIND))
        {
            return "MR without MW_BIND";
        }
        if ((rights.contains(Access.REMOTE_WRITE) || rights.contains(Access.REMOTE_ATOMIC))
            && !m.access.contains(Access.LOCAL_WRITE))
        {
            return "writable window on an MR without LOCAL_WRITE";
        }
        if (addr < m.addr || len > m.lengthBytes - (addr - m.addr) || addr - m.addr >= m.lengthBytes)
        {
            return "range outside the MR";
        }
        return null;
    }

    private void bound(final MwM w, final MrM m, final long addr, final long len, final Set<Access> rights,
        final int newKey, final Qp qp)
    {
        if (w.bound)
        {
            w.mr.windows--;
        }
        mpt.rewritten(w.tableKey, newKey);
        w.tableKey = newKey;
        w.shownKey = newKey;
        w.bound = true;
        w.mr = m;
        w.lo = addr;
        w.len = len;
        w.rights = Set.copyOf(rights);
        w.qp = qp;
        m.windows++;
    }

    void unbind(final String mw, final int pdIndex, final int keyN)
    {
        final String line = "unbind " + mw + " qb" + pdIndex;
        if (skipUnbound(line, mw, "pd_b" + pdIndex))
        {
            issueKeyOfWindow(keyN, mw);
            return;
        }
        final PdM pd = pds.get(pdIndex);
        if (!pd.live)
        {
            skipStep(line, "pd_b" + pdIndex + " is closed");
            issueKeyOfWindow(keyN, mw);
            return;
        }
        begin(line);
        if (!ensurePair(pd))
        {
            step.lines.add("# the unbind is not posted: no QP");
            issueKeyOfWindow(keyN, mw);
            return;
        }
        line(line);
        final MwM w = mws.get(mw);
        final Pair pair = pd.pair;
        final long wrId = nextWrId++;
        if (!w.live || w.type == MwType.TYPE_2)
        {
            expectLine("EINVAL");
            expectOutcome("EINVAL", run(() -> pair.qb.sim.bindMw(w.sim, wrId, EnumSet.of(SendFlag.SIGNALED),
                MwBindInfo.unbind())));
            issueKeyOfWindow(keyN, mw);
            return;
        }
        final boolean desync = w.shownKey != w.tableKey;
        final int[] posted = new int[1];
        expectOutcome("ok", run(() -> posted[0] = pair.qb.sim.bindMw(w.sim, wrId, EnumSet.of(SendFlag.SIGNALED),
            MwBindInfo.unbind())));
        final int newKey = SendWr.incRkey(w.shownKey);
        expectEqual(Mismatch.Kind.KEY, newKey, posted[0], "ibv_bind_mw's new rkey (ibv_inc_rkey at post)");
        w.shownKey = newKey;
        poll(cqB, cqName, desync ? "MW_BIND_ERR" : "SUCCESS");
        if (desync)
        {
            pair.broken = true;
        }
        else
        {
            if (w.bound)
            {
                w.mr.windows--;
            }
            mpt.rewritten(w.tableKey, newKey);
            w.tableKey = newKey;
            w.bound = false;
            w.mr = null;
            w.lo = 0;
            w.len = 0;
            w.rights = Set.of();
            w.qp = null;
        }
        issueKeyOfWindow(keyN, mw);
    }

    void localInv(final int pdIndex, final int keyN)
    {
        final String line = "post local_inv qb" + pdIndex + " rkey=k" + keyN;
        if (skipUnbound(line, "pd_b" + pdIndex, "k" + keyN))
        {
            return;
        }
        final PdM pd = pds.get(pdIndex);
        if (!pd.live)
        {
            skipStep(line, "pd_b" + pdIndex + " is closed");
            return;
        }
        begin(line);
        if (!ensurePair(pd))
        {
            step.lines.add("# not posted: no QP");
            return;
        }
        final Pair pair = pd.pair;
        final int key = keys.get(keyN).value;
        final KeyName k = keys.get(keyN);
        final Object holder = holderOf(key);
        line(() -> line + "   # " + k.name + " = " + Script.key(key) + ": " + describeKey(k, holder));
        final MwM w = holder instanceof MwM x ? x : null;
        final boolean ok = w != null && w.type == MwType.TYPE_2 && (!w.bound || w.qp == pair.qb);
        final long wrId = nextWrId++;
        expectOutcome("ok", run(() -> pair.qb.sim.postSend(List.of(new SendWr(wrId, WrOpcode.LOCAL_INV, List.of(),
            EnumSet.of(SendFlag.SIGNALED), 0, 0, 0, 0, 0, key)))));
        poll(cqB, cqName, ok ? "SUCCESS" : "LOC_QP_OP_ERR");
        if (!ok)
        {
            pair.broken = true;
            return;
        }
        if (w.bound)
        {
            w.mr.windows--;
        }
        w.bound = false;
        w.mr = null;
        w.lo = 0;
        w.len = 0;
        w.rights = Set.of();
        w.qp = null;
    }

    // ------------------------------------------------------------------ actions: remote access

    /**
     * An RDMA READ, WRITE, fetch-and-add or compare-and-swap from qaN (pd_a) to [buf+off, +len) through the
     * responder qbN of pd_bN, with key kK.
     */
    void access(final KeyOps.Op op, final int pdIndex, final int keyN, final String buf, final long off,
        final int len, final String text, final long compareOrAdd, final long swap)
    {
        final String line = KeyOps.accessLine(op, pdIndex, keyN, buf, off, len, compareOrAdd, swap);
        if (skipUnbound(line, buf, "pd_b" + pdIndex, "k" + keyN))
        {
            return;
        }
        final PdM pd = pds.get(pdIndex);
        if (!pd.live)
        {
            skipStep(line, "pd_b" + pdIndex + " is closed");
            return;
        }
        begin(line);
        if (!ensurePair(pd))
        {
            step.lines.add("# not posted: no QP");
            return;
        }
        final Pair pair = pd.pair;
        final KeyName k = keys.get(keyN);
        final int key = k.value;
        final long remote = bufAddr(buf) + off;
        final boolean atomic = op == KeyOps.Op.FAA || op == KeyOps.Op.CAS;
        final int n = atomic ? 8 : len;
        final Access right = switch (op)
        {
            case READ -> Access.REMOTE_READ;
            case WRITE -> Access.REMOTE_WRITE;
            default -> Access.REMOTE_ATOMIC;
        };
        // The responder's checks: key (index, variant), PD, type 2 QP, rights, state, range; then alignment.
        final Object holder = holderOf(key);
        MrM target = null;
        if (holder instanceof MrM m && m.pd == pd && m.access.contains(right) && remote >= m.addr
            && n <= m.lengthBytes - (remote - m.addr) && remote - m.addr <= m.lengthBytes)
        {
            target = m;
        }
        else if (holder instanceof MwM w && w.pd == pd && w.bound && (w.type == MwType.TYPE_1 || w.qp == pair.qb)
            && w.rights.contains(right) && remote >= w.lo && n <= w.len - (remote - w.lo) && remote - w.lo <= w.len)
        {
            target = w.mr;
        }
        final String status = target == null ? "REM_ACCESS_ERR" : atomic && (remote & 7) != 0 ? "REM_INV_REQ_ERR"
            : "SUCCESS";
        recordStale(k, holder != null);
        // The requester's scratch: the data to write, or cleared to see what a READ or an atomic brings.
        final byte[] local = new byte[n];
        if (op == KeyOps.Op.WRITE)
        {
            System.arraycopy(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, local, 0, n);
        }
        else
        {
            Arrays.fill(local, (byte)'.');
        }
        line(() -> "write scratch \"" + new String(local, java.nio.charset.StandardCharsets.US_ASCII) + "\"");
        appA.write(scratch, local);
        System.arraycopy(local, 0, scratchModel, 0, n);
        line(() -> line + "   # " + k.name + " = " + Script.key(key) + ": " + describeKey(k, holder));
        final long wrId = nextWrId++;
        final List<Sge> sgl = List.of(new Sge(scratch, n, smr.lkey()));
        final SendWr wr = switch (op)
        {
            case READ -> new SendWr(wrId, WrOpcode.RDMA_READ, sgl, EnumSet.of(SendFlag.SIGNALED), remote, key, 0, 0,
                0, 0);
            case WRITE -> new SendWr(wrId, WrOpcode.RDMA_WRITE, sgl, EnumSet.of(SendFlag.SIGNALED), remote, key, 0,
                0, 0, 0);
            case FAA -> new SendWr(wrId, WrOpcode.ATOMIC_FETCH_AND_ADD, sgl, EnumSet.of(SendFlag.SIGNALED), remote,
                key, 0, compareOrAdd, 0, 0);
            case CAS -> new SendWr(wrId, WrOpcode.ATOMIC_CMP_AND_SWP, sgl, EnumSet.of(SendFlag.SIGNALED), remote, key,
                0, compareOrAdd, swap, 0);
        };
        expectOutcome("ok", run(() -> pair.qa.postSend(List.of(wr))));
        poll(cqA, "cq_a", status);
        if (!status.equals("SUCCESS"))
        {
            pair.broken = true;
            expectEqual(QpState.ERR, pair.qa.state(), "requester QP state after " + status);
            expectEqual(QpState.ERR, pair.qb.sim.state(), "responder QP state after " + status);
            final byte[] after = appA.read(scratch, n);
            if (!Arrays.equals(local, after))
            {
                throw failure(Mismatch.Kind.BYTES, "a refused " + op + " changed the requester's buffer to " + Script.hex(after));
            }
            return;
        }
        final MrM m = target;
        switch (op)
        {
            case WRITE -> mrWrite(m, remote, local);
            case READ ->
            {
                final byte[] expected = mrRead(m, remote, n);
                System.arraycopy(expected, 0, scratchModel, 0, n);
                line(() -> "expect bytes scratch " + Script.hex(expected));
                final byte[] got = appA.read(scratch, n);
                if (!Arrays.equals(expected, got))
                {
                    throw failure(Mismatch.Kind.BYTES, "READ of " + n + " bytes at 0x" + Long.toHexString(remote) + " through "
                        + m.name + " (" + k.name + ") gave " + Script.hex(got) + ", the model " + Script.hex(expected)
                        + " (the bytes of " + m.name + "'s pinned frames)");
                }
            }
            default ->
            {
                final byte[] before = mrRead(m, remote, 8);
                final long original = java.nio.ByteBuffer.wrap(before).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                    .getLong();
                final long updated = op == KeyOps.Op.FAA ? original + compareOrAdd
                    : original == compareOrAdd ? swap : original;
                mrWrite(m, remote, java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                    .putLong(updated).array());
                System.arraycopy(before, 0, scratchModel, 0, 8);
                line(() -> "expect bytes scratch " + Script.hex(before));
                final byte[] got = appA.read(scratch, 8);
                if (!Arrays.equals(before, got))
                {
                    throw failure(Mismatch.Kind.BYTES, op + " at 0x" + Long.toHexString(remote) + " returned " + Script.hex(got)
                        + ", the model's original value " + Script.hex(before));
                }
            }
        }
    }

    private static String describeKey(final KeyName k, final Object holder)
    {
        final String now = holder == null ? "names nothing" : "names " + describe(holder);
        return "issued to " + k.issuer + ", " + now;
    }

    /** Feeds the key-reuse report: an access with an MR key whose MR no longer holds it. */
    private void recordStale(final KeyName k, final boolean validates)
    {
        if (k.mrKey && k.allocationsAtDeath >= 0 && k.value != 0)
        {
            final int index = MptModel.index(k.value);
            final int reuses = mpt.allocations(index) - k.allocationsAtDeath;
            ReuseStats.Holder holder = ReuseStats.Holder.FREE;
            for (final MrM m : mrs.values())
            {
                if (m.live && MptModel.index(m.key) == index)
                {
                    holder = ReuseStats.Holder.MR;
                }
            }
            for (final MwM w : mws.values())
            {
                if (w.live && MptModel.index(w.tableKey) == index)
                {
                    holder = ReuseStats.Holder.WINDOW;
                }
            }
            stats.staleAccess(policy, reuses, holder, validates);
        }
    }

    // ------------------------------------------------------------------ final data check

    /**
     * Compares every byte of every live MR (read through the adapter's translation and the host's physical memory)
     * and of every present page of app_b (through its page table) with the model. At the first difference it adds a
     * step that shows it in the script: an RDMA READ of the MR (when it grants REMOTE_READ) or a CPU read of the
     * address, each with the model's bytes as its expectation, and runs it, so that the replay fails there too.
     */
    void checkAllBytes()
    {
        // One page of the simulator's bytes at a time, against the model's frame in place.
        final byte[] page = new byte[(int)PAGE];
        for (final MrM m : mrs.values())
        {
            if (!m.live)
            {
                continue;
            }
            int at = -1;
            for (long done = 0; done < m.lengthBytes && at < 0;)
            {
                final long va = m.addr + done;
                final int n = (int)Math.min(m.lengthBytes - done, PAGE - (va & (PAGE - 1)));
                final long phys = nicB.tables().translate(m.key, m.pd.sim.pdNum(), 0, va, n);
                if (phys < 0)
                {
                    throw failure("final check: " + m.name + " does not translate 0x" + Long.toHexString(va) + ": "
                        + dev.rnicsim.mtt.KeyCheck.ofTranslation(phys));
                }
                hostB.host().physicalMemory().read(phys, page, 0, n);
                final int in = (int)(va & (PAGE - 1));
                final int differs = Arrays.mismatch(mrFrame(m, va).bytes(), in, in + n, page, 0, n);
                if (differs >= 0)
                {
                    at = (int)done + differs;
                }
                done += n;
            }
            if (at < 0)
            {
                continue;
            }
            final byte[] want = mrRead(m, m.addr, (int)m.lengthBytes);
            final byte[] got = new byte[(int)m.lengthBytes];
            for (long done = 0; done < m.lengthBytes;)
            {
                final long va = m.addr + done;
                final int n = (int)Math.min(m.lengthBytes - done, PAGE - (va & (PAGE - 1)));
                hostB.host().physicalMemory().read(nicB.tables().translate(m.key, m.pd.sim.pdNum(), 0, va, n), got,
                    (int)done, n);
                done += n;
            }
            final long addr = m.addr + at;
            final int len = (int)Math.min(32, m.lengthBytes - at);
            final String detail = "final check: " + m.name + "'s bytes at 0x" + Long.toHexString(addr) + " are "
                + Script.hex(Arrays.copyOfRange(got, at, at + len)) + ", the model's "
                + Script.hex(Arrays.copyOfRange(want, at, at + len)) + " (read through the adapter's translation)";
            final int keyN = nameOf(m.key);
            final Buf b = bufferOf(addr);
            if (m.access.contains(Access.REMOTE_READ) && keyN >= 0 && b != null)
            {
                current = "final check of " + m.name;
                access(KeyOps.Op.READ, m.pd.index, keyN, b.name(), addr - b.addr(), len, null, 0, 0);
            }
            throw failure(Mismatch.Kind.BYTES, detail);
        }
        for (final Map.Entry<Long, Page> e : pages.entrySet())
        {
            final Page p = e.getValue();
            final long phys = appB.translate(e.getKey());
            if (p.swapped || p.frame == null || phys < 0)
            {
                continue;
            }
            final byte[] got = page;
            hostB.host().physicalMemory().read(phys, got, 0, got.length);
            final int at = Arrays.mismatch(p.frame.bytes(), got);
            if (at < 0)
            {
                continue;
            }
            final long addr = e.getKey() + at;
            final int len = (int)Math.min(32, PAGE - at);
            final Buf b = bufferOf(addr);
            if (b != null)
            {
                cpuRead(b.name(), addr - b.addr(), len);
            }
            throw failure(Mismatch.Kind.BYTES, "final check: the bytes at 0x" + Long.toHexString(addr) + " are "
                + Script.hex(Arrays.copyOfRange(got, at, at + len)) + ", the model's "
                + Script.hex(Arrays.copyOfRange(p.frame.bytes(), at, at + len)));
        }
    }

    /** The newest key name with this value, or -1. */
    private int nameOf(final int key)
    {
        int found = -1;
        for (final KeyName k : keys.values())
        {
            if (k.value == key)
            {
                found = k.label;
            }
        }
        return found;
    }

    /** The newest buffer whose range holds {@code addr}, or null. */
    private Buf bufferOf(final long addr)
    {
        Buf found = null;
        for (final Buf b : bufs.values())
        {
            if (addr >= b.addr() && addr < b.addr() + b.lengthBytes())
            {
                found = b;
            }
        }
        return found;
    }

    /** @return the script of this run with the model's invariants after its last step. */
    String replayScript()
    {
        return script.render(false);
    }
}
