package dev.rnicsim.scenarios.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.mtt.MttAllocatorKind;
import dev.rnicsim.scenarios.plan.Plan;
import dev.rnicsim.scenarios.plan.Planner;
import dev.rnicsim.scenarios.plan.Sizes;
import dev.rnicsim.scenarios.plan.Workload;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.ProviderRule;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * How {@code rnicsim plan} prints a plan: text in one unit style ({@link Sizes}: IEC sizes, the exact byte count
 * where a size is not a whole unit), or JSON in bytes and ns, whose shape the JSON Schema
 * {@code dev/rnicsim/scenarios/plan/plan.schema.json} (on the class path) describes. Stateless.
 */
final class PlanReport
{
    /** Where the schema of {@link #json} lives on the class path. */
    static final String SCHEMA = "/dev/rnicsim/scenarios/plan/plan.schema.json";
    /** The group table's least column widths: a plan of short names and whole sizes keeps one layout. */
    private static final int[] GROUP_WIDTHS = {16, 12, 10, 8, 12, 12, 12, 12, 12, 12, 12};
    /** The limit table's least column widths. */
    private static final int[] LIMIT_WIDTHS = {20, 30, 30, 6};

    private PlanReport()
    {
    }

    /**
     * The device a plan was made for, and where each attribute the planner uses came from.
     *
     * @param profile the device profile.
     * @param source  {@code profile NAME}, {@code dump FILE} or {@code device NAME}.
     * @param origin  how the base values were obtained: {@code profile}, {@code dump} or {@code device}.
     * @param set     devinfo names given with {@code --set}.
     * @param mttFromOptions true when --log-num-mtt or --log-mtts-per-seg sized the MTT.
     */
    record DeviceSource(DeviceProfile profile, String source, String origin, Set<String> set, boolean mttFromOptions)
    {
        /** Each attribute the planner uses, with its value and where it came from. */
        Map<String, Object[]> attributes()
        {
            final DeviceProfile p = profile;
            final Map<String, Object[]> out = new LinkedHashMap<>();
            out.put("max_mr", new Object[] {p.attributes().maxMr(), attr("max_mr")});
            out.put("max_mr_size", new Object[] {p.attributes().maxMrSizeBytes(), attr("max_mr_size")});
            out.put("page_size_cap", new Object[] {p.attributes().pageSizeCap(), attr("page_size_cap")});
            out.put("general_odp_caps", new Object[] {p.attributes().odpCaps().generalCaps(),
                attr("general_odp_caps")});
            final String mttFrom = mttFromOptions ? "--log-num-mtt" : notInDump();
            out.put("mtt_allocator", new Object[] {p.mtt().allocator() == MttAllocatorKind.BUDDY ? "buddy" : "exact",
                notInDump()});
            out.put("mtt_entries", new Object[] {p.mtt().entries(), mttFrom});
            if (p.mtt().allocator() == MttAllocatorKind.BUDDY)
            {
                out.put("log_num_mtt", new Object[] {p.mtt().logNumSegments(), mttFrom});
                out.put("log_mtts_per_seg", new Object[] {p.mtt().logMttsPerSeg(), mttFrom});
            }
            out.put("cache_entries", new Object[] {p.cacheEntries(), set.contains("cache_entries") ? "--set"
                : notInDump()});
            out.put("cache_ways", new Object[] {p.cacheWays(), set.contains("cache_ways") ? "--set" : notInDump()});
            out.put("dmabuf", new Object[] {p.follows(ProviderRule.DMABUF_DYNAMIC) ? "dynamic"
                : p.follows(ProviderRule.DMABUF_PINNED) ? "pinned" : "none", notInDump()});
            return out;
        }

        /** An attribute a dump shows: from --set, the dump (or device), or the base profile when the dump lacks it. */
        private String attr(final String name)
        {
            if (set.contains(name))
            {
                return "--set";
            }
            if (origin.equals("profile"))
            {
                return "profile";
            }
            return profile.defaultedFields().contains(name) ? "default" : origin;
        }

