package dev.rnicsim.scenarios.plan;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.rnicsim.scenarios.script.Spec;
import dev.rnicsim.scenarios.script.Units;
import java.io.IOException;
import dev.rnicsim.verbs.Access;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Set;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;


/**
 * What an application registers: groups of regions, each with a count, a size, a backing, access rights, an iova
 * alignment and a lifetime. Read from JSON or YAML (the same fields):
 * <pre>
 * groups:
 *   - name: rx-pool
 *     count: 4
 *     size: 1G
 *     backing: 2m
 *     access: lw,rw
 *   - name: per-request
 *     count: 64              # in flight at once
 *     size: 64K
 *     lifetime: per-request
 *     requestsPerSecond: 20000
 * </pre>
 * Sizes take the script units (K, M, G, T); backing is {@code 4k}, {@code thp}, {@code 2m}, {@code 1g} or
 * {@code gpu} (GPU memory, registered through a peer-memory client or as a dma-buf: field {@code gpu}). A group
 * whose access has {@code odp} registers on-demand-paging MRs; {@code implicit: true} makes them implicit ODP MRs
 * (addr 0, length SIZE_MAX), whose {@code size} is the bytes the application reaches through them.
 *
 * @param groups the groups, registered in this order.
 */
public record Workload(List<Group> groups)
{
    /** Most groups a workload may have. */
    public static final int MAX_GROUPS = 100_000;
    /** Most regions in one group: 2^40 (far beyond any device's max_mr of 2^24). */
    public static final long MAX_COUNT = 1L << 40;
    /** Largest region: 2^52 bytes (4 PiB). */
    public static final long MAX_SIZE_BYTES = 1L << 52;
    /** Most requests per second of a per-request group: 10^12. */
    public static final long MAX_REQUESTS_PER_SECOND = 1_000_000_000_000L;

    /** The fields a group may have. */
    public static final List<String> FIELDS = List.of("name", "count", "size", "backing", "access", "iovaAlign",
        "lifetime", "requestsPerSecond", "implicit", "gpu");

    /** The backings a group may have. */
    public static final List<String> BACKINGS = List.of("4k", "thp", "2m", "1g", "gpu");
    /** How a {@code gpu} group is registered: ibv_reg_mr through a peer-memory client, or ibv_reg_dmabuf_mr. */
    public static final List<String> GPU_PATHS = List.of("peer-memory", "dmabuf");

    /** When a group's regions are registered and deregistered. */
    public enum Lifetime
    {
        /** Registered at start-up and kept: all {@code count} MRs live, their registration delays the first op. */
        STATIC("static"),
        /**
         * Registered and deregistered around each request: {@code count} is the most in flight at once, and every
         * request pays a registration and a deregistration on the hot path (S26).
         */
        PER_REQUEST("per-request"),
        /**
         * Registered on first use and kept by a registration cache (S16): {@code count} MRs live once warm, their
         * registration paid by the first request that touches each region instead of at start-up.
         */
        CACHED("cached");

        private final String word;

        Lifetime(final String word)
        {
            this.word = word;
        }

        /**
         * @return the word used in workload files.
         */
        @com.fasterxml.jackson.annotation.JsonValue
        public String word()
        {
            return word;
        }

        static Lifetime of(final String word)
        {
            for (final Lifetime l : values())
            {
                if (l.word.equals(word))
                {
                    return l;
                }
            }
            return null;
        }
    }

