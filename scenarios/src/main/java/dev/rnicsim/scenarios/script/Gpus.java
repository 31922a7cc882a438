package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.FlagWatch;
import dev.rnicsim.simnic.GpuBuffer;
import dev.rnicsim.simnic.GpuTopology;
import dev.rnicsim.simnic.ProviderRule;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimDmabuf;
import dev.rnicsim.simnic.SimGpu;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import java.util.Collections;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The GPU verbs of the script language ({@code gpu}, {@code gpualloc}, {@code gpuwrite}, {@code gpufree},
 * {@code gpumove}, {@code memcpy}, {@code dmabuf}), registration of GPU memory (peer memory and
 * {@code reg ... dmabuf=}), the polling CPU of {@code watch}, and their views. Stateless.
 */
final class Gpus
{
    /** A GPU virtual address and the GPU it belongs to. */
    record At(SimGpu gpu, long va)
    {
    }

    private static final long MAX_COPY = 1L << 30;

    private Gpus()
    {
    }

    /**
     * @return the GPU address a value names (a GPU buffer's name, or an MR over GPU memory, plus an offset), or null
     * when it names none.
     */
    static At at(final Session s, final ScriptLine l, final Session.Val v)
    {
        if (v.mr() instanceof SimPeerMr m)
        {
            final Long first = s.peerFirstVa.get(m);
            return new At(m.gpu(), (first == null ? m.addr() : first) + (v.num() - m.iova()));
        }
        return v.gpu() == null ? null : new At(v.gpu().gpu(), v.num());
    }

    private static At gpuAddress(final Session s, final ScriptLine l, final String expr, final String role)
    {
        final At a = at(s, l, s.eval(l, expr));
        if (a == null)
        {
            throw l.error("'" + expr + "' is no GPU address" + (role.isEmpty() ? "" : " (" + role + ")")
                + ": start it with a GPU buffer's name (gpualloc) or an MR over GPU memory");
        }
        return a;
    }

    private static Session.Val hostAddress(final Session s, final ScriptLine l, final String expr, final String role)
    {
        final Session.Val v = s.eval(l, expr);
        if (at(s, l, v) != null || v.process() == null)
        {
            throw l.error("'" + expr + "' is no host address (" + role + "): start it with a buffer or MR name of a "
                + "process");
        }
        return v;
    }

    private static int copySize(final Session s, final ScriptLine l, final String expr)
    {
        final long n = s.evalNum(l, expr);
        if (n <= 0 || n > MAX_COPY)
        {
            throw l.error("SIZE '" + expr + "' is " + n + "; give 1 byte to 1 GiB");
        }
        return (int)n;
    }

    // ------------------------------------------------------------------ gpu, gpualloc, gpuwrite, gpufree, gpumove

    static Outcome gpu(final Session s, final ScriptLine l)
    {
        final Map<String, String> o = l.options();
        final SimHost host = s.get(l, l.args().get(1), SimHost.class);
        final long vram = s.evalNum(l, o.getOrDefault("vram", "16G"));
        final long bar1 = o.containsKey("bar1") ? s.evalNum(l, o.get("bar1")) : SimGpu.DEFAULT_BAR1_BYTES;
        final GpuTopology topology = GpuTopology.valueOf(o.getOrDefault("topology", "PIX").toUpperCase(Locale.ROOT));
        final SimGpu g;
        try
        {
            g = host.addGpu(l.args().get(0), vram, bar1, topology);
        }
        catch (final IllegalArgumentException e)
        {
            return Outcome.failed("EINVAL", e.getMessage());
        }
        s.names.put(l.args().get(0), g);
        return Outcome.ok(String.format(Locale.ROOT, "%s VRAM at bus 0x%x, BAR1 aperture %s, PCIe path to the NIC "
            + "%s (%s)", Units.bytes(g.vramBytes()), g.memory().baseAddr(), Units.bytes(g.bar1Bytes()), topology,
            path(topology)));
    }

    /** What a topology means, in the words of {@code nvidia-smi topo -m}'s legend. */
    static String path(final GpuTopology t)
    {
        return switch (t)
        {
            case PIX -> "at most one PCIe bridge";
            case PXB -> "several PCIe bridges, no host bridge";
            case PHB -> "through the CPU's PCIe host bridge";
            case NODE -> "between host bridges of one NUMA node";
            case SYS -> "across the link between the sockets";
        };
    }

    static Outcome alloc(final Session s, final ScriptLine l)
    {
        final SimGpu g = s.get(l, l.args().get(1), SimGpu.class);
        final GpuBuffer b = g.allocate(s.evalNum(l, l.args().get(2)));
        s.names.put(l.args().get(0), b);
        return Outcome.ok(String.format(Locale.ROOT, "cudaMalloc: GPU VA 0x%x, %s (VRAM offset 0x%x); %s of %s VRAM "
            + "in use", b.gpuVa(), Units.bytes(b.sizeBytes()), b.vramOffset(), Units.bytes(g.vramUsedBytes()),
            Units.bytes(g.vramBytes())));
    }

