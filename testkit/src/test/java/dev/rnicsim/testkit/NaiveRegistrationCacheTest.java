package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;

/**
 * The example of docs/testing.md: the property of {@link NaiveCacheCheck}, run through the jqwik engine with a fixed seed,
 * fails with a STALE_MAPPING violation and a shrunk chain that reads as a script; the same property holds for the
 * fixed cache ({@link FixedRegistrationCacheProperties}).
 */
class NaiveRegistrationCacheTest
{
    @Test
    void strictModeCatchesTheNaiveCacheWithAShrunkCounterexample()
    {
        final JqwikRun.Outcome o = JqwikRun.run(NaiveCacheCheck.class).get("naiveCacheKeepsStrictModeClean");
        assertThat(o.result().getStatus()).isEqualTo(TestExecutionResult.Status.FAILED);
        if (Boolean.getBoolean("testkit.print"))
        {
            System.out.println(o.message() + "\n" + o.report());
        }
        assertThat(o.message()).contains("Invariant 'strict mode' failed after the following actions")
            .contains("strict mode: 1 violation\n  STALE_MAPPING: RDMA_WRITE")
            .contains("the MR outlived its memory")
            .contains("registered at:\n        at dev.rnicsim.testkit.NaiveRegistrationCache.get(");
        assertThat(o.report()).contains("Shrunk Sample").contains("seed = " + NaiveCacheCheck.SEED);
        // Shrunk from 15 actions to the few that matter: the buffer written through the cache, freed, its pages
        // mapped again by a later allocation, and the cache's MR used again.
        assertThat(o.actions()).hasSizeLessThanOrEqualTo(8)
            .anyMatch(a -> a.startsWith("munmap buf"))
            .last().asString().endsWith("# rkey from the registration cache");
    }
}
