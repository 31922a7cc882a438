package dev.rnicsim.scenarios.explorer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.scenarios.script.ScriptStep;
import dev.rnicsim.scenarios.script.StepObserver;
import dev.rnicsim.verbs.WorkCompletion;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;

/**
 * Records a script run for the explorer page: after each statement a snapshot of the model ({@link StateSnapshot}),
 * kept only as its difference from the one before ({@link MergePatch}), with the statement, its narration, outcome,
 * expects, the page-table walks of the addresses it named, the work requests the devices executed and the
 * completions it polled. {@link #write} puts it all in one self-contained HTML page ({@link ExplorerPage}).
 * Not thread safe: attach it to one run.
 */
public final class Explorer implements StepObserver
{
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final String title;
    private final ArrayNode steps = JSON.arrayNode();
    private final WorkRequests workRequests = new WorkRequests();
    private JsonNode previous = JSON.objectNode();
    private ObjectNode last;
    /** Per device and key ({@code device/0x...}): where it was issued, with {@code freed} once it is gone. */
    private final Map<String, ObjectNode> keyEvents = new java.util.HashMap<>();

    /**
     * @param title what the page is of (the script's name).
     */
    public Explorer(final String title)
    {
        this.title = title;
    }

    @Override
    public void step(final ScriptStep step)
    {
        final ObjectNode s = steps.addObject();
        last = s;
        try
        {
            record(step, s);
        }
        catch (final RuntimeException e)
        {
            // The run goes on: a step the page cannot draw says why on the page (and fails the browser tests).
            s.put("snapshotError", e.toString());
            s.putArray("expects");
            s.putObject("patch");
        }
    }

    private void record(final ScriptStep step, final ObjectNode s)
    {
        final StateSnapshot snapshot = new StateSnapshot(step);
        s.put("where", step.where());
        s.put("verb", step.verb());
        s.put("line", step.verb() + (step.text().isEmpty() ? "" : " " + step.text()));
        s.put("narration", step.narration());
        s.put("ok", step.outcome().ok());
        s.put("outcome", step.outcome().message());
        if (!step.outcome().ok())
        {
            s.put("errno", step.outcome().errno());
        }
        s.put("timeNs", step.nowNs());
        s.put("durationNs", step.durationNs());
        s.putArray("expects");
        StepDetail.walks(step, snapshot, s);
        s.setAll(workRequests.drain(snapshot));
        final ArrayNode wcs = s.putArray("completions");
        for (final WorkCompletion wc : step.completions())
        {
            final ObjectNode w = wcs.addObject();
            w.put("wrId", wc.wrId());
            w.put("status", wc.status().name());
            w.put("opcode", wc.opcode().name());
            w.put("qpNum", wc.qpNum());
            w.put("byteLen", wc.byteLen());
        }
        final ObjectNode state = snapshot.state();
        cacheActivity(state, s);
        keyHistory(state, s);
        final JsonNode patch = MergePatch.diff(previous, state);
        s.set("patch", patch == null ? JSON.objectNode() : patch);
        previous = state;
        workRequests.watch(step.fabric().devices());
    }

    /**
     * Notes the step at which each key appeared in and left a device's MPT, and tells each work request of the step
     * where its rkey came from: the statement that made it and, when it is gone, the one that freed it.
     */
    private void keyHistory(final ObjectNode state, final ObjectNode s)
    {
        for (final Iterator<Map.Entry<String, JsonNode>> it = state.path("devices").fields(); it.hasNext();)
        {
            final Map.Entry<String, JsonNode> d = it.next();
            final JsonNode before = previous.path("devices").path(d.getKey()).path("keys");
            for (final JsonNode k : d.getValue().path("keys"))
            {
                final JsonNode old = before.path(k.get("index").asText());
                if (!old.path("key").asText().equals(k.get("key").asText()))
                {
                    keyEvents.put(d.getKey() + "/" + k.get("key").asText(), event(s, "issued"));
                }
            }
            for (final JsonNode k : before)
            {
                final JsonNode now = d.getValue().path("keys").path(k.get("index").asText());
                if (!now.path("key").asText().equals(k.get("key").asText()))
                {
                    final ObjectNode e = keyEvents.get(d.getKey() + "/" + k.get("key").asText());
                    if (e != null)
                    {
                        e.set("freed", event(s, "freed"));
                    }
                }
            }
        }
        for (final JsonNode wr : s.path("wrs"))
        {
            final ObjectNode e = keyEvents.get(wr.path("remoteDevice").asText() + "/" + wr.path("rkey").asText());
            if (wr.has("rkey") && e != null)
            {
                ((ObjectNode)wr).set("rkeyHistory", e.deepCopy());
            }
        }
    }

    /** A key's event: the step (1-based) and its statement. */
    private ObjectNode event(final ObjectNode s, final String what)
    {
        final ObjectNode e = JSON.objectNode();
        e.put("what", what);
        e.put("step", steps.size());
        e.put("line", s.get("line").asText());
        return e;
    }

    /** The translation cache's hits and misses on each device during the step. */
    private void cacheActivity(final ObjectNode state, final ObjectNode s)
    {
        final ObjectNode out = s.putObject("cacheActivity");
        for (final Iterator<Map.Entry<String, JsonNode>> it = state.path("devices").fields(); it.hasNext();)
        {
            final Map.Entry<String, JsonNode> d = it.next();
            final JsonNode now = d.getValue().path("cache");
            final JsonNode before = previous.path("devices").path(d.getKey()).path("cache");
            final long hits = now.path("hits").asLong() - before.path("hits").asLong();
            final long misses = now.path("misses").asLong() - before.path("misses").asLong();
            if (hits != 0 || misses != 0)
            {
                final ObjectNode o = out.putObject(d.getKey());
                o.put("hits", hits);
                o.put("misses", misses);
            }
        }
    }

    @Override
    public void expect(final String where, final String text, final String failure)
    {
        if (last == null)
        {
            return;
        }
        final ObjectNode e = ((ArrayNode)last.get("expects")).addObject();
        e.put("where", where);
        e.put("text", text);
        e.put("held", failure == null);
        if (failure != null)
        {
            e.put("failure", failure);
        }
    }

    /**
     * @return the steps recorded so far.
     */
    public int steps()
    {
        return steps.size();
    }

    /**
     * @return the page's data: the title and the steps, each with its patch of the model's state.
     */
    public ObjectNode document()
    {
        final ObjectNode doc = JSON.objectNode();
        doc.put("title", title);
        doc.put("format", 1);
        doc.set("steps", steps);
        return doc;
    }

    /**
     * Writes the page.
     *
     * @param file where.
     * @return the page's size in bytes.
     * @throws IOException when the file cannot be written.
     */
    public long write(final Path file) throws IOException
    {
        return ExplorerPage.write(file, title, new ObjectMapper().writeValueAsString(document()));
    }
}
