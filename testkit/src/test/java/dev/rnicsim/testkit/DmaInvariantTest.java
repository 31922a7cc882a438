package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.dma.DmaPort;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import org.junit.jupiter.api.Test;

/**
 * The checker of the key-retirement invariant: what it reports, and that the engine's own retirements (mlx5's
 * NAK, rxe's wait) give it nothing to report.
 */
class DmaInvariantTest
{
    @Test
    void aDmaAccessThroughADeregisteredKeyIsReportedNamingTheStep()
    {
        try (TestNic nic = TestNic.start())
        {
            final long buf = nic.alloc(TestNic.Side.B, 4096);
            final MemoryRegion mr = nic.reg(TestNic.Side.B, buf, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            final int rkey = mr.rkey();
            nic.dereg(mr);
            final SimDevice b = nic.device(TestNic.Side.B);

            // What a device that kept using the key would make the DMA engine report.
            nic.dmaInvariant().accessed(new DmaPort(b.tables(), b.host().host().physicalMemory()), rkey, buf,
                0x10_0000, 64, true);

            assertThatThrownBy(() -> nic.dmaInvariant().assertHeld("dereg mr0")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("after `dereg mr0`").hasMessageContaining(String.format("key 0x%08x", rkey))
                .hasMessageContaining("no live MPT entry");
            nic.dmaInvariant().assertHeld("nothing since");
        }
    }

    @Test
    void aWriteDeregisteredMidMessageLeavesNothingToReportOnMlx5AndOnRxe()
    {
        for (final String profile : new String[] {"connectx5", "rxe"})
        {
            try (TestNic nic = TestNic.builder().profile(profile).start())
            {
                final long src = nic.alloc(TestNic.Side.A, 64 * 1024);
                final MemoryRegion srcMr = nic.reg(TestNic.Side.A, src, 64 * 1024, Access.LOCAL_WRITE);
                final long dst = nic.alloc(TestNic.Side.B, 64 * 1024);
                final MemoryRegion dstMr = nic.reg(TestNic.Side.B, dst, 64 * 1024, Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE);
                nic.queueWrite(srcMr, src, 64 * 1024, dst, dstMr.rkey());
                nic.progress(4);

                nic.dereg(dstMr);

                assertThat(nic.drain(TestNic.Side.A)).as(profile).extracting(WorkCompletion::status)
                    .containsExactly(profile.equals("rxe") ? WcStatus.SUCCESS : WcStatus.REM_ACCESS_ERR);
                assertThat(nic.dmaInvariant().violations()).as(profile).isEmpty();
                assertThat(nic.dmaInvariant().accesses()).as(profile).isGreaterThanOrEqualTo(8);
            }
        }
    }
}