    /**
     * One group of same-sized regions.
     *
     * @param name              a label.
     * @param count             regions live at once, at least 1 (for {@code per-request}: in flight at once).
     * @param sizeBytes         bytes per region, at least 1.
     * @param backing           {@code 4k}, {@code thp}, {@code 2m} or {@code 1g}.
     * @param access            access words as in scripts (default {@code lw}).
     * @param iovaAlignBytes    alignment of the iova the application passes, a power of two of at least 4096;
     *                          0 (the default) registers with iova = the buffer's address. A smaller alignment
     *                          than the backing's page keeps the driver from choosing large MR pages.
     * @param lifetime          when the regions are registered.
     * @param requestsPerSecond {@code per-request}: requests per second, each registering and deregistering one
     *                          region (0: not given).
     * @param implicit          true for implicit ODP MRs (access has {@code odp}): each covers the address space,
     *                          and {@code sizeBytes} is what the application reaches through it.
     * @param gpu               backing {@code gpu}: {@code peer-memory} or {@code dmabuf}; null for host memory.
     */
    public record Group(String name, long count, long sizeBytes, String backing, String access, long iovaAlignBytes,
        Lifetime lifetime, long requestsPerSecond, boolean implicit, String gpu)
    {
        /**
         * A group of host memory without implicit ODP.
         *
         * @param name              a label.
         * @param count             regions.
         * @param sizeBytes         bytes per region.
         * @param backing           {@code 4k}, {@code thp}, {@code 2m} or {@code 1g}.
         * @param access            access words.
         * @param iovaAlignBytes    iova alignment (0: iova = address).
         * @param lifetime          when the regions are registered.
         * @param requestsPerSecond per-request groups: requests per second (0: not given).
         */
        public Group(final String name, final long count, final long sizeBytes, final String backing,
            final String access, final long iovaAlignBytes, final Lifetime lifetime, final long requestsPerSecond)
        {
            this(name, count, sizeBytes, backing, access, iovaAlignBytes, lifetime, requestsPerSecond, false, null);
        }

        /**
         * A static group registered at its own address.
         *
         * @param name      a label.
         * @param count     regions.
         * @param sizeBytes bytes per region.
         * @param backing   {@code 4k}, {@code thp}, {@code 2m} or {@code 1g}.
         * @param access    access words.
         */
        public Group(final String name, final long count, final long sizeBytes, final String backing,
            final String access)
        {
            this(name, count, sizeBytes, backing, access, 0, Lifetime.STATIC, 0);
        }

        /**
         * @param newCount  regions.
         * @param newSize   bytes per region.
         * @param newBacking backing.
         * @return this group with those values.
         */
        public Group with(final long newCount, final long newSize, final String newBacking)
        {
            return new Group(name, newCount, newSize, newBacking, access, iovaAlignBytes, lifetime,
                requestsPerSecond, implicit, gpu);
        }

        /**
         * @return true when its MRs are on-demand paging (access {@code odp}): they pin nothing.
         */
        public boolean onDemand()
        {
            return Spec.accessFlags(access).contains(Access.ON_DEMAND);
        }
    }

