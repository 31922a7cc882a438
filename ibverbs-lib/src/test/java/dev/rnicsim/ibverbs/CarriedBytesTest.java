package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Sge;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When the bytes a doorbell carried may stand for the gather of its SGEs. */
class CarriedBytesTest
{
    private static final Sge A = new Sge(0x1000, 60, 7);
    private static final Sge B = new Sge(0x3000, 40, 7);

    @Test
    void bytesReadAtAddressesTheMrMapsToThemselvesAreUsed()
    {
        assertThat(CarriedBytes.usable(List.of(A, B), List.of(new ProcessMemory.Range(0x1000, 60),
            new ProcessMemory.Range(0x3000, 40)), new byte[100])).isTrue();
    }

    @Test
    void anMrAtAnotherIovaMakesTheServerReadTheBytesItself()
    {
        // the library read at the iova; the program's bytes are at the MR's address
        assertThat(CarriedBytes.usable(List.of(A), List.of(new ProcessMemory.Range(0x7f00_0000_1000L, 60)),
            new byte[60])).isFalse();
    }

    @Test
    void bytesThatDoNotMatchTheSgesLengthsOrExceedTheLimitAreNotUsed()
    {
        assertThat(CarriedBytes.usable(List.of(A), List.of(new ProcessMemory.Range(0x1000, 60)), new byte[59]))
            .isFalse();
        final Sge big = new Sge(0x1000, CarriedBytes.MAX_BYTES + 1, 7);
        assertThat(CarriedBytes.usable(List.of(big), List.of(new ProcessMemory.Range(0x1000, CarriedBytes.MAX_BYTES
            + 1)), new byte[CarriedBytes.MAX_BYTES + 1])).isFalse();
    }
}
