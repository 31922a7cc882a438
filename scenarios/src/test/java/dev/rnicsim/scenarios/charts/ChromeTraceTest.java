package dev.rnicsim.scenarios.charts;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.TraceEvent;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChromeTraceTest
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void shouldWriteCompleteEventsPerHostAndDeviceWithMetadata() throws Exception
    {
        final SimFabric fabric = new SimFabric();
        final SimHost alpha = fabric.addHost("alpha");
        final SimHost beta = fabric.addHost("beta", HostConfig.builder().hugepages2M(4).build());
        // A second device on beta that does nothing: named in the metadata all the same.
        final SimDevice idle = beta.addDevice("sim:beta/mlx5_1", DeviceProfiles.connectx5());
        final SimDevice nicA = alpha.addDevice("sim:alpha/mlx5_0", DeviceProfiles.connectx5());
        final SimDevice nicB = beta.addDevice("sim:beta/mlx5_0", DeviceProfiles.connectx5());
        // Attached after the hosts exist; the numbering follows the fabric, not the event order.
        final ChromeTrace trace = ChromeTrace.attach(fabric);
        try (Context b = nicB.open(); Context a = nicA.open())
        {
            final ProtectionDomain pdA = a.allocPd();
            final ProtectionDomain pdB = b.allocPd();
            final CompletionQueue cqA = a.createCq(16);
            final CompletionQueue cqB = b.createCq(16);
            final QueuePair qpA = pdA.createQp(QpInitAttr.rc(cqA));
            final QueuePair qpB = pdB.createQp(QpInitAttr.rc(cqB));
            qpA.connect(qpB.address(), EnumSet.noneOf(Access.class));
            qpB.connect(qpA.address(), EnumSet.of(Access.REMOTE_WRITE));
            final long src = a.memory().allocate(1 << 20, Backing.BASE_PAGES);
            final long dst = b.memory().allocate(2 << 20, Backing.HUGETLB_2M);
            final MemoryRegion ms = pdA.regMr(src, 1 << 20, EnumSet.of(Access.LOCAL_WRITE));
            final MemoryRegion md = pdB.regMr(dst, 2 << 20, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            for (int i = 0; i < 3; i++)
            {
                qpA.postSend(SendWr.write(i, List.of(new Sge(src + i * 4096L, 4096, ms.lkey())), dst + i * 8192L,
                    md.rkey()));
                final List<WorkCompletion> wcs = cqA.poll(1);
                assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
            }
            md.close();
        }
        assertThat(trace.events()).isNotEmpty();

        final JsonNode root = MAPPER.readTree(trace.toJson());
        assertThat(root.get("displayTimeUnit").asText()).isEqualTo("ns");
        final JsonNode events = root.get("traceEvents");
        assertThat(events.isArray()).isTrue();

        final Map<Integer, String> processNames = new HashMap<>();
        final Map<String, String> threadNames = new HashMap<>();
        final Set<String> names = new HashSet<>();
        final Map<String, Double> lastTsByThread = new HashMap<>();
        final List<JsonNode> complete = new ArrayList<>();
        for (final JsonNode e : events)
        {
            final String ph = e.get("ph").asText();
            final int pid = e.get("pid").asInt();
            final int tid = e.get("tid").asInt();
            if (ph.equals("M"))
            {
                final String name = e.get("args").get("name").asText();
                if (e.get("name").asText().equals("process_name"))
                {
                    processNames.put(pid, name);
                }
                else
                {
                    assertThat(e.get("name").asText()).isEqualTo("thread_name");
                    threadNames.put(pid + "/" + tid, name);
                }
                continue;
            }
            assertThat(ph).isEqualTo("X");
            complete.add(e);
            names.add(e.get("name").asText());
            assertThat(e.get("cat").asText()).isIn("registration", "dma", "invalidation", "queue");
            assertThat(e.get("ts").isDouble()).isTrue();
            assertThat(e.get("dur").asDouble()).isGreaterThanOrEqualTo(0);
            assertThat(e.get("args").isObject()).isTrue();
            final double ts = e.get("ts").asDouble();
            final String thread = pid + "/" + tid;
            assertThat(ts).as("ts of %s on %s", e.get("name"), thread)
                .isGreaterThanOrEqualTo(lastTsByThread.getOrDefault(thread, 0.0));
            lastTsByThread.put(thread, ts);
        }
        assertThat(processNames).containsExactlyInAnyOrderEntriesOf(Map.of(1, "alpha", 2, "beta"));
        assertThat(threadNames).containsExactlyInAnyOrderEntriesOf(Map.of("1/1", "sim:alpha/mlx5_0",
            "2/1", idle.name(), "2/2", "sim:beta/mlx5_0"));
        assertThat(names).contains("reg_mr", "RDMA_WRITE", "dereg_mr", "invalidate");
        assertThat(complete).hasSize(trace.events().size());
        assertThat(lastTsByThread).containsOnlyKeys("1/1", "2/2");

        // ts and dur are the simulated ns in µs; args carried over.
        final TraceEvent reg = trace.events().stream().filter(e -> e.name().equals("reg_mr")).findFirst()
            .orElseThrow();
        final JsonNode regJson = complete.stream().filter(e -> e.get("name").asText().equals("reg_mr")).findFirst()
            .orElseThrow();
        assertThat(regJson.get("ts").asDouble()).isEqualTo(reg.startNs() / 1000.0);
        assertThat(regJson.get("dur").asDouble()).isEqualTo(reg.durationNs() / 1000.0);
        assertThat(regJson.get("args").get("length").asLong()).isEqualTo(((Number)reg.args().get("length"))
            .longValue());
        final JsonNode write = complete.stream().filter(e -> e.get("name").asText().equals("RDMA_WRITE"))
            .findFirst().orElseThrow();
        assertThat(write.get("pid").asInt()).isEqualTo(1);
        assertThat(write.get("args").get("bytes").asLong()).isEqualTo(4096);

        final Path file = dir.resolve("trace.json");
        trace.write(file);
        assertThat(MAPPER.readTree(file.toFile())).isEqualTo(root);
    }

    @Test
    void shouldNumberByFirstAppearanceWithoutFabric() throws Exception
    {
        final ChromeTrace trace = new ChromeTrace();
        trace.add(new TraceEvent("reg_mr", "registration", "h2", "d", 1500, 500, Map.of("lkey", 7)));
        trace.add(new TraceEvent("RDMA_WRITE", "dma", "h1", "d", 2000, 2000, Map.of()));
        final JsonNode events = MAPPER.readTree(trace.toJson()).get("traceEvents");
        assertThat(events).hasSize(6);
        assertThat(events.get(0).get("args").get("name").asText()).isEqualTo("h2");
        assertThat(events.get(0).get("pid").asInt()).isEqualTo(1);
        assertThat(events.get(2).get("args").get("name").asText()).isEqualTo("h1");
        assertThat(events.get(2).get("pid").asInt()).isEqualTo(2);
        assertThat(events.get(4).get("ts").asDouble()).isEqualTo(1.5);
        assertThat(events.get(4).get("dur").asDouble()).isEqualTo(0.5);
        assertThat(events.get(5).get("pid").asInt()).isEqualTo(2);
    }
}
