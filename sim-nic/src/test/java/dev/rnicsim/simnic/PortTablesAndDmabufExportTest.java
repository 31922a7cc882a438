package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DmaBuf;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.VerbsException;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PortTablesAndDmabufExportTest
{
    private static VerbsException refused(final Runnable r)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, r::run);
        assertThat(e).as("the call fails").isNotNull();
        return e;
    }

    @Test
    void shouldAnswerTheDefaultPkeyAtIndexZeroAndEnoentPastTheTable()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final int len = rig.ctxA.queryPort(1).pkeyTblLen();
        assertThat(rig.ctxA.queryPkey(1, 0)).isEqualTo(0xffff);
        if (len > 1)
        {
            assertThat(rig.ctxA.queryPkey(1, len - 1)).as("an empty entry").isZero();
        }
        final VerbsException e = refused(() -> rig.ctxA.queryPkey(1, len));
        assertThat(e.errnoName()).isEqualTo(Errno.ENOENT);
        assertThat(e.getMessage()).contains("pkeys/" + len, "pkey_tbl_len " + len);
        assertThat(refused(() -> rig.ctxA.queryPkey(2, 0)).errnoName()).as("a port the device lacks")
            .isEqualTo(Errno.ENOENT);
    }

    @Test
    void shouldListTheLinkLocalGidOfEachPortAndRefuseTooSmallABuffer()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final List<GidEntry> table = rig.ctxA.queryGidTable(rig.ctxA.queryPort(1).gidTblLen());
        assertThat(table).hasSize(rig.ctxA.queryDevice().physPortCnt());
        assertThat(table.get(0).portNum()).isEqualTo(1);
        assertThat(table.get(0).gidIndex()).isZero();
        assertThat(table.get(0).gid()).isEqualTo(rig.ctxA.queryGid(1, 0));
        final VerbsException e = refused(() -> rig.ctxA.queryGidTable(0));
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.getMessage()).contains("max_entries 0");
    }

    @Test
    void shouldReportThePortCountInPhysPortCntEx()
    {
        final var a = rig().ctxA.queryDevice();
        assertThat(a.physPortCntEx()).isEqualTo(a.physPortCnt()).isEqualTo(1);
    }

    private static RuleRig rig()
    {
        return RuleRig.unconnected(DeviceProfiles.connectx5());
    }

    @Test
    void shouldRefuseADmabufOnAHostWithoutAGpuWithEnodevAndAllocateNothing()
    {
        final RuleRig rig = rig();
        final VerbsException e = refused(() -> rig.ctxA.allocDmabuf(4096));
        assertThat(e.errnoName()).isEqualTo(Errno.ENODEV);
        assertThat(e.getMessage()).contains("no GPU", "addGpu");
    }

    @Test
    void shouldExportAGpuBufferThatRegistersAndFreeItsVramOnceClosedAndDeregistered()
    {
        final RuleRig rig = rig();
        final SimGpu gpu = rig.deviceA.host().addGpu("g0", 1L << 30, SimGpu.DEFAULT_BAR1_BYTES, GpuTopology.PIX);
        final DmaBuf d = rig.ctxA.allocDmabuf(100);
        assertThat(d.sizeBytes()).as("rounded up to the GPU page").isEqualTo(SimGpu.GPU_PAGE_BYTES);
        assertThat(gpu.vramUsedBytes()).isEqualTo(SimGpu.GPU_PAGE_BYTES);
        d.write(8, new byte[] {1, 2, 3});
        assertThat(d.read(8, 3)).containsExactly(1, 2, 3);
        assertThat(refused(() -> d.write(SimGpu.GPU_PAGE_BYTES - 1, new byte[2])).errnoName())
            .isEqualTo(Errno.EFAULT);
        assertThat(d.read(8, 3)).as("the refused write stored nothing").containsExactly(1, 2, 3);
        final MemoryRegion mr = rig.pdA.regDmabufMr(0, 4096, 0, d.fd(), Set.of(Access.LOCAL_WRITE));
        d.close();
        d.close();
        assertThat(refused(() -> d.read(0, 1)).errnoName()).isEqualTo(Errno.EBADF);
        assertThat(gpu.vramUsedBytes()).as("the MR keeps the VRAM").isEqualTo(SimGpu.GPU_PAGE_BYTES);
        mr.close();
        assertThat(gpu.vramUsedBytes()).isZero();
    }
}
