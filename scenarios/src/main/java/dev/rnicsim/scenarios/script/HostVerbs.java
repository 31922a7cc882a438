package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import dev.rnicsim.simnic.DevinfoResult;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimHost;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Script verbs that build the simulated fabric: {@code host} (a machine with its RAM, huge-page pools, THP and fork
 * settings, RLIMIT_MEMLOCK), {@code device} (an RDMA adapter from a built-in profile or an {@code ibv_devinfo} dump),
 * {@code process} and {@code open} (a process, and the context it opens on a device). Stateless.
 */
final class HostVerbs
{
    private HostVerbs()
    {
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

    /**
     * {@code host NAME [ram=] [memlock=] [hugepages2m=] [thp=] [fork=] ...}: a host, its RAM, huge-page pools and
     * defaults for its processes.
     */
    static Outcome host(final Session s, final ScriptLine l)
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
                pools.append(' ').append(size.word().toUpperCase(Locale.ROOT)).append('=')
                    .append(config.hugepages(size));
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

    /**
     * {@code device NAME HOST [profile=|devinfo=FILE] [log_num_mtt=] [max_mr=] [cache=] [keys=] [dmabuf=]}: an adapter
     * in a host.
     */
    static Outcome device(final Session s, final ScriptLine l)
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
        // the netdev's MTU and address, checked before the device exists so a refusal adds nothing
        final dev.rnicsim.simnic.PortNetdev netdev = new dev.rnicsim.simnic.PortNetdev();
        try
        {
            for (final String option : List.of("netdev_mtu", "ipv4"))
            {
                final String off = o.containsKey(option) ? dev.rnicsim.simnic.PortNetdev.refusalOffEthernet(p,
                    option + "=" + o.get(option)) : null;
                if (off != null)
                {
                    return Outcome.failed("EINVAL", off);
                }
            }
            if (o.containsKey("netdev_mtu"))
            {
                final long mtu = s.evalNum(l, o.get("netdev_mtu"));
                dev.rnicsim.simnic.PortNetdev.checkMtu(mtu, "netdev_mtu=" + o.get("netdev_mtu"));
                netdev.mtuBytes((int)mtu);
            }
            netdev.ipv4(o.get("ipv4"));
            if (o.containsKey("ipv4"))
            {
                dev.rnicsim.simnic.PortNetdev.checkFree(host.fabric(), o.get("ipv4"), null);
            }
        }
        catch (final dev.rnicsim.verbs.VerbsException e)
        {
            return Outcome.failed("EINVAL", e.getMessage());
        }
        final SimDevice d = host.addDevice("sim:" + host.name() + "/" + l.args().get(0), p);
        if (o.containsKey("netdev_mtu"))
        {
            d.netdev().mtuBytes(netdev.mtuBytes());
        }
        d.netdev().ipv4(o.get("ipv4"));
        s.names.put(l.args().get(0), d);
        final MttCounters m = d.tables().mtt().counters();
        return Outcome.ok(p.name() + " (" + p.driver() + "): max_mr " + p.attributes().maxMr() + ", MTT "
            + m.capacityEntries() + " entries (" + p.mtt().allocator().name().toLowerCase(Locale.ROOT)
            + "), page_size_cap 0x" + Long.toHexString(p.attributes().pageSizeCap()) + ", keys "
            + p.variantPolicy().name().toLowerCase(Locale.ROOT) + (o.containsKey("dmabuf") ? Gpus.dmabufNote(p) : "")
            + (o.containsKey("netdev_mtu") || o.containsKey("ipv4") ? ", netdev MTU " + d.netdev().mtuBytes()
            + " (active_mtu " + dev.rnicsim.verbs.QpAttr.mtuBytes(d.portAttributes().activeMtu()) + ")"
            + (o.containsKey("ipv4") ? ", IPv4 " + o.get("ipv4") : "") : "")
            + defaulted);
    }

    /** A new process on a host, with the host's RLIMIT_MEMLOCK and CAP_IPC_LOCK unless the line gives its own. */
    private static UserProcess spawn(final Session s, final ScriptLine l, final SimHost host, final String name)
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

    /** {@code process NAME HOST [memlock=] [cap_ipc_lock=] [env=]}: a process without a device. */
    static Outcome process(final Session s, final ScriptLine l)
    {
        ProcessChecks.refuseSecondProcess(s, l);
        final UserProcess p = spawn(s, l, s.get(l, l.args().get(1), SimHost.class), l.args().get(0));
        s.names.put(l.args().get(0), p);
        return Outcome.ok("pid " + p.pid() + ", RLIMIT_MEMLOCK " + memlock(p) + Forks.envNote(p));
    }

    /** @return a process's RLIMIT_MEMLOCK as text, and CAP_IPC_LOCK when it has it. */
    private static String memlock(final UserProcess p)
    {
        return (p.rlimitMemlockBytes() == UserProcess.RLIM_INFINITY ? "unlimited" : Units.bytes(p.rlimitMemlockBytes()))
            + (p.capIpcLock() ? ", CAP_IPC_LOCK" : "");
    }

    /** {@code open NAME DEVICE [process=P] [memlock=] [cap_ipc_lock=] [env=]}: ibv_open_device in a process. */
    static Outcome open(final Session s, final ScriptLine l)
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
}