    /**
     * @param source the file name, for messages; a name ending in {@code .yaml} or {@code .yml} is read as YAML,
     *               any other as JSON (a YAML file whose text starts with {@code {} is JSON anyway).
     * @param text   the text.
     * @return the workload.
     * @throws IllegalArgumentException naming the file, the line, the group and the field that is wrong, and what
     *                                  was expected.
     */
    public static Workload parse(final String source, final String text)
    {
        final String lower = source.toLowerCase(Locale.ROOT);
        final boolean yaml = (lower.endsWith(".yaml") || lower.endsWith(".yml")) && !text.strip().startsWith("{");
        final ObjectMapper mapper = yaml ? new YAMLMapper() : new ObjectMapper();
        mapper.enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        mapper.enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        final JsonNode root;
        final Map<String, Integer> lines;
        final java.util.regex.Matcher alias = YAML_ALIAS.matcher(text);
        if (yaml && alias.find())
        {
            throw new IllegalArgumentException(source + ":" + (text.substring(0, alias.start()).split("\n", -1).length)
                + ": YAML anchors and aliases ('" + alias.group(2) + "') are not read in a workload: write each group "
                + "out in full");
        }
        try
        {
            root = mapper.readTree(text);
            lines = lines(mapper, text);
        }
        catch (final JsonProcessingException e)
        {
            // Jackson's own location text ("(start marker at [Source: ...; line: 1, column: 12])") is dropped: the
            // line number leads the message.
            final String first = inWorkloadTerms(String.valueOf(e.getOriginalMessage()).lines().findFirst()
                .orElse("").replaceAll("\\s*\\(start marker at \\[Source:[^\\]]*\\]\\)", "")
                .replaceAll("\\s*\\[Source:[^\\]]*\\]", "").strip(), yaml);
            throw new IllegalArgumentException(source + ":" + (e.getLocation() == null ? 1
                : e.getLocation().getLineNr()) + ": not " + (yaml ? "YAML" : "JSON") + ": " + first
                + (yaml ? "" : " (a YAML workload needs a .yaml or .yml name)"));
        }
        catch (final IOException e)
        {
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
        if (root == null || !root.isObject() || !root.path("groups").isArray() || root.path("groups").isEmpty())
        {
            throw new IllegalArgumentException(source + ":1: expected an object with a non-empty \"groups\" list");
        }
        for (final Iterator<String> it = root.fieldNames(); it.hasNext();)
        {
            final String f = it.next();
            if (!f.equals("groups"))
            {
                throw new IllegalArgumentException(source + ":" + lines.getOrDefault(f, 1) + ": unknown field \"" + f
                    + "\"; a workload has only \"groups\"");
            }
        }
        if (root.path("groups").size() > MAX_GROUPS)
        {
            throw new IllegalArgumentException(source + ":" + lines.getOrDefault("groups", 1) + ": "
                + root.path("groups").size() + " groups; expected at most " + MAX_GROUPS + " (merge regions of the "
                + "same size into one group with a count)");
        }
        final List<Group> groups = new ArrayList<>();
        int i = 0;
        for (final JsonNode g : root.path("groups"))
        {
            groups.add(group(source, lines, i, g));
            i++;
        }
        return new Workload(List.copyOf(groups));
    }

    private static Group group(final String source, final Map<String, Integer> lines, final int i, final JsonNode g)
    {
        final String key = "groups[" + i + "]";
        if (!g.isObject())
        {
            throw new IllegalArgumentException(source + ":" + lines.getOrDefault(key, 1) + ": " + key
                + ": expected an object with " + FIELDS);
        }
        for (final Iterator<String> it = g.fieldNames(); it.hasNext();)
        {
            final String f = it.next();
            if (!FIELDS.contains(f))
            {
                throw new IllegalArgumentException(where(source, lines, key, f) + ": unknown field; expected one of "
                    + FIELDS);
            }
        }
        for (final String required : List.of("count", "size"))
        {
            if (!g.has(required) || g.path(required).isNull())
            {
                throw new IllegalArgumentException(where(source, lines, key, required) + ": missing; every group needs"
                    + " \"count\" and \"size\"");
            }
        }
        if (g.has("name") && !g.path("name").isTextual() && !g.path("name").isNumber())
        {
            throw new IllegalArgumentException(where(source, lines, key, "name") + ": expected a name (text), got "
                + g.path("name").getNodeType().name().toLowerCase(Locale.ROOT));
        }
        final String name = g.path("name").asText("group" + i);
        final long count = wholeNumber(g.path("count"));
        if (count > MAX_COUNT)
        {
            throw new IllegalArgumentException(where(source, lines, key, "count") + ": expected at most " + MAX_COUNT
                + " regions, got " + count);
        }
        if (count < 1)
        {
            throw new IllegalArgumentException(where(source, lines, key, "count")
                + ": expected a whole number of regions, 1 or more, got '" + shown(g.path("count")) + "'");
        }
        final Long size = Units.parseSize(g.path("size").asText(""));
        if (size != null && size > MAX_SIZE_BYTES)
        {
            throw new IllegalArgumentException(where(source, lines, key, "size") + ": expected at most 4P (2^52 "
                + "bytes), got '" + shown(g.path("size")) + "'");
        }
        if (size == null || size < 1)
        {
            throw new IllegalArgumentException(where(source, lines, key, "size")
                + ": expected a size such as 4096, 64K or 1G, got '" + shown(g.path("size")) + "'");
        }
        final String backing = g.path("backing").asText("4k").toLowerCase(Locale.ROOT);
        if (!BACKINGS.contains(backing))
        {
            throw new IllegalArgumentException(where(source, lines, key, "backing") + ": expected 4k, thp, 2m, 1g"
                + " or gpu, got '" + backing + "'");
        }
        final String access = g.path("access").asText("lw");
        try
        {
            final java.util.Set<dev.rnicsim.verbs.Access> flags = Spec.accessFlags(access);
            dev.rnicsim.verbs.Access.checkDependencies(flags, "ibv_reg_mr");
        }
        catch (final IllegalArgumentException e)
        {
            throw new IllegalArgumentException(where(source, lines, key, "access") + ": expected access words "
                + "separated by commas, got '" + access + "': " + e.getMessage(), e);
        }
        catch (final dev.rnicsim.verbs.VerbsException e)
        {
            throw new IllegalArgumentException(where(source, lines, key, "access") + ": '" + access + "' would fail "
                + "ibv_reg_mr with " + e.errnoName() + ": " + e.detail(), e);
        }
        long iovaAlign = 0;
        if (g.has("iovaAlign"))
        {
            final Long a = Units.parseSize(g.path("iovaAlign").asText(""));
            if (a == null || a < 4096 || Long.bitCount(a) != 1)
            {
                throw new IllegalArgumentException(where(source, lines, key, "iovaAlign")
                    + ": expected a power of two of at least 4K, got '" + shown(g.path("iovaAlign")) + "'");
            }
            iovaAlign = a;
        }
        final Lifetime lifetime = Lifetime.of(g.path("lifetime").asText("static"));
        if (lifetime == null)
        {
            throw new IllegalArgumentException(where(source, lines, key, "lifetime")
                + ": expected static, per-request or cached, got '" + shown(g.path("lifetime")) + "'");
        }
        long rate = 0;
        if (g.has("requestsPerSecond"))
        {
            rate = wholeNumber(g.path("requestsPerSecond"));
            if (rate < 0 || rate > MAX_REQUESTS_PER_SECOND || lifetime != Lifetime.PER_REQUEST)
            {
                throw new IllegalArgumentException(where(source, lines, key, "requestsPerSecond") + ": expected a "
                    + "whole number from 0 to 10^12, with lifetime per-request, got '"
                    + g.path("requestsPerSecond").asText("") + "' with lifetime " + lifetime.word());
            }
        }
        final boolean implicit = implicit(source, lines, key, g);
        final String gpu = gpuPath(source, lines, key, g, backing);
        final Group group = new Group(name, count, size, backing, access, iovaAlign, lifetime, rate, implicit, gpu);
        combination(source, lines, key, group, g);
        return group;
    }

    /** An anchor ({@code &name}) or alias ({@code *name}) where a YAML value or list item starts. */
    private static final java.util.regex.Pattern YAML_ALIAS = java.util.regex.Pattern.compile(
        "(?m)(^|[:\\[{,-])\\s*([&*][A-Za-z0-9_-]+)");

    /** The parser's message in a workload's terms, never the library's names. */
    private static String inWorkloadTerms(final String message, final boolean yaml)
    {
        if (message.startsWith("Trailing token"))
        {
            return yaml ? "more than one YAML document ('---' starts another): a workload is one document with one "
                + "\"groups\" list; put every group in it" : "more than one JSON value: a workload is one object with"
                + " one \"groups\" list";
        }
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("Malformed numeric value '([^']*)'")
            .matcher(message);
        if (m.find())
        {
            return "'" + m.group(1) + "' is no number a workload takes: give a whole number such as 16, or a size "
                + "such as 64K" + (m.group(1).toLowerCase(Locale.ROOT).contains("inf") ? " (YAML's infinity has no "
                + "place in a count or a size)" : "");
        }
        final int bound = message.indexOf(" (bound as");
        final String cut = bound < 0 ? message : message.substring(0, bound);
        return cut.replaceAll("`?com\\.fasterxml[\\w.$]*`?", "").replaceAll("DeserializationFeature\\.\\w+", "")
            .strip();
    }

    private static boolean implicit(final String source, final Map<String, Integer> lines, final String key,
        final JsonNode g)
    {
        if (!g.has("implicit"))
        {
            return false;
        }
        final JsonNode n = g.path("implicit");
        if (!n.isBoolean() && !(n.isTextual() && n.asText().matches("true|false")))
        {
            throw new IllegalArgumentException(where(source, lines, key, "implicit") + ": expected true or false, got '"
                + n.asText("") + "'");
        }
        return n.asBoolean() || n.asText().equals("true");
    }

    private static String gpuPath(final String source, final Map<String, Integer> lines, final String key,
        final JsonNode g, final String backing)
    {
        if (!g.has("gpu"))
        {
            return backing.equals("gpu") ? "dmabuf" : null;
        }
        final String path = g.path("gpu").asText("").toLowerCase(Locale.ROOT);
        if (!GPU_PATHS.contains(path) || !backing.equals("gpu"))
        {
            throw new IllegalArgumentException(where(source, lines, key, "gpu") + ": expected peer-memory or dmabuf"
                + " with backing gpu, got '" + g.path("gpu").asText("") + "' with backing " + backing);
        }
        return path;
    }

    /**
     * The combinations ibv_reg_mr or ibv_reg_dmabuf_mr refuse whatever the device (ibv_reg_mr(3)): HUGETLB without
     * ON_DEMAND, implicit without ON_DEMAND, an implicit MR with HUGETLB or an iova, ON_DEMAND or ZERO_BASED or
     * MW_BIND on a dma-buf.
     */
    private static void combination(final String source, final Map<String, Integer> lines, final String key,
        final Group group, final JsonNode g)
    {
        final Set<Access> flags = Spec.accessFlags(group.access());
        if (flags.contains(Access.HUGETLB) && !flags.contains(Access.ON_DEMAND))
        {
            throw new IllegalArgumentException(where(source, lines, key, "access") + ": expected hugetlb only with odp"
                + " (ibv_reg_mr(3): IBV_ACCESS_HUGETLB applies to ODP MRs), got '" + group.access() + "'");
        }
        if (group.implicit() && !flags.contains(Access.ON_DEMAND))
        {
            throw new IllegalArgumentException(where(source, lines, key, "implicit") + ": expected access with odp "
                + "(an implicit MR is an ODP MR), got access '" + group.access() + "'");
        }
        if (group.implicit() && (flags.contains(Access.HUGETLB) || g.has("iovaAlign")))
        {
            throw new IllegalArgumentException(where(source, lines, key, "implicit") + ": expected no hugetlb access "
                + "and no iovaAlign with implicit: true (an implicit MR has iova 0 and 4 KiB pages)");
        }
        if (group.backing().equals("gpu") && !DMABUF_ACCESS.containsAll(flags))
        {
            throw new IllegalArgumentException(where(source, lines, key, "access") + ": expected lw, rw, rr, ra or ro"
                + " for GPU memory (ibv_reg_dmabuf_mr accepts no other; GPU memory is not paged on demand), got '"
                + group.access() + "'");
        }
    }

    /** The access flags ibv_reg_dmabuf_mr accepts (ibv_reg_mr(3)). */
    private static final Set<Access> DMABUF_ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.RELAXED_ORDERING);

