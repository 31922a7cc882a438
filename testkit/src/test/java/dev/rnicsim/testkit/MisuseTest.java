package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;

/**
 * Each misuse the actions can make is caught by strict mode, and jqwik shrinks the chain to the few script lines
 * that show it ({@link MisuseChecks}, run through the jqwik engine with fixed seeds).
 */
class MisuseTest
{
    private static final Map<String, JqwikRun.Outcome> OUTCOMES = JqwikRun.run(MisuseChecks.class);

    private static JqwikRun.Outcome failed(final String property)
    {
        final JqwikRun.Outcome o = OUTCOMES.get(property);
        assertThat(o).as(property).isNotNull();
        assertThat(o.result().getStatus()).as(o.message()).isEqualTo(TestExecutionResult.Status.FAILED);
        assertThat(o.report()).contains("Shrunk Sample");
        return o;
    }

    @Test
    void aWriteThroughAnMrWhoseMemoryWasUnmappedIsAStaleMapping()
    {
        final JqwikRun.Outcome o = failed("munmapUnderALiveMr");
        assertThat(o.message()).contains("STALE_MAPPING").contains("registered at:");
        assertThat(o.actions()).hasSizeLessThanOrEqualTo(5).anyMatch(a -> a.startsWith("reg mr"))
            .anyMatch(a -> a.startsWith("munmap buf")).last().asString().startsWith("post write qp_a");
    }

    @Test
    void aWriteFromTheParentAfterALegacyForkMovesItsPageAwayFromTheMr()
    {
        final JqwikRun.Outcome o = failed("writeFromTheParentAfterALegacyFork");
        assertThat(o.message()).contains("STALE_MAPPING").contains("now backed by frame");
        // After the fork the parent's page is shared copy-on-write: the next write to it, by the CPU or by the
        // pin of a new writable registration, gives the parent a copy, and the older MR keeps the old frame.
        assertThat(o.actions()).hasSizeLessThanOrEqualTo(6).anyMatch(a -> a.startsWith("fork child"))
            .anyMatch(a -> a.startsWith("write buf") || a.startsWith("reg mr") && !a.contains("access=none"))
            .last().asString().startsWith("post write qp_a");
    }

    @Test
    void aDeregisteredRkeyIsAStaleRkey()
    {
        final JqwikRun.Outcome o = failed("anyKeyEverIssued");
        assertThat(o.message()).contains("STALE_RKEY").contains("released at:");
        assertThat(o.actions()).hasSizeLessThanOrEqualTo(5).anyMatch(a -> a.startsWith("dereg mr"))
            .last().asString().contains(".rkey");
    }
}
