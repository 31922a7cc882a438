package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Script verbs of memory registration: {@code reg} (ibv_reg_mr, pinned or on-demand paging, and peer memory),
 * {@code dereg}, {@code rereg} (ibv_rereg_mr and its IBV_REREG_MR_ERR_* outcomes) and {@code advise}
 * (ibv_advise_mr). Each prints what the registration did: keys, MTT entries, pages pinned and its time. Stateless.
 */
final class RegistrationVerbs
{
    private RegistrationVerbs()
    {
    }

    /** {@code reg NAME PD ADDR SIZE [access=] [iova=]} (ibv_reg_mr), also {@code implicit} and {@code dmabuf=}. */
    static Outcome reg(final Session s, final ScriptLine l)
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
            + "%s (%d reserved), %s pinned; %s", mr.lkey(), mr.rkey(), MrFields.mrField(mr, "index"),
            MrFields.mrField(mr, "variant"), Units.bytes(mr.pageSizeBytes()),
            Units.count(mr.mttEntries(), "MTT entry", "MTT entries"), mr.mttEntriesReserved(),
            Units.count(mr.pinnedPages(), "page", "pages"), Units.duration(e.durationNs())));
    }

    /** What registering an ODP MR did: its keys, its MTT entries, what it mapped at once, and no pinning. */
    private static String odpRegistered(final SimOdpMr mr, final RegistrationEvent e)
    {
        final String keys = String.format(Locale.ROOT, "lkey=0x%08x rkey=0x%08x (index %d, variant %d)", mr.lkey(),
            mr.rkey(), MrFields.keyIndex(mr.pd(), mr.lkey()), MrFields.keyVariant(mr.pd(), mr.lkey()));
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

    /** {@code dereg MR}: ibv_dereg_mr of any kind of MR; the name keeps the old key to try it later. */
    static Outcome dereg(final Session s, final ScriptLine l)
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
            + Units.count(e.cacheEntriesDropped(), "cached translation", "cached translations") + " invalidated; "
            + Units.duration(e.durationNs())
            + "; the name " + l.args().get(0) + " keeps the old key 0x" + Integer.toHexString(mr.lkey())
            + " to try it later");
    }

    /** {@code rereg MR [pd=] [addr=] [size=] [access=]}: ibv_rereg_mr, its flags from the options given. */
    static Outcome rereg(final Session s, final ScriptLine l)
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
            return Outcome.failed(e.errnoName().name(), Objects.toString(e.getMessage(), "") + " (IBV_REREG_MR_"
                + s.lastReregError
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

    /** {@code advise MR prefetch|prefetch_write|prefetch_no_fault [ADDR SIZE] [flush] [pd=]}: ibv_advise_mr. */
    static Outcome advise(final Session s, final ScriptLine l)
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
            len = PostVerbs.sgeLength(s.evalNum(l, l.args().get(3))); // ibv_advise_mr takes an ibv_sge list
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
}
