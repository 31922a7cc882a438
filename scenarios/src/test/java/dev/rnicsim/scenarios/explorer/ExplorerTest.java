package dev.rnicsim.scenarios.explorer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rnicsim.scenarios.cli.Rnicsim;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --html}: the page the tour writes, read as data (the browser tests draw it): self-contained and small, one
 * patch per step holding only what changed, and the keys, page sizes and MTT entries the model printed.
 */
class ExplorerTest
{
    @TempDir
    static Path dir;
    private static TourPage tour;
    private static String html;
    private static JsonNode steps;

    @BeforeAll
    static void writeTheTour() throws IOException
    {
        tour = TourPage.write(dir);
        html = Files.readString(tour.page(), StandardCharsets.UTF_8);
        final int start = html.indexOf("<script id=\"data\" type=\"application/json\">");
        final int end = html.indexOf("</script>", start);
        steps = new ObjectMapper().readTree(html.substring(html.indexOf('>', start) + 1, end)).get("steps");
    }

    @Test
    void tourPageShouldBeOneFileUnderTwoMegabytesThatLoadsNothingFromOutside() throws IOException
    {
        assertThat(Files.size(tour.page())).isLessThan(2_000_000L);
        assertThat(tour.out()).contains("explorer page written to " + tour.page() + ": " + tour.steps() + " steps, "
            + Files.size(tour.page()) + " bytes");
        final String data = "<script id=\"data\"";
        final String code = html.substring(0, html.indexOf(data))
            + html.substring(html.indexOf("</script>", html.indexOf(data)));
        assertThat(code.toLowerCase(java.util.Locale.ROOT)).doesNotContain("http:", "https:", " src=",
            "@import", "<link", "fetch(", "xmlhttprequest", "<img");
        assertThat(code).as("CSS urls other than the page's own #fragments").doesNotContainPattern("url\\((?!#)");
        assertThat(code).as("links other than to the page's own steps").doesNotContainPattern("href=(?!\"#)");
        assertThat(html).contains("<style>").contains("function merge(");
    }

    @Test
    void pageShouldHoldOneStepPerStatementTheRunCounted()
    {
        assertThat(steps.size()).isEqualTo(tour.steps());
        assertThat(steps.get(0).get("line").asText()).startsWith("host ");
        assertThat(steps.get(0).get("narration").asText()).startsWith("== Why registration exists ==");
    }

    @Test
    void eachStepShouldCarryOnlyWhatChangedAndAShowStepNothing()
    {
        JsonNode state = new ObjectMapper().createObjectNode();
        long patchBytes = 0;
        long stateBytes = 0;
        int shows = 0;
        for (final JsonNode s : steps)
        {
            final JsonNode patch = s.get("patch");
            state = MergePatch.apply(state, patch);
            patchBytes += patch.toString().length();
            stateBytes += state.toString().length();
            if (s.get("verb").asText().equals("show"))
            {
                assertThat(patch.isEmpty()).as("the patch of %s", s.get("line")).isTrue();
                shows++;
            }
        }
        assertThat(shows).isPositive();
        assertThat(patchBytes).as("patches against whole states").isLessThan(stateBytes / 4);
    }

    @Test
    void stateAfterEachRegistrationShouldHoldTheKeyPageSizeAndMttEntriesTheModelPrinted()
    {
        JsonNode state = new ObjectMapper().createObjectNode();
        int checked = 0;
        for (final JsonNode s : steps)
        {
            state = MergePatch.apply(state, s.get("patch"));
            final String[] words = s.get("line").asText().split(" ");
            final TourPage.Reg reg = words[0].equals("reg") ? tour.regs().get(words[1]) : null;
            if (reg == null || !s.get("ok").asBoolean())
            {
                continue;
            }
            final JsonNode key = keyNamed(state, words[1]);
            assertThat(key).as("MPT entry of %s after %s", words[1], s.get("where")).isNotNull();
            assertThat(key.get("key").asText()).isEqualTo(reg.key());
            assertThat(key.get("index").asLong()).isEqualTo(reg.index());
            assertThat(key.get("variant").asInt()).isEqualTo(reg.variant());
            if (reg.pageSize() != null)
            {
                assertThat(key.get("pageBytes").asLong()).isEqualTo(TourPage.bytes(reg.pageSize()));
                assertThat(key.get("mttEntries").asLong()).isEqualTo(reg.mttEntries());
            }
            checked++;
        }
        assertThat(checked).isEqualTo(tour.regs().size());
    }

