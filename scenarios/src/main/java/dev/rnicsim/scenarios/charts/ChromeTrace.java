package dev.rnicsim.scenarios.charts;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.TraceEvent;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Collects the {@link TraceEvent}s of a fabric and writes them in the Chrome trace-event JSON format that Perfetto
 * ({@code ui.perfetto.dev}) and {@code chrome://tracing} open: {@code {"traceEvents":[...],"displayTimeUnit":"ns"}}.
 * Each span is a complete event ({@code "ph":"X"}) with {@code ts} and {@code dur} in microseconds of simulated time
 * (fractional: ns / 1000.0), {@code cat} the span's category, {@code name} its name and {@code args} its details.
 * A host is a process ({@code pid}) and a device a thread ({@code tid}) of it, each named by a metadata event
 * ({@code "ph":"M"}, {@code process_name} and {@code thread_name}).
 *
 * <p>Numbering is stable: for a trace {@link #attach attached} to a fabric, a host's pid is its place in
 * {@link SimFabric#hosts()} (from 1) and a device's tid its place in {@link SimHost#devices()} (from 1), whatever
 * order the events come in; events {@link #add added} without a fabric number hosts and devices in order of first
 * appearance. Every host and device of the fabric is named, events or not.
 *
 * <p>Not thread safe: the fabric calls the listener on its one simulation thread; read the trace on that thread.
 */
public final class ChromeTrace
{
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final double NS_PER_US = 1000.0;

    private final SimFabric fabric;
    private final List<TraceEvent> events = new ArrayList<>();
    private final Map<String, Map<String, Integer>> seenDevices = new LinkedHashMap<>();

    /**
     * A trace fed by {@link #add}, not attached to a fabric.
     */
    public ChromeTrace()
    {
        this(null);
    }

    private ChromeTrace(final SimFabric fabric)
    {
        this.fabric = fabric;
    }

    /**
     * Registers a trace listener on a fabric; every span of simulated time from then on is collected.
     *
     * @param fabric the fabric.
     * @return the trace, growing as the simulation runs.
     * @throws NullPointerException when fabric is null.
     */
    public static ChromeTrace attach(final SimFabric fabric)
    {
        final ChromeTrace trace = new ChromeTrace(Objects.requireNonNull(fabric, "fabric"));
        fabric.addTraceListener(trace::add);
        return trace;
    }

    /**
     * Collects one span.
     *
     * @param event the span.
     * @throws NullPointerException when event is null.
     */
    public void add(final TraceEvent event)
    {
        events.add(Objects.requireNonNull(event, "event"));
        final Map<String, Integer> devices = seenDevices.computeIfAbsent(event.host(), h -> new LinkedHashMap<>());
        devices.computeIfAbsent(event.device(), d -> devices.size() + 1);
    }

    /**
     * @return the spans collected, in arrival (simulated time) order.
     */
    public List<TraceEvent> events()
    {
        return Collections.unmodifiableList(events);
    }

    /**
     * @return the trace as a Jackson tree: metadata events first (hosts, then their devices), then one complete
     * event per span in arrival order.
     */
    public ObjectNode toTree()
    {
        final Map<String, Integer> pids = new LinkedHashMap<>();
        final Map<String, Map<String, Integer>> tids = new LinkedHashMap<>();
        numbering(pids, tids);
        final ObjectNode root = MAPPER.createObjectNode();
        final ArrayNode out = root.putArray("traceEvents");
        for (final Map.Entry<String, Integer> host : pids.entrySet())
        {
            metadata(out, "process_name", host.getValue(), 0, host.getKey());
            for (final Map.Entry<String, Integer> device : tids.get(host.getKey()).entrySet())
            {
                metadata(out, "thread_name", host.getValue(), device.getValue(), device.getKey());
            }
        }
        for (final TraceEvent e : events)
        {
            final ObjectNode node = out.addObject();
            node.put("name", e.name());
            node.put("cat", e.category());
            node.put("ph", "X");
            node.put("ts", e.startNs() / NS_PER_US);
            node.put("dur", e.durationNs() / NS_PER_US);
            node.put("pid", pids.get(e.host()));
            node.put("tid", tids.get(e.host()).get(e.device()));
            node.set("args", MAPPER.valueToTree(new java.util.TreeMap<>(e.args())));
        }
        root.put("displayTimeUnit", "ns");
        return root;
    }

    /**
     * @return the trace as compact JSON text.
     */
    public String toJson()
    {
        try
        {
            return MAPPER.writeValueAsString(toTree());
        }
        catch (final IOException e)
        {
            throw new IllegalStateException("a JSON tree failed to serialise", e);
        }
    }

    /**
     * Writes the trace as JSON, for Perfetto or {@code chrome://tracing}.
     *
     * @param json the file to write (its folder must exist).
     * @throws IOException when the file cannot be written.
     */
    public void write(final Path json) throws IOException
    {
        try (java.io.OutputStream out = java.nio.file.Files.newOutputStream(json))
        {
            MAPPER.writeValue(out, toTree());
        }
    }

    /** pid per host and tid per device: the fabric's creation order, then any names seen only in events. */
    private void numbering(final Map<String, Integer> pids, final Map<String, Map<String, Integer>> tids)
    {
        if (fabric != null)
        {
            for (final SimHost host : fabric.hosts())
            {
                pids.put(host.name(), pids.size() + 1);
                final Map<String, Integer> devices = new LinkedHashMap<>();
                for (final SimDevice device : host.devices())
                {
                    devices.put(device.name(), devices.size() + 1);
                }
                tids.put(host.name(), devices);
            }
        }
        for (final Map.Entry<String, Map<String, Integer>> host : seenDevices.entrySet())
        {
            pids.computeIfAbsent(host.getKey(), h -> pids.size() + 1);
            final Map<String, Integer> devices = tids.computeIfAbsent(host.getKey(), h -> new LinkedHashMap<>());
            for (final String device : host.getValue().keySet())
            {
                devices.computeIfAbsent(device, d -> devices.size() + 1);
            }
        }
    }

    private static void metadata(final ArrayNode out, final String kind, final int pid, final int tid,
        final String name)
    {
        final ObjectNode node = out.addObject();
        node.put("name", kind);
        node.put("ph", "M");
        node.put("pid", pid);
        node.put("tid", tid);
        node.putObject("args").put("name", name);
    }
}
