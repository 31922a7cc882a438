package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * A stale key after its variant wrapped: a 64 KiB WRITE is in flight to an MR; the MR is deregistered, its buffer
 * unmapped and mapped again at the same address, and buffers are registered there until one gets the very same
 * 32-bit rkey back (after the 8-bit variant wrapped: 256 registrations of the index). The rest of the old WRITE is then accepted by the new
 * registration, as hardware would accept it: the packets carry only the rkey the first packet was checked with. The
 * testkit's {@link DmaInvariant} catches it and says after how many registrations the key came back. Without the
 * key coming back, the rest is NAKed and nothing is reported.
 */
class StaleKeyWrapProperties
{
    private static final long MSG = 64 * 1024;

    /**
     * ConnectX-5 whose MPT holds 2 MRs and counts a variant per index (mlx4's generation-counted keys): the freed
     * indices come back with their variant one further, so a key comes back after 256 registrations of its index.
     */
    private static DeviceProfile recycling()
    {
        final DeviceProfile p = DeviceProfiles.connectx5();
        return p.withAttributes(p.attributes().toBuilder().maxMr(2).build()).withVariantPolicy(
            VariantPolicy.GENERATION);
    }

    @Property(tries = 8, seed = "256")
    void aKeyThatCameBackAfterTheVariantWrappedIsCaughtWithItsReuseCount(
        @ForAll @IntRange(min = 1, max = 14) final int packetsBefore)
    {
        try (TestNic nic = TestNic.builder().profile(recycling()).start())
        {
            final long src = nic.alloc(TestNic.Side.A, MSG);
            final MemoryRegion srcMr = nic.reg(TestNic.Side.A, src, MSG, Access.LOCAL_WRITE);
            final long dst = nic.alloc(TestNic.Side.B, MSG);
            final MemoryRegion dstMr = nic.reg(TestNic.Side.B, dst, MSG, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            final int rkey = dstMr.rkey();
            nic.queueWrite(srcMr, src, MSG, dst, rkey);
            nic.progress(packetsBefore);

            nic.dereg(dstMr);
            nic.munmap(TestNic.Side.B, dst, MSG);
            nic.mmapFixed(TestNic.Side.B, dst, MSG);
            int registrations = 0;
            MemoryRegion again = null;
            while (registrations < 4096)
            {
                final MemoryRegion mr = nic.reg(TestNic.Side.B, dst, MSG, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                registrations++;
                if (mr.rkey() == rkey)
                {
                    again = mr;
                    break;
                }
                nic.dereg(mr);
            }
            assertThat(again).as("the rkey came back within 4096 registrations").isNotNull();
            // Two MPT indices take turns; each counts its own 8-bit variant.
            assertThat(registrations).isEqualTo(512);

            final List<WorkCompletion> wcs = nic.drain(TestNic.Side.A);

            assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
            assertThat(nic.dmaInvariant().violations()).isNotEmpty();
            assertThat(nic.dmaInvariant().violations().get(0)).contains("registered 256 times")
                .contains("8-bit variant came back").contains(String.format("rkey 0x%08x", rkey));
            nic.dereg(again);
        }
    }

    @Property(tries = 8, seed = "257")
    void withoutTheKeyComingBackTheRestIsNakedAndNothingIsReported(
        @ForAll @IntRange(min = 1, max = 14) final int packetsBefore)
    {
        try (TestNic nic = TestNic.builder().profile(recycling()).start())
        {
            final long src = nic.alloc(TestNic.Side.A, MSG);
            final MemoryRegion srcMr = nic.reg(TestNic.Side.A, src, MSG, Access.LOCAL_WRITE);
            final long dst = nic.alloc(TestNic.Side.B, MSG);
            final MemoryRegion dstMr = nic.reg(TestNic.Side.B, dst, MSG, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            nic.queueWrite(srcMr, src, MSG, dst, dstMr.rkey());
            nic.progress(packetsBefore);

            nic.dereg(dstMr);
            final MemoryRegion other = nic.reg(TestNic.Side.B, dst, MSG, Access.LOCAL_WRITE, Access.REMOTE_WRITE);

            assertThat(nic.drain(TestNic.Side.A)).extracting(WorkCompletion::status)
                .containsExactly(WcStatus.REM_ACCESS_ERR);
            assertThat(nic.dmaInvariant().violations()).isEmpty();
            assertThat(nic.dmaInvariant().accesses()).isGreaterThan(0);
            nic.dereg(other);
        }
    }
}
