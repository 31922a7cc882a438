package dev.rnicsim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.scenarios.HostDemo;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/**
 * bin/demo runs this demo first: its output must agree with the model's state after it ran.
 */
class HostDemoTest
{
    @Test
    void shouldPrintViewsThatAgreeWithTheModelAfterTheDemo()
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final Host host = HostDemo.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        final String out = bytes.toString(StandardCharsets.UTF_8);
        final UserProcess app = host.processes().stream().filter(p -> p.name().equals("trainer")).findFirst()
            .orElseThrow();

        assertThat(app.pinnedVmPages()).isPositive();
        assertThat(out).containsPattern("VmPin:\\s+" + app.pinnedVmPages() * 4 + " kB");
        assertThat(out).containsPattern("HugePages_Free:\\s+" + host.hugepagesFree(PageSize.SIZE_2M) + "\n");
        assertThat(out).contains("ENOMEM: pinned_vm=").contains("RLIMIT_MEMLOCK=");
        assertThat(host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN)).isPositive();
        assertThat(out).contains("pgmigrate_longterm_pin " + host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN));
        assertThat(out).contains("ZONE_MOVABLE before, ZONE_NORMAL after");
        assertThat(out).containsPattern("AnonHugePages:\\s+[1-9][0-9]* kB");
        // On a fragmented ZONE_NORMAL the 4 KiB buffer lands on scattered frames: one MTT entry per page.
        assertThat(out).contains("16 MiB of 4 KiB pages: page size 4 kB, MTT entries 4096");
        assertThat(out).contains("after ibv_dereg_mr the same rkey gives: NO_SUCH_INDEX");
    }
}