    static Outcome write(final Session s, final ScriptLine l)
    {
        final At a = gpuAddress(s, l, l.args().get(0), "");
        final byte[] data = ProcessVerbs.filled(s, l, ProcessVerbs.data(l.args().get(1)), 2);
        a.gpu().write(a.va(), data);
        return Outcome.ok(data.length + " bytes at GPU VA 0x" + Long.toHexString(a.va()) + " of " + a.gpu().name());
    }

    /** The named MRs over one GPU buffer that are still registered. */
    private static List<SimPeerMr> mrsOver(final Session s, final GpuBuffer b)
    {
        final Set<SimPeerMr> out = Collections.newSetFromMap(new IdentityHashMap<>());
        for (final Object o : s.names.values())
        {
            if (o instanceof SimPeerMr m && m.buffer() == b && !m.isClosed())
            {
                out.add(m);
            }
        }
        return List.copyOf(out);
    }

    static Outcome free(final Session s, final ScriptLine l)
    {
        final GpuBuffer b = s.get(l, l.args().get(0), GpuBuffer.class);
        final SimGpu g = b.gpu();
        final List<SimPeerMr> before = mrsOver(s, b).stream().filter(m -> !m.isRevoked()).toList();
        final long used = g.vramUsedBytes();
        g.free(b);
        final long revoked = before.stream().filter(SimPeerMr::isRevoked).count();
        final long returned = used - g.vramUsedBytes();
        return Outcome.ok(String.format(Locale.ROOT, "cudaFree: %s%s", returned > 0 ? Units.bytes(returned)
            + " of VRAM returned" : "the VRAM stays allocated while a dma-buf of it is open or registered",
            revoked == 0 ? "" : "; the peer-memory client revoked " + revoked + " MR(s) first: the NIC no longer "
            + "translates their keys"));
    }

    static Outcome move(final Session s, final ScriptLine l)
    {
        final GpuBuffer b = s.get(l, l.args().get(0), GpuBuffer.class);
        final long from = b.vramOffset();
        final Map<SimPeerMr, Long> moves = new IdentityHashMap<>();
        for (final SimPeerMr m : mrsOver(s, b))
        {
            moves.put(m, m.moves());
        }
        b.gpu().move(b);
        final long told = moves.entrySet().stream().filter(e -> e.getKey().moves() > e.getValue()).count();
        return Outcome.ok(String.format(Locale.ROOT, "moved in VRAM from offset 0x%x to 0x%x; %s", from,
            b.vramOffset(), told == 0 ? "no dynamic importer to tell" : "move_notify told " + told + " dynamic "
            + "importer(s) first: translation zapped, BAR1 unmapped, the next access faults"));
    }

    static Outcome memcpy(final Session s, final ScriptLine l)
    {
        final boolean toHost = l.args().get(0).equals("d2h");
        final int size = copySize(s, l, l.args().get(3));
        final long t0 = s.fabric.clock().nowNs();
        final String what;
        if (toHost)
        {
            final Session.Val dst = hostAddress(s, l, l.args().get(1), "DST of d2h");
            final At src = gpuAddress(s, l, l.args().get(2), "SRC of d2h");
            src.gpu().copyToHost(src.va(), dst.process(), dst.num(), size);
            what = String.format(Locale.ROOT, "D2H %s from GPU VA 0x%x of %s to 0x%x", Units.bytes(size), src.va(),
                src.gpu().name(), dst.num());
        }
        else
        {
            final At dst = gpuAddress(s, l, l.args().get(1), "DST of h2d");
            final Session.Val src = hostAddress(s, l, l.args().get(2), "SRC of h2d");
            dst.gpu().copyFromHost(src.process(), src.num(), dst.va(), size);
            what = String.format(Locale.ROOT, "H2D %s from 0x%x to GPU VA 0x%x of %s", Units.bytes(size), src.num(),
                dst.va(), dst.gpu().name());
        }
        return Outcome.ok("cudaMemcpy " + what + ": " + Units.duration(s.fabric.clock().nowNs() - t0));
    }

    static Outcome export(final Session s, final ScriptLine l)
    {
        final GpuBuffer b = s.get(l, l.args().get(1), GpuBuffer.class);
        final long offset = l.args().size() > 2 ? s.evalNum(l, l.args().get(2)) : 0;
        final long length = l.args().size() > 3 ? s.evalNum(l, l.args().get(3)) : b.sizeBytes();
        final int fd = b.gpu().exportDmabuf(b, offset, length);
        s.names.put(l.args().get(0), new Session.DmabufBinding(b.gpu(), fd, b, offset, length));
        return Outcome.ok(String.format(Locale.ROOT, "fd %d: dma-buf of GPU VA 0x%x+%s (cuMemGetHandleForAddressRange)",
            fd, b.gpuVa() + offset, Units.bytes(length)));
    }

