package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/** A host-kernel failure the test NIC passes on as a verb's failure says its errno once. */
class TestNicMessagesTest
{
    @Test
    void aFailedFixedMmapShouldSayItsErrnoOnce()
    {
        try (TestNic nic = TestNic.start())
        {
            assertThatThrownBy(() -> nic.mmapFixed(TestNic.Side.A, 0x1000_0001L, 4096))
                .isInstanceOf(VerbsException.class).hasMessageStartingWith("mmap: EINVAL: fixed address 0x10000001")
                .satisfies(e -> assertThat(e.getMessage().split("EINVAL", -1)).as(e.getMessage()).hasSize(2));
        }
    }
}