    @Test
    void staleWriteStepShouldShowTheRkeysSlotFreeAndTheRemoteAccessError()
    {
        JsonNode stale = null;
        for (final JsonNode s : steps)
        {
            for (final JsonNode wr : s.get("wrs"))
            {
                if (wr.get("status").asText().equals("REM_ACCESS_ERR") && stale == null)
                {
                    stale = wr;
                }
            }
        }
        assertThat(stale).as("a work request that failed with REM_ACCESS_ERR").isNotNull();
        assertThat(tour.out()).contains("REM_ACCESS_ERR");
        assertThat(stale.get("slot").asText()).startsWith("free");
        final JsonNode history = stale.get("rkeyHistory");
        assertThat(steps.get(history.get("step").asInt() - 1).get("line").asText()).startsWith("reg mr_b ")
            .isEqualTo(history.get("line").asText());
        assertThat(steps.get(history.get("freed").get("step").asInt() - 1).get("line").asText())
            .isEqualTo("dereg mr_b");
        final String rkey = stale.get("rkey").asText();
        assertThat(tour.regs().values()).anySatisfy(r -> assertThat(r.key()).isEqualTo(rkey));
    }

    @Test
    void runOfSeveralScriptsShouldWriteOnePageEachAndAFailedStepShouldBeOnItsPage() throws IOException
    {
        final Path a = Files.writeString(dir.resolve("a.rsim"), "host h ram=1G\ndevice d h profile=connectx5\n"
            + "open app d\npd pd0 app\nmmap buf app 64K\nreg mr0 pd0 buf 64K access=local_write\n");
        final Path b = Files.writeString(dir.resolve("b.rsim"), "host h ram=1G\ndevice d h profile=connectx5\n"
            + "open app d memlock=64K\npd pd0 app\nmmap buf app 1M\nsay \"Too big for the limit.\"\n"
            + "reg mr0 pd0 buf 1M access=local_write\n");
        final StringWriter o = new StringWriter();
        final int code = Rnicsim.execute(new String[] {"run", a.toString(), b.toString(), "--html",
            dir.resolve("runs.html").toString()}, new PrintWriter(o, true), new PrintWriter(o, true));
        assertThat(code).as(o.toString()).isEqualTo(1);
        assertThat(dir.resolve("runs-a.html")).exists();
        final String pageB = Files.readString(dir.resolve("runs-b.html"));
        assertThat(pageB).contains("\"errno\":\"ENOMEM\"").contains("Too big for the limit.");
    }

    @Test
    void manyKeysAndScatteredFramesShouldBeListedUpToTheirBoundsAndCounted() throws IOException
    {
        final Path script = Files.writeString(dir.resolve("many.rsim"), "host h ram=2G aged=yes\n"
            + "device d h profile=connectx5\nopen app d memlock=unlimited\npd pd0 app\nmmap buf app 8M\n"
            + "touch buf 8M write\nrepeat 100 reg mr pd0 buf 64K access=local_write\n");
        final Path page = dir.resolve("many.html");
        final StringWriter o = new StringWriter();
        final int code = Rnicsim.execute(new String[] {"run", script.toString(), "--html", page.toString()},
            new PrintWriter(o, true), new PrintWriter(o, true));
        assertThat(code).as(o.toString()).isZero();
        final String text = Files.readString(page);
        final int start = text.indexOf('>', text.indexOf("<script id=\"data\""));
        JsonNode state = new ObjectMapper().createObjectNode();
        for (final JsonNode s : new ObjectMapper().readTree(text.substring(start + 1, text.indexOf("</script>", start)))
            .get("steps"))
        {
            state = MergePatch.apply(state, s.get("patch"));
        }
        final JsonNode device = state.get("devices").elements().next();
        assertThat(device.get("keys").size()).isEqualTo(StateSnapshot.MAX_KEYS);
        assertThat(device.get("moreKeys").asInt()).isEqualTo(100 - StateSnapshot.MAX_KEYS);
        assertThat(device.get("mptInUse").asLong()).isEqualTo(100);
        final JsonNode buf = state.get("hosts").get("h").get("processes").elements().next().get("buffers").get("buf");
        assertThat(buf.get("runs").size()).isEqualTo(StateSnapshot.MAX_RUNS);
        assertThat(buf.get("moreRuns").asInt()).isPositive();
        assertThat(buf.get("runs").get(0).get("pin").asInt()).isEqualTo(100);
        assertThat(Files.size(page)).isLessThan(200_000L);
    }

    private static JsonNode keyNamed(final JsonNode state, final String name)
    {
        for (final Iterator<Map.Entry<String, JsonNode>> d = state.get("devices").fields(); d.hasNext();)
        {
            for (final JsonNode k : d.next().getValue().get("keys"))
            {
                if (k.get("name").asText().equals(name))
                {
                    return k;
                }
            }
        }
        return null;
    }
}
