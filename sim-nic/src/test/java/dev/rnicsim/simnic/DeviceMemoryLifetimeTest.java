package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.MemoryRegion;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * Device memory lives as long as its context: closing the context (a process that exits without ibv_free_dm)
 * frees it and deregisters the MRs over it, as the kernel's cleanup of a closed uverbs file does; allocations are
 * whole 4 KiB pages of the device's memory (mlx5_cmd_alloc_memic).
 */
class DeviceMemoryLifetimeTest
{
    @Test
    void shouldFreeDeviceMemoryAndItsMrsWhenTheContextCloses()
    {
        final KeyRig k = KeyRig.connectx5();
        final long max = k.rig.deviceB.profile().maxDmSizeBytes();
        final SimContext other = k.rig.deviceB.open(k.rig.deviceB.host().host().spawn("short-lived"));
        final DeviceMemory dm = other.allocDm(max);
        final KeyRig.Footprint before = k.footprintB();
        final MemoryRegion mr = other.allocPd().regDmMr(dm, 0, 4096, EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE, Access.ZERO_BASED));
        assertThat(k.footprintB().mptInUse()).as("the MR has an MPT entry").isEqualTo(before.mptInUse() + 1);

        other.close();

        assertThat(dm.isClosed()).as("freed with its context").isTrue();
        assertThat(mr.isClosed()).as("deregistered with its context").isTrue();
        assertThat(k.footprintB().mptInUse()).as("no MPT entry is left behind").isEqualTo(before.mptInUse());
        assertThat(k.footprintB().mttInUse()).as("nor MTT entries").isEqualTo(before.mttInUse());
        assertThat(k.rig.ctxB.allocDm(max).lengthBytes()).as("the whole device memory is free again").isEqualTo(max);
    }

    @Test
    void shouldSetUpTheDeviceMemoryAtTheFirstAllocationOnlyNotWhenAContextCloses()
    {
        final KeyRig k = KeyRig.connectx5();
        final dev.rnicsim.pagetable.Host host = k.rig.deviceB.host().host();
        final long freeBefore = host.physicalMemory().freeFrames();
        final int processesBefore = host.processes().size();
        final SimContext other = k.rig.deviceB.open(host.spawn("short-lived"));
        other.close();
        assertThat(host.physicalMemory().freeFrames()).as("closing a context that allocated no device memory pins "
            + "no frames for it").isEqualTo(freeBefore);
        assertThat(host.processes()).as("nor makes the device memory's owner").hasSize(processesBefore + 1);

        final long max = k.rig.deviceB.profile().maxDmSizeBytes();
        assertThat(k.rig.ctxB.allocDm(max).lengthBytes()).as("the first allocation sets it up, whole")
            .isEqualTo(max);
        assertThat(host.physicalMemory().freeFrames()).as("its frames pinned then")
            .isLessThanOrEqualTo(freeBefore - max / 4096);
    }

    @Test
    void shouldRegisterAnEmptyRangeOfDeviceMemoryAsTheKernelDoes()
    {
        // UVERBS_METHOD_DM_MR_REG checks the range against the DM's length only: offset 0, length 0 is an MR
        final KeyRig k = KeyRig.connectx5();
        final DeviceMemory dm = k.rig.ctxB.allocDm(4);
        final MemoryRegion mr = k.rig.pdB.regDmMr(dm, 0, 0, EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED));
        assertThat(mr.lengthBytes()).isZero();
        assertThat(mr.lkey()).isNotZero();
        mr.close();
        dm.close();
        assertThat(dm.isClosed()).isTrue();
    }

    @Test
    void shouldTakeWholePagesSoThatSmallAllocationsFillTheDeviceMemoryByPages()
    {
        final KeyRig k = KeyRig.connectx5();
        final long pages = k.rig.deviceB.profile().maxDmSizeBytes() / SimDm.GRANULE_BYTES;
        for (long i = 0; i < pages; i++)
        {
            final DeviceMemory dm = k.rig.ctxB.allocDm(64);
            assertThat(dm.lengthBytes()).isEqualTo(64);
            assertThat(dm.copyGranuleBytes()).as("mlx5 copies 4-byte words").isEqualTo(4);
        }
        // every page holds one 64-byte allocation: the next one finds no free page (ENOMEM)
        final var e = org.assertj.core.api.Assertions.catchThrowableOfType(dev.rnicsim.verbs.VerbsException.class,
            () -> k.rig.ctxB.allocDm(64));
        assertThat(e.errnoName()).isEqualTo(dev.rnicsim.verbs.Errno.ENOMEM);
    }
}
