package dev.rnicsim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.RdmaDemo;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimCounter;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * bin/demo runs this demo after the host demo: what it prints must agree with the model.
 */
class RdmaDemoTest
{
    @Test
    void shouldPrintOutcomesAndFiguresThatAgreeWithTheModel()
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final SimFabric fabric = RdmaDemo.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        final String out = bytes.toString(StandardCharsets.UTF_8);
        final SimDevice alpha = fabric.devices().get(0);
        final SimDevice beta = fabric.devices().get(1);

        assertThat(out).contains("beta's memory at target+128: \"[header][payload][trailer]\"");
        assertThat(out).contains("RDMA READ back into alpha's huge-page MR: \"[header][payload][trailer]\"");
        assertThat(out).contains("wr_id=3 IBV_WC_REM_ACCESS_ERR");
        assertThat(out).contains("beta's memory at target+128 is unchanged: \"[header][payload][trailer]\"");
        assertThat(out).contains("REMOTE_WRITE without LOCAL_WRITE: ibv_reg_mr: EINVAL:").contains("ibv_reg_mr: ENOMEM: pinned_vm=");
        assertThat(out).contains("QP states after the NAK: alpha ERR, beta ERR");

        // Registration figures printed are the trace's: the huge-page MR is one MTT entry per 2 MiB.
        final List<RegistrationEvent> regs = alpha.recentRegistrations().stream()
            .filter(e -> e.kind() == RegistrationEvent.Kind.REG).toList();
        final RegistrationEvent hugeReg = regs.get(1);
        assertThat(hugeReg.pageSizeBytes()).isEqualTo(2L << 20);
        assertThat(hugeReg.mttEntries()).isEqualTo(2);
        assertThat(out).contains(String.format("%.1f us", hugeReg.durationNs() / 1000.0));
        assertThat(out).contains("simulated time: ");

        // Everything was released when the contexts closed.
        assertThat(alpha.counter(SimCounter.PINNED_BYTES)).isZero();
        assertThat(beta.counter(SimCounter.PINNED_BYTES)).isZero();
        assertThat(alpha.counter(SimCounter.MR_LIVE)).isZero();
        assertThat(beta.counter(SimCounter.RESP_REMOTE_ACCESS_ERRORS)).isEqualTo(1);
        assertThat(out).contains("after closing both contexts: pinned bytes alpha=0 beta=0");
    }
}
