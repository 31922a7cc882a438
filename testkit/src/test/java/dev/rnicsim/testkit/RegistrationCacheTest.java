package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.testkit.Violation.Kind;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The counterexample the property found, written out by hand: a buffer is used through the cache, freed, and its
 * pages mapped again by a later allocation at the same address; the cache is asked for that address again.
 */
class RegistrationCacheTest
{
    private static final byte[] DATA = "from a".getBytes(StandardCharsets.US_ASCII);

    /** Runs the scenario with a cache; returns what the application reads where the peer wrote. */
    private static byte[] scenario(final TestNic nic, final NaiveRegistrationCache cache)
    {
        final long src = nic.alloc(Side.A, 4096);
        nic.cpuWrite(Side.A, src, DATA);
        final MemoryRegion ms = nic.reg(Side.A, src, 4096, Access.LOCAL_WRITE);
        final long buf = nic.alloc(Side.B, 64 << 10);
        assertThat(nic.write(ms, src, DATA.length, buf, cache.get(buf, 4096).rkey()).ok()).isTrue();
        nic.munmap(Side.B, buf, 64 << 10);                    // free()
        final long again = nic.mmapFixed(Side.B, buf, 4096);  // malloc() gives the address back
        assertThat(again).isEqualTo(buf);
        assertThat(nic.write(ms, src, DATA.length, again, cache.get(again, 4096).rkey()).ok()).isTrue();
        final byte[] seen = nic.cpuRead(Side.B, again, DATA.length);
        ms.close();
        cache.close();
        return seen;
    }

    @Test
    void theNaiveCacheHandsOutAnMrOverPagesTheBufferNoLongerHas()
    {
        try (TestNic nic = TestNic.start())
        {
            final StrictMode strict = nic.strict();
            final NaiveRegistrationCache cache = new NaiveRegistrationCache(nic.pd(Side.B));
            final byte[] seen = scenario(nic, cache);
            assertThat(seen).as("the peer's bytes went to the old pages").isNotEqualTo(DATA);
            assertThat(cache.hits()).isEqualTo(1);
            assertThat(strict.violations()).extracting(Violation::kind).containsExactly(Kind.STALE_MAPPING);
            strict.clear();
        }
    }

    @Test
    void theFixedCacheRegistersTheNewPages()
    {
        try (TestNic nic = TestNic.start())
        {
            nic.strict();
            final NaiveRegistrationCache cache = new FixedRegistrationCache(nic.pd(Side.B), nic.memory(Side.B));
            assertThat(scenario(nic, cache)).isEqualTo(DATA);
            assertThat(cache.hits()).isZero();
            assertThat(cache.misses()).isEqualTo(2);
        }
    }
}