    /** A count given as a number or a string of digits (YAML); -1 when it is neither. */
    private static long wholeNumber(final JsonNode n)
    {
        if (n.isIntegralNumber() && n.canConvertToLong())
        {
            return n.asLong();
        }
        if (n.isTextual() && n.asText().matches("\\d{1,18}"))
        {
            return Long.parseLong(n.asText());
        }
        return -1;
    }

    private static String where(final String source, final Map<String, Integer> lines, final String group,
        final String field)
    {
        final Integer line = lines.getOrDefault(group + "." + field, lines.get(group));
        return source + ":" + (line == null ? 1 : line) + ": " + group + "." + field;
    }

    /**
     * The line of each top-level field ({@code groups}), each group ({@code groups[i]}) and each group field
     * ({@code groups[i].count}), from a second, streaming read.
     */
    private static Map<String, Integer> lines(final ObjectMapper mapper, final String text) throws IOException
    {
        final Map<String, Integer> out = new HashMap<>();
        try (JsonParser p = mapper.getFactory().createParser(text))
        {
            int depth = 0;
            int group = -1;
            boolean inGroups = false;
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken())
            {
                final int line = p.currentLocation().getLineNr();
                if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY)
                {
                    depth++;
                    if (inGroups && depth == 3)
                    {
                        group++;
                        out.put("groups[" + group + "]", p.currentTokenLocation().getLineNr());
                    }
                }
                else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY)
                {
                    depth--;
                    if (depth == 1)
                    {
                        inGroups = false;
                    }
                }
                else if (t == JsonToken.FIELD_NAME)
                {
                    final int tokenLine = p.currentTokenLocation().getLineNr();
                    if (depth == 1)
                    {
                        out.putIfAbsent(p.currentName(), tokenLine);
                        inGroups = p.currentName().equals("groups");
                    }
                    else if (inGroups && depth == 3)
                    {
                        out.putIfAbsent("groups[" + group + "]." + p.currentName(), tokenLine);
                    }
                }
                else if (inGroups && depth == 2)
                {
                    group++;
                    out.put("groups[" + group + "]", line);
                }
            }
        }
        return out;
    }


    /** @return a field's value as the file gives it: a scalar's text, else the JSON of a list or map (never ''). */
    private static String shown(final JsonNode n)
    {
        return n.isMissingNode() || n.isNull() ? "" : n.isValueNode() ? n.asText() : n.toString();
    }
}
