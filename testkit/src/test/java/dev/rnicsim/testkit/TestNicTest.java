package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import org.junit.jupiter.api.Test;

/**
 * The fixture's helpers.
 */
class TestNicTest
{
    @Test
    void twoConnectedHostsWithTheProfileAsked()
    {
        try (TestNic nic = TestNic.builder().profile("rxe").forkBehaviour(ForkBehaviour.LEGACY).start())
        {
            assertThat(nic.device(Side.A).profile().name()).isEqualTo("rxe");
            assertThat(nic.device(Side.A).host()).isNotSameAs(nic.device(Side.B).host());
            assertThat(nic.qp(Side.A).state()).isEqualTo(QpState.RTS);
            assertThat(nic.process(Side.B).rlimitMemlockBytes()).isEqualTo(UserProcess.RLIM_INFINITY);
            assertThat(nic.script()).contains("fork=legacy").contains("profile=rxe");
        }
        assertThatThrownBy(() -> TestNic.builder().profile("cx9")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("connectx5");
        try (TestNic nic = TestNic.start(DeviceProfiles.e810()))
        {
            assertThat(nic.profile().name()).isEqualTo("e810");
        }
    }

    @Test
    void memoryHelpers()
    {
        try (TestNic nic = TestNic.start())
        {
            final long buf = nic.alloc(Side.B, 8192);
            nic.cpuWrite(Side.B, buf, new byte[] {7});
            assertThatThrownBy(() -> nic.mmapFixed(Side.B, buf, 4096)).isInstanceOf(VerbsException.class)
                .extracting(e -> ((VerbsException)e).errno()).isEqualTo(17);
            assertThat(nic.remap(Side.B, buf, 8192)).isEqualTo(buf);
            assertThat(nic.cpuRead(Side.B, buf, 1)).containsExactly(0);
            final UserProcess child = nic.fork(Side.B);
            assertThat(child.pid()).isNotEqualTo(nic.process(Side.B).pid());
            final long before = nic.fabric().clock().nowNs();
            nic.advanceClock(1000);
            assertThat(nic.fabric().clock().nowNs()).isEqualTo(before + 1000);
        }
    }

    @Test
    void postHelpersReconnectAfterAnError()
    {
        try (TestNic nic = TestNic.start())
        {
            final long a = nic.alloc(Side.A, 4096);
            final long b = nic.alloc(Side.B, 4096);
            final MemoryRegion ma = nic.reg(Side.A, a, 4096, Access.LOCAL_WRITE);
            final MemoryRegion mb = nic.reg(Side.B, b, 4096, Access.LOCAL_WRITE, Access.REMOTE_READ);
            assertThat(nic.write(ma, a, 8, b, mb.rkey()).status()).as("no REMOTE_WRITE")
                .isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(nic.qp(Side.A).state()).isEqualTo(QpState.ERR);
            assertThat(nic.read(ma, a, 8, b, mb.rkey()).ok()).isTrue();
            assertThat(nic.reconnects()).isEqualTo(1);
            assertThat(nic.send(ma, a, 8, mb, b, 4096).ok()).isTrue();
            assertThat(nic.lastReceive().ok()).isTrue();
            assertThatThrownBy(() -> nic.reg(Side.B, b, 4096, Access.REMOTE_WRITE)).isInstanceOf(
                VerbsException.class).extracting(e -> ((VerbsException)e).errnoName()).isEqualTo(Errno.EINVAL);
            nic.dereg(ma);
            nic.dereg(mb);
        }
    }

    @Test
    void closeIsIdempotentAndLaterUseIsRefused()
    {
        final TestNic nic = TestNic.start();
        nic.close();
        nic.close();
        assertThat(nic.isClosed()).isTrue();
        assertThatThrownBy(() -> nic.alloc(Side.A, 4096)).isInstanceOf(IllegalStateException.class);
    }
}
