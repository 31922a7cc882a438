package dev.rnicsim.scenarios.explorer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;

/**
 * The difference of two JSON trees as a JSON Merge Patch (RFC 7386): applied to the first it gives the second.
 * An object holds only the members that changed, a removed member is {@code null}, anything else (a number, a text,
 * an array) is replaced whole. The trees must hold no {@code null} values, which a merge patch cannot set.
 * Stateless.
 */
final class MergePatch
{
    private MergePatch()
    {
    }

    /**
     * @param before the earlier tree.
     * @param after  the later tree.
     * @return the patch from {@code before} to {@code after}, or null when they are equal.
     */
    static JsonNode diff(final JsonNode before, final JsonNode after)
    {
        if (before == null || !before.isObject() || !after.isObject())
        {
            return after.equals(before) ? null : after;
        }
        final ObjectNode patch = JsonNodeFactory.instance.objectNode();
        for (final Iterator<String> it = before.fieldNames(); it.hasNext();)
        {
            final String name = it.next();
            if (!after.has(name))
            {
                patch.putNull(name);
            }
        }
        for (final Iterator<Map.Entry<String, JsonNode>> it = after.fields(); it.hasNext();)
        {
            final Map.Entry<String, JsonNode> e = it.next();
            final JsonNode d = diff(before.get(e.getKey()), e.getValue());
            if (d != null)
            {
                patch.set(e.getKey(), d);
            }
        }
        return patch.isEmpty() ? null : patch;
    }

    /**
     * Applies a patch (the page does the same in JavaScript).
     *
     * @param target the tree to change; changed in place where it is an object.
     * @param patch  a patch from {@link #diff}.
     * @return the patched tree.
     */
    static JsonNode apply(final JsonNode target, final JsonNode patch)
    {
        if (!patch.isObject())
        {
            return patch;
        }
        final ObjectNode t = target != null && target.isObject() ? (ObjectNode)target
            : JsonNodeFactory.instance.objectNode();
        for (final Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext();)
        {
            final Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isNull())
            {
                t.remove(e.getKey());
            }
            else
            {
                t.set(e.getKey(), apply(t.get(e.getKey()), e.getValue()));
            }
        }
        return t;
    }
}