        /** A property no dump shows: the profile's, or for a dump or device the default of its driver. */
        private String notInDump()
        {
            return origin.equals("profile") ? "profile" : "default";
        }
    }

    /**
     * Prints a table: the first column left-aligned, the others right-aligned, one space apart; each column as wide
     * as its least width or its widest cell, so that a long cell (a --smaps group's address range, an odd size
     * with its bytes) widens its column instead of pushing the rest of its row out of line.
     *
     * @param rows   the heading, then the rows; each of as many cells as there are widths.
     * @param widths each column's least width.
     * @param out    where to print.
     */
    static void printColumns(final List<String[]> rows, final int[] widths, final PrintWriter out)
    {
        final int[] w = widths.clone();
        for (final String[] row : rows)
        {
            for (int c = 0; c < w.length; c++)
            {
                w[c] = Math.max(w[c], row[c].length());
            }
        }
        final StringBuilder line = new StringBuilder();
        for (final String[] row : rows)
        {
            line.setLength(0);
            for (int c = 0; c < w.length; c++)
            {
                final String pad = " ".repeat(w[c] - row[c].length());
                line.append(c == 0 ? "" : " ").append(c == 0 ? row[c] + pad : pad + row[c]);
            }
            out.println(line);
        }
    }

    /**
     * @param plan the plan.
     * @param out  where to print.
     */
    static void text(final Plan plan, final PrintWriter out)
    {
        out.println("device " + plan.device());
        final List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"group", "MRs", "size", "backing", "kind", "lifetime", "page size", "MTT per MR",
            "pinned/MR", "reg/MR", "dereg/MR"});
        for (final Plan.GroupResult g : plan.groups())
        {
            final String mtt = String.format(Locale.ROOT, "%,d", g.mttEntriesPerMr())
                + (g.mttReservedPerMr() != g.mttEntriesPerMr() ? String.format(Locale.ROOT, " (%,d)",
                g.mttReservedPerMr()) : "");
            rows.add(new String[] {g.name(), String.format(Locale.ROOT, "%,d", g.mrs()), Sizes.iec(g.sizeBytes()),
                g.backing(), g.refusal() != null ? "refused" : g.kind(), g.lifetime().word(),
                Sizes.iec(g.pageSizeBytes()), mtt, Sizes.iec(g.pinnedBytesPerMr()), Sizes.duration(g.regNsPerMr()),
                Sizes.duration(g.deregNsPerMr())});
        }
        printColumns(rows, GROUP_WIDTHS, out);
        final Plan.Totals t = plan.totals();
        out.printf(Locale.ROOT, "total%s: %,d MRs, %,d MTT entries, %s pinned%n", t.processes() > 1 ? " over "
            + t.processes() + " processes" : "", t.mrs(), t.mttEntries(), Sizes.iec(t.pinnedBytes()));
        out.printf(Locale.ROOT, "time%s: %s to register at start-up (static groups), %s on first use (cached groups), "
            + "%s of registration per second on the request path (per-request groups)%n", t.processes() > 1
            ? " per process" : "", Sizes.duration(t.registrationTimeNs()), Sizes.duration(t.firstUseTimeNs()),
            Sizes.duration(t.hotPathNsPerSecond()));
        out.println("translation cache: " + plan.cache().verdict());
        final List<String[]> limits = new ArrayList<>();
        limits.add(new String[] {"limit", "required", "available", "fits"});
        for (final Plan.Limit l : plan.limits())
        {
            limits.add(new String[] {l.name(), Sizes.of(l.required(), l.unit()),
                l.available() < 0 ? "unlimited" : Sizes.of(l.available(), l.unit()), l.fits() ? "yes" : "NO"});
        }
        printColumns(limits, LIMIT_WIDTHS, out);
        out.println(plan.firstLimit() == null ? "everything fits" : "first limit to break: " + plan.firstLimit());
        out.println("contiguity: the verdict uses the " + plan.contiguity() + " case of huge-page contiguity");
        for (final String a : plan.advice())
        {
            out.println("advice: " + a);
        }
        for (final String n : plan.notes())
        {
            out.println("note: " + n);
        }
    }

    /**
     * @param device the device and where its attributes came from.
     * @return {@code {"name", "driver", "source", "attributes": {NAME: {"value", "from"}}}}.
     */
    static ObjectNode device(final DeviceSource device)
    {
        final ObjectNode d = new ObjectMapper().createObjectNode();
        d.put("name", device.profile().name()).put("driver", device.profile().driver()).put("source",
            device.source());
        final ObjectNode attributes = d.putObject("attributes");
        for (final Map.Entry<String, Object[]> e : device.attributes().entrySet())
        {
            final ObjectNode a = attributes.putObject(e.getKey());
            if (e.getValue()[0] instanceof String s)
            {
                a.put("value", s);
            }
            else if (e.getKey().equals("max_mr_size") || e.getKey().equals("page_size_cap"))
            {
                // Unsigned 64-bit values as ibv_devinfo prints them (max_mr_size 2^64-1 means no limit).
                a.put("value", new java.math.BigInteger(Long.toUnsignedString(((Number)e.getValue()[0]).longValue())));
            }
            else
            {
                a.put("value", ((Number)e.getValue()[0]).longValue());
            }
            a.put("from", (String)e.getValue()[1]);
        }
        return d;
    }

    /**
     * @param breach the first limit to break, or null.
     * @return it as JSON ({@code limit}, {@code atMr}, {@code group}, {@code process}, {@code message}), or a JSON
     *         null when everything fits.
     */
    static com.fasterxml.jackson.databind.JsonNode firstLimit(final Plan.Breach breach)
    {
        final ObjectMapper m = new ObjectMapper();
        return breach == null ? m.nullNode() : m.valueToTree(breach);
    }

    /**
     * @param plan     the plan.
     * @param host     the host it was made for.
     * @param workload the workload.
     * @param device   the device and where its attributes came from.
     * @return the plan as JSON: sizes in bytes, times in ns.
     */
    static ObjectNode json(final Plan plan, final Planner.HostSpec host, final Workload workload,
        final DeviceSource device)
    {
        final ObjectMapper m = new ObjectMapper();
        final ObjectNode root = m.createObjectNode();
        root.set("device", device(device));
        final ObjectNode h = root.putObject("host");
        h.put("ramBytes", host.ramBytes());
        if (host.memlockBytes() < 0)
        {
            h.putNull("memlockBytes");
        }
        else
        {
            h.put("memlockBytes", host.memlockBytes());
        }
        h.put("capIpcLock", host.capIpcLock()).put("hugepages2m", host.hugepages2M())
            .put("hugepages1g", host.hugepages1G()).put("maxMapCount", host.maxMapCount())
            .put("processes", host.processes()).put("gpuMemoryBytes", host.gpuVramBytes())
            .put("gpuBar1Bytes", host.gpuBar1Bytes());
        root.set("workload", m.valueToTree(workload));
        root.put("contiguity", plan.contiguity());
        root.set("groups", m.valueToTree(plan.groups()));
        root.set("totals", m.valueToTree(plan.totals()));
        final ArrayNode limits = root.putArray("limits");
        for (final Plan.Limit l : plan.limits())
        {
            final ObjectNode o = limits.addObject().put("name", l.name()).put("required", l.required());
            if (l.available() < 0)
            {
                o.putNull("available");
            }
            else
            {
                o.put("available", l.available());
            }
            o.put("unit", l.unit()).put("fits", l.fits());
        }
        root.set("firstLimit", firstLimit(plan.breach()));
        root.set("cache", m.valueToTree(plan.cache()));
        root.set("advice", m.valueToTree(plan.advice()));
        root.set("settings", m.valueToTree(plan.settings()));
        root.set("notes", m.valueToTree(plan.notes()));
        return root;
    }
}