    // ------------------------------------------------------------------ registration

    /** {@code device ... dmabuf=}: which dma-buf attachment the device's driver makes, if any. */
    static DeviceProfile withDmabuf(final DeviceProfile p, final String word)
    {
        final Set<ProviderRule> rules = EnumSet.noneOf(ProviderRule.class);
        rules.addAll(p.providerRules());
        rules.remove(ProviderRule.DMABUF_DYNAMIC);
        rules.remove(ProviderRule.DMABUF_PINNED);
        switch (word)
        {
            case "dynamic" -> rules.add(ProviderRule.DMABUF_DYNAMIC);
            case "pinned" -> rules.add(ProviderRule.DMABUF_PINNED);
            default ->
            {
            }
        }
        return p.withProviderRules(rules);
    }

    /** The dma-buf support of a profile, for the {@code device} line. */
    static String dmabufNote(final DeviceProfile p)
    {
        if (p.follows(ProviderRule.DMABUF_DYNAMIC))
        {
            return ", dma-buf MRs dynamic (move_notify)";
        }
        return p.follows(ProviderRule.DMABUF_PINNED) ? ", dma-buf MRs pinned (dma_buf_pin)" : ", no dma-buf MRs";
    }

    /**
     * {@code reg NAME PD OFFSET SIZE dmabuf=FD [iova=] [access=]}: ibv_reg_dmabuf_mr. The iova defaults to the GPU
     * virtual address of the first byte, so that the MR's name plus an offset addresses the buffer as its own name
     * does.
     */
    static Outcome regDmabuf(final Session s, final ScriptLine l, final SimPd pd, final long offset, final long length,
        final Set<Access> access)
    {
        final String fdText = l.options().get("dmabuf");
        final SimHost host = pd.context().device().host();
        if (s.names.get(fdText.strip()) instanceof Session.DmabufBinding d && d.gpu().host() != host)
        {
            throw l.error("dma-buf '" + fdText + "' was exported on host " + d.gpu().host().name() + ", and PD "
                + l.args().get(1) + " is on host " + host.name() + ": a file descriptor is good in its own host only");
        }
        final int fd = s.evalInt(l, fdText);
        final SimDmabuf d = host.dmabuf(fd);
        final long first = d == null ? offset : d.buffer().gpuVa() + d.offset() + offset;
        final long iova = l.options().containsKey("iova") ? s.evalNum(l, l.options().get("iova")) : first;
        final MemoryRegion mr = pd.regDmabufMr(offset, length, iova, fd, access);
        final SimPeerMr peer = (SimPeerMr)mr;
        s.names.put(l.args().get(0), peer);
        s.peerFirstVa.put(peer, first);
        final List<RegistrationEvent> trace = pd.context().device().recentRegistrations();
        return Outcome.ok(registered(peer, trace.get(trace.size() - 1)));
    }

    /** What registering GPU memory did. */
    static String registered(final SimPeerMr mr, final RegistrationEvent e)
    {
        final SimGpu g = mr.gpu();
        return String.format(Locale.ROOT, "lkey=0x%08x rkey=0x%08x (index %d, variant %d); %s over %s memory "
            + "(topology %s): %d MTT entries, %s of BAR1 mapped (%s of %s in use), no host page pinned; %s; %s",
            mr.lkey(), mr.rkey(), (mr.lkey() >>> 8) & 0xffffff, mr.lkey() & 0xff, mr.kind(), g.name(), g.topology(),
            mr.mttEntries(), Units.bytes(mr.bar1MappedBytes()), Units.bytes(g.bar1UsedBytes()),
            Units.bytes(g.bar1Bytes()), kindNote(mr.kind()), Units.duration(e.durationNs()));
    }

    private static String kindNote(final SimPeerMr.Kind kind)
    {
        return switch (kind)
        {
            case PEER_MEMORY -> "the peer-memory client pinned the GPU pages (nvidia_p2p_get_pages): the buffer cannot "
                + "move, and cudaFree revokes the MR";
            case DMABUF_PINNED -> "dma_buf_pin: the exporter cannot move the buffer while the MR lives";
            case DMABUF_DYNAMIC -> "dynamic attachment: a move calls move_notify, and the next access faults the "
                + "translation back";
        };
    }

