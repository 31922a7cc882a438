package com.example.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.rnicsim.testkit.StrictMode;
import dev.rnicsim.testkit.TestNic;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.testkit.TestNicExtension;
import dev.rnicsim.testkit.Violation;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WcStatus;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Example tests of RDMA code on the simulated NIC: the extension injects two connected simulated hosts in strict mode
 * and fails a test that leaves misuse behind (a leaked MR, a stale key, DMA into freed memory).
 */
@ExtendWith(TestNicExtension.class)
class ReplicationTest
{
    @Test
    void aRemoteWriteLandsInThePeersBuffer(final TestNic nic)
    {
        final byte[] data = "replicated".getBytes(StandardCharsets.US_ASCII);
        final long src = nic.alloc(Side.A, 64 << 10);
        final long dst = nic.alloc(Side.B, 64 << 10);
        try (MemoryRegion ms = nic.reg(Side.A, src, 64 << 10, Access.LOCAL_WRITE);
            MemoryRegion md = nic.reg(Side.B, dst, 64 << 10, Access.LOCAL_WRITE, Access.REMOTE_WRITE))
        {
            nic.cpuWrite(Side.A, src, data);
            assertEquals(WcStatus.SUCCESS, nic.write(ms, src, data.length, dst, md.rkey()).status());
            assertArrayEquals(data, nic.cpuRead(Side.B, dst, data.length));
        }
    }

    @Test
    void strictModeNamesAWriteWithAStaleRkey(final TestNic nic, final StrictMode strict)
    {
        final long src = nic.alloc(Side.A, 4096);
        final long dst = nic.alloc(Side.B, 4096);
        try (MemoryRegion ms = nic.reg(Side.A, src, 4096, Access.LOCAL_WRITE))
        {
            final MemoryRegion md = nic.reg(Side.B, dst, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            final int staleRkey = md.rkey();
            nic.dereg(md);
            assertEquals(WcStatus.REM_ACCESS_ERR, nic.write(ms, src, 8, dst, staleRkey).status());
            assertEquals(Violation.Kind.STALE_RKEY, strict.violations().get(0).kind());
            strict.clear();                       // expected here; left in, it would fail the test at its end
        }
    }
}
