package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SmokeTest
{
    @Test
    void shouldMapTouchPinAndUnpin()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(1L << 30).thpMode(ThpMode.ALWAYS).build());
        final UserProcess p = host.spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final long va = p.mmapAnonymous(8L << 20);
        assertThat(va & ((2 << 20) - 1)).isZero();
        p.write(va + 100, new byte[] {1, 2, 3});
        assertThat(p.read(va + 100, 3)).containsExactly(1, 2, 3);
        final PinnedPages pin = p.pinUserPages(va, 8L << 20, true, true);
        assertThat(pin.runs()).allSatisfy(r -> assertThat(r.pageSizeBytes()).isEqualTo(2L << 20));
        assertThat(p.pinnedVmPages()).isEqualTo(2048);
        final long free = host.physicalMemory().freeFrames();
        assertThat(free + host.physicalMemory().usedFrames()).isEqualTo(host.physicalMemory().totalFrames());
        p.munmap(va, 8L << 20);
        assertThat(host.physicalMemory().freeFrames()).isEqualTo(free);
        p.unpinUserPages(pin);
        assertThat(host.physicalMemory().freeFrames()).isEqualTo(host.physicalMemory().totalFrames());
        assertThat(p.pinnedVmPages()).isZero();
    }
}
