package dev.rnicsim.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.ForkBehaviour;
import org.junit.jupiter.api.Test;

/**
 * The generators' snapshot is kept across CPU loads and stores and RDMA operations, and taken afresh after any other
 * action; a kept snapshot that differs from a fresh one fails the run while {@link Lockstep#verifySnapshots} is on
 * (the suites), so that the rule the soak relies on is checked on every action where it applies.
 */
class SnapshotReuseTest
{
    private static final ChainParams PARAMS = new ChainParams(ForkBehaviour.MODERN, 64L << 10, 8, false);

    @Test
    void aSnapshotIsKeptAcrossCpuAndRdmaActionsOnlyAndCheckedAgainstAFreshOne()
    {
        final Lockstep s = new Lockstep(PARAMS, new ReuseStats(), VariantPolicy.GENERATION);
        try
        {
            final KeyChains.Snapshot empty = s.snapshot();
            s.apply(new KeyOps.Mmap("buf0", 8L << 10));
            final KeyChains.Snapshot mapped = s.snapshot();
            assertThat(mapped).as("taken afresh after an mmap").isNotSameAs(empty);
            assertThat(mapped.bufs()).hasSize(1);
            s.apply(new KeyOps.CpuWrite("buf0", 0, "abc"));
            s.apply(new KeyOps.CpuRead("buf0", 0, 3));
            assertThat(s.snapshot()).as("kept across a store and a load").isSameAs(mapped);

            // A change the rule does not expect (here made behind the chain's back): the fresh snapshot differs.
            s.ref().bufs.put("stray", new WorldModel.Buf("stray", mapped.bufs().get(0).addr(), 4096));
            s.apply(new KeyOps.CpuRead("buf0", 1, 1));
            final boolean verify = Lockstep.verifySnapshots;
            try
            {
                Lockstep.verifySnapshots = true;
                assertThatThrownBy(s::snapshot).isInstanceOf(Mismatch.class)
                    .hasMessageContaining("differs from one taken afresh");
            }
            finally
            {
                Lockstep.verifySnapshots = verify;
            }
        }
        finally
        {
            s.release();
        }
    }
}
