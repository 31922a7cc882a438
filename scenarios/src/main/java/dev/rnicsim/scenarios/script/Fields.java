package dev.rnicsim.scenarios.script;

import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.simnic.SimCounter;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The fields a script can read with {@code name.field}, per kind of name, and those of {@code last}. Stateless.
 */
public final class Fields
{
    /** Fields of {@code last}: the step before the {@code expect}. */
    public static final Set<String> LAST = Set.of("duration_ns", "count", "completions", "status", "byte_len", "imm",
        "wr_id", "invalidated_rkey", "rereg_error", "src_qp", "wc_flags", "grh", "slid", "sl", "pkey_index",
        "dlid_path_bits");

    /** Fields of a pool: its {@code StrategyCounters}, and the fragments handed out and not freed. */
    static final List<String> STRATEGY_POOL = List.of("hits", "misses", "evictions", "invalidations",
        "registrations", "bytes_registered", "live", "live_bytes", "fragments");

    /** Fields of a cache: its {@code StrategyCounters}, and the idle entries it holds. */
    static final List<String> STRATEGY_CACHE = List.of("hits", "misses", "evictions", "invalidations",
        "registrations", "bytes_registered", "live", "live_bytes", "idle");

    private static final Map<Kind, Set<String>> BY_KIND = new EnumMap<>(Kind.class);

    static
    {
        BY_KIND.put(Kind.MR, Set.of("addr", "length", "iova", "lkey", "rkey", "page_size", "mtt_entries",
            "mtt_reserved", "pinned_pages", "index", "variant", "closed", "odp", "implicit", "page_faults",
            "entries_mapped", "entries_zapped", "children", "mapped_pages", "kind", "moves", "revoked", "bar1"));
        BY_KIND.put(Kind.FASTMR, Set.of("addr", "length", "iova", "lkey", "rkey", "index", "variant", "max_num_sg",
            "valid", "closed"));
        BY_KIND.put(Kind.MW, Set.of("rkey", "type", "index", "variant", "bound", "addr", "length", "qp", "closed"));
        BY_KIND.put(Kind.BUFFER, Set.of("phys", "page_size", "length", "pin_count", "map_count"));
        final Set<String> proc = Set.of("pinned_vm", "pinned_vm_bytes", "locked_vm", "memlock", "vmas", "pid",
            "exited", "max_map_count");
        BY_KIND.put(Kind.PROCESS, proc);
        BY_KIND.put(Kind.CONTEXT, proc);
        final Set<String> device = new LinkedHashSet<>();
        for (final SimCounter c : SimCounter.values())
        {
            device.add(c.label());
        }
        device.addAll(dev.rnicsim.simnic.HwCounters.MLX5.names());
        device.addAll(dev.rnicsim.simnic.HwCounters.RXE.names());
        device.addAll(Set.of("mtt_capacity", "mtt_free", "mtt_largest_free", "mtt_requested", "max_mr",
            "cache_entries", "page_size_cap", "relaxed_ordering", "chunks_placed", "chunks_reordered",
            "write_overtakes", "chunks_in_flight"));
        device.addAll(DeviceFields.names());
        BY_KIND.put(Kind.DEVICE, Set.copyOf(device));
        BY_KIND.put(Kind.DM, Set.of("length"));
        final Set<String> host = new LinkedHashSet<>(Set.of("mem_total", "mem_free", "mem_used"));
        for (final String size : List.of("64k", "2m", "32m", "512m", "1g", "16g"))
        {
            host.add("hugepages_free_" + size);
            host.add("hugepages_total_" + size);
        }
        for (final VmEvent e : VmEvent.values())
        {
            host.add(e.procName());
        }
        BY_KIND.put(Kind.HOST, Set.copyOf(host));
        BY_KIND.put(Kind.QP, Set.of("num", "state", "receives", "sends_waiting", "type", "qkey", "dest_qpn",
            "path_mtu", "access", "port", "sq_psn", "rq_psn", "min_rnr_timer", "timeout", "max_rd_atomic",
            "max_dest_rd_atomic", "retry_cnt", "rnr_retry", "max_send_wr", "max_recv_wr", "max_send_sge",
            "max_recv_sge", "max_inline_data"));
        BY_KIND.put(Kind.SRQ, Set.of("receives", "max_wr", "max_sge", "limit", "limit_events", "qps", "closed",
            "num"));
        BY_KIND.put(Kind.XRCD, Set.of("srqs", "qps", "closed"));
        BY_KIND.put(Kind.AH, Set.of("port", "closed"));
        BY_KIND.put(Kind.CQ, Set.of("depth", "entries"));
        BY_KIND.put(Kind.PD, Set.of("num"));
        BY_KIND.put(Kind.FRAGMENT, Set.of("addr", "length", "lkey", "rkey"));
        BY_KIND.put(Kind.HANDLE, Set.of("addr", "length", "lkey", "rkey", "hit"));
        BY_KIND.put(Kind.POOL, Set.copyOf(STRATEGY_POOL));
        BY_KIND.put(Kind.CACHE, Set.copyOf(STRATEGY_CACHE));
        BY_KIND.put(Kind.GPU, Set.of("vram", "vram_used", "bar1", "bar1_used", "buffers"));
        BY_KIND.put(Kind.GPU_BUFFER, Set.of("addr", "length", "vram_offset", "freed"));
        BY_KIND.put(Kind.DMABUF, Set.of("fd", "offset", "length", "closed"));
        BY_KIND.put(Kind.WATCH, Set.of("seen", "torn", "placements"));
        BY_KIND.put(Kind.VALUE, Set.of());
    }

    private Fields()
    {
    }

    /**
     * @param kind a kind of name.
     * @return its readable fields.
     */
    public static Set<String> of(final Kind kind)
    {
        return BY_KIND.get(kind);
    }
}
