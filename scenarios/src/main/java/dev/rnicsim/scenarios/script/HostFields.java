package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.scenarios.script.Session.Val;
import dev.rnicsim.simnic.GpuBuffer;
import dev.rnicsim.simnic.HwCounters;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimGpu;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.QpAttr;

/**
 * The fields of the machine a script builds ({@code NAME.FIELD}): a host (meminfo, vmstat, hugepages), a process and
 * the pages of its buffers, a device (its counters, MTT, ibv_query_device_ex fields), a QP (ibv_query_qp) and a GPU
 * and its buffers. Stateless.
 */
final class HostFields
{
    private HostFields()
    {
    }

    /** A field of a GPU: its VRAM and BAR1, in bytes, and the buffers it holds. */
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

    /** A field of a GPU buffer. */
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

    /** A field of a buffer: its first page's frame, page size and pin and map counts. */
    static Val bufferField(final Session.Buffer b, final String field)
    {
        final UserProcess p = b.process();
        final long phys = p.exited() ? -1 : p.translate(b.addr());
        final PhysicalMemory pm = p.host().physicalMemory();
        return Val.of(switch (field)
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

    /** A field of a QP: its number, state, type, queues and ibv_query_qp's answer. */
    static Val qpField(final SimQp q, final String field)
    {
        return switch (field)
        {
            case "num" -> Val.of(q.qpNum());
            case "state" -> Val.ofText(q.state().name());
            case "receives" -> Val.of(q.receivesPosted());
            case "sends_waiting" -> Val.of(q.sendsWaiting());
            case "type" -> Val.ofText(q.type().name());
            // the capacities the provider granted, which ibv_create_qp writes back (QpCaps)
            case "max_send_wr" -> Val.of(q.cap().maxSendWr());
            case "max_recv_wr" -> Val.of(q.cap().maxRecvWr());
            case "max_send_sge" -> Val.of(q.cap().maxSendSge());
            case "max_recv_sge" -> Val.of(q.cap().maxRecvSge());
            case "max_inline_data" -> Val.of(q.cap().maxInlineDataBytes());
            default -> qpAttrField(q.query(), field);
        };
    }

    /** The fields of ibv_query_qp's answer. */
    private static Val qpAttrField(final QpAttr a, final String field)
    {
        return Val.of(switch (field)
        {
            case "qkey" -> a.qkey() & 0xffffffffL;
            case "dest_qpn" -> a.destQpNum() & 0xffffffffL;
            case "path_mtu" -> QpAttr.mtuBytes(a.pathMtu());
            case "access" -> Access.toBits(a.qpAccessFlags());
            case "port" -> a.portNum();
            case "sq_psn" -> a.sqPsn() & 0xffffffffL;
            case "rq_psn" -> a.rqPsn() & 0xffffffffL;
            case "min_rnr_timer" -> a.minRnrTimer();
            case "timeout" -> a.timeout();
            case "max_rd_atomic" -> a.maxRdAtomic();
            case "max_dest_rd_atomic" -> a.maxDestRdAtomic();
            case "retry_cnt" -> a.retryCnt();
            case "rnr_retry" -> a.rnrRetry();
            default -> 0;
        });
    }

    /** A field of a process: pinned_vm, locked_vm, RLIMIT_MEMLOCK, VMAs. */
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

    /** A field of a device: a counter, an MTT figure or an ibv_query_device_ex field. */
    static long deviceField(final ScriptLine l, final SimDevice d, final String field)
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
        if (HwCounters.known(field))
        {
            return HwCounters.value(d, field);
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

    /** A {@code /proc/vmstat} counter of a host. */
    private static long vmEvent(final ScriptLine l, final Host h, final String field)
    {
        for (final VmEvent e : VmEvent.values())
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
                return !known ? 0 : field.startsWith("hugepages_free_") ? h.hugepagesFree(size)
                    : h.hugepagesTotal(size);
            }
        }
        throw l.error("a host has no field '" + field + "'");
    }

    /** A field of a host: meminfo in bytes, hugepages, vmstat. */
    static long hostField(final ScriptLine l, final Host h, final String field)
    {
        final PhysicalMemory pm = h.physicalMemory();
        return switch (field)
        {
            case "mem_total" -> pm.totalFrames() << PhysicalMemory.FRAME_SHIFT;
            case "mem_free" -> pm.freeFrames() << PhysicalMemory.FRAME_SHIFT;
            case "mem_used" -> pm.usedFrames() << PhysicalMemory.FRAME_SHIFT;
            default -> field.startsWith("hugepages_") ? hugepagesField(l, h, field) : vmEvent(l, h, field);
        };
    }
}