    static Outcome dereg(final ScriptLine l, final SimPeerMr mr)
    {
        if (mr.isClosed())
        {
            return Outcome.failed("EINVAL", "MR " + l.args().get(0) + " is deregistered already");
        }
        final long bar1 = mr.bar1MappedBytes();
        mr.close();
        final List<RegistrationEvent> trace = mr.pd().context().device().recentRegistrations();
        return Outcome.ok(String.format(Locale.ROOT, "MR over GPU memory (%s) deregistered: %s of BAR1 unmapped, "
            + "%d MTT entries zapped; %s; the name %s keeps the old key 0x%x to try it later", mr.kind(),
            Units.bytes(bar1), mr.mttEntries(), Units.duration(trace.get(trace.size() - 1).durationNs()),
            l.args().get(0), mr.lkey()));
    }

    // ------------------------------------------------------------------ watch

    static Outcome watch(final Session s, final ScriptLine l)
    {
        final Map<String, String> o = l.options();
        final SimDevice d = s.get(l, l.args().get(1), SimDevice.class);
        final Session.Val flag = s.eval(l, o.get("flag"));
        final Session.Val data = s.eval(l, o.get("data"));
        if (flag.process() == null || at(s, l, flag) != null || data.process() == null || at(s, l, data) != null)
        {
            throw l.error("watch: flag= and data= must be host addresses of one process (buffer or MR names)");
        }
        if (flag.process() != data.process())
        {
            throw l.error("watch: flag= and data= lie in different processes; one CPU polls one address space");
        }
        if (flag.process().host() != d.host().host())
        {
            final String where = s.hosts.keySet().stream().filter(h -> h.host() == flag.process().host())
                .map(SimHost::name).findFirst().orElse("?");
            throw l.error("watch: the flag is in host " + where + ", and device "
                + l.args().get(1) + " writes into host " + d.host().name() + "; watch the device that places the "
                + "writes (the responder of a WRITE)");
        }
        final int length = copySize(s, l, o.get("length"));
        final long value = s.evalNum(l, o.getOrDefault("value", "1"));
        if (s.names.get(l.args().get(0)) instanceof FlagWatch old)
        {
            old.close();
        }
        final FlagWatch w = d.watchFlag(flag.process(), flag.num(), value, data.num(), length);
        s.names.put(l.args().get(0), w);
        return Outcome.ok(String.format(Locale.ROOT, "a CPU of %s polls the 8-byte flag at 0x%x for %d after every "
            + "chunk %s places, and reads %s at 0x%x once it holds that value", d.host().name(), flag.num(), value,
            l.args().get(1), Units.bytes(length), data.num()));
    }

    // ------------------------------------------------------------------ views

    /** {@code show gpu NAME}. */
    static String gpuView(final SimGpu g)
    {
        final StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "GPU %s in host %s: %s VRAM (%s in use), "
            + "BAR1 %s (%s mapped for peers), PCIe path to the NIC %s (%s)", g.name(), g.host().name(),
            Units.bytes(g.vramBytes()), Units.bytes(g.vramUsedBytes()), Units.bytes(g.bar1Bytes()),
            Units.bytes(g.bar1UsedBytes()), g.topology(), path(g.topology())));
        for (final GpuBuffer b : g.buffers())
        {
            sb.append(String.format(Locale.ROOT, "%nbuffer GPU VA 0x%x, %s at VRAM offset 0x%x", b.gpuVa(),
                Units.bytes(b.sizeBytes()), b.vramOffset()));
        }
        return sb.toString();
    }

    /** {@code show mr} of an MR over GPU memory. */
    static String mrView(final SimPeerMr m)
    {
        final GpuBuffer b = m.buffer();
        return String.format(Locale.ROOT, "MR over GPU memory (%s) iova=0x%x length=%s access=%s%n"
            + "lkey=0x%08x rkey=0x%08x: MPT index %d, variant %d%n"
            + "GPU %s buffer 0x%x+%s at VRAM offset 0x%x%s, topology %s; %d MTT entries; %s of BAR1 mapped; "
            + "%d move(s) notified, %d fault(s) re-mapped it%s%s", m.kind(), m.iova(), Units.bytes(m.lengthBytes()),
            m.access(), m.lkey(), m.rkey(), (m.lkey() >>> 8) & 0xffffff, m.lkey() & 0xff, m.gpu().name(), b.gpuVa(),
            Units.bytes(b.sizeBytes()), b.vramOffset(), b.isFreed() ? " (freed)" : "", m.gpu().topology(),
            m.mttEntries(), Units.bytes(m.bar1MappedBytes()), m.moves(), m.pageFaults(),
            m.isRevoked() ? "\n(revoked by the peer-memory client: the buffer was freed; its keys no longer translate)"
            : "", m.isClosed() ? "\n(deregistered: the keys no longer translate)" : "");
    }
}
