package dev.rnicsim.scenarios.plan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rnicsim.scenarios.script.Units;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What an application registers: groups of regions, each with a count, a size, a backing and access rights. Read
 * from JSON:
 * <pre>
 * {"groups": [
 *   {"name": "rx-pool", "count": 4, "size": "1G", "backing": "2m", "access": "lw,rw"},
 *   {"name": "per-request", "count": 100000, "size": "64K", "backing": "4k"}
 * ]}
 * </pre>
 * Sizes take the script units (K, M, G, T); backing is {@code 4k}, {@code thp}, {@code 2m} or {@code 1g}.
 *
 * @param groups the groups, registered in this order.
 */
public record Workload(List<Group> groups)
{
    /**
     * One group of same-sized regions.
     *
     * @param name      a label.
     * @param count     regions, at least 1.
     * @param sizeBytes bytes per region, at least 1.
     * @param backing   {@code 4k}, {@code thp}, {@code 2m} or {@code 1g}.
     * @param access    access words as in scripts (default {@code lw}).
     */
    public record Group(String name, long count, long sizeBytes, String backing, String access)
    {
    }

    /**
     * @param source the file name, for messages.
     * @param json   the text.
     * @return the workload.
     * @throws IllegalArgumentException naming the file, the group and the field that is wrong.
     */
    public static Workload parse(final String source, final String json)
    {
        final JsonNode root;
        try
        {
            root = new ObjectMapper().readTree(json);
        }
        catch (final JsonProcessingException e)
        {
            throw new IllegalArgumentException(source + ":" + e.getLocation().getLineNr() + ": not JSON: "
                + e.getOriginalMessage());
        }
        if (root == null || !root.path("groups").isArray() || root.path("groups").isEmpty())
        {
            throw new IllegalArgumentException(source + ": expected an object with a non-empty \"groups\" array");
        }
        final List<Group> groups = new ArrayList<>();
        int i = 0;
        for (final JsonNode g : root.path("groups"))
        {
            final String where = source + ": groups[" + i + "]";
            final String name = g.path("name").asText("group" + i);
            final long count = g.path("count").asLong(-1);
            if (count < 1)
            {
                throw new IllegalArgumentException(where + ": \"count\" must be a whole number of regions, 1 or more");
            }
            final Long size = Units.parse(g.path("size").asText(""));
            if (size == null || size < 1)
            {
                throw new IllegalArgumentException(where + ": \"size\" must be a size such as 4096, 64K or 1G, got '"
                    + g.path("size").asText("") + "'");
            }
            final String backing = g.path("backing").asText("4k").toLowerCase(Locale.ROOT);
            if (!List.of("4k", "thp", "2m", "1g").contains(backing))
            {
                throw new IllegalArgumentException(where + ": \"backing\" must be 4k, thp, 2m or 1g, got '"
                    + backing + "'");
            }
            final String access = g.path("access").asText("lw");
            try
            {
                dev.rnicsim.scenarios.script.Spec.accessFlags(access);
            }
            catch (final IllegalArgumentException e)
            {
                throw new IllegalArgumentException(where + ": \"access\": " + e.getMessage());
            }
            groups.add(new Group(name, count, size, backing, access));
            i++;
        }
        return new Workload(List.copyOf(groups));
    }
}
