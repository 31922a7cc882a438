package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Registration and translation through AdapterTables of random buffers: 4 KiB pages and 2 MiB THPs, scattered or
 * physically contiguous, starting anywhere in their first page, with an iova equal to the address, congruent with
 * it modulo 1 GiB, congruent only modulo 4 KiB, at the top of the 64-bit space, or (for ConnectX-3's sub-4 KiB
 * sizes) differing below 4 KiB; every page_size_cap shape; both MTT allocators. The DMA address translate returns
 * for every sampled byte equals the one walked independently from the runs, and deregistration gives everything
 * back.
 */
class TranslationProperties
{
    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long[] CAPS = {0xfffff000L, 0xfffffffffffff000L, 0x40201000L, 0xfffffe00L};

    @Provide
    Arbitrary<Long> caps()
    {
        return Arbitraries.of(CAPS[0], CAPS[1], CAPS[2], CAPS[3]);
    }

    /** The buffer: its runs (as the scatterlist gives them), address, length and iova. */
    private record Buffer(List<DmaRun> runs, long address, long length, long iova)
    {
    }

    private static Buffer buffer(final int chunks, final int iovaKind, final long seed)
    {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final long pgoff = rnd.nextInt(3) == 0 ? 0 : rnd.nextLong(4096);
        final long address = 0x7f00_0000_0000L + rnd.nextLong(1L << 20) * 2 * MIB + pgoff;
        final List<DmaRun> runs = new ArrayList<>();
        // now and then the first run is congruent with the buffer's VA modulo 1 GiB, so large pages can fit
        long end = rnd.nextInt(4) == 0
            ? rnd.nextLong(1, 1L << 14) * (1L << 30) + ((address - pgoff) & ((1L << 30) - 1))
            : -1;
        final boolean congruentStart = end >= 0;
        for (int c = 0; c < chunks; c++)
        {
            final boolean contiguous = end >= 0 && (rnd.nextInt(3) != 0 || c == 0 && congruentStart);
            if (rnd.nextBoolean())
            {
                final long base = contiguous && (end & (2 * MIB - 1)) == 0 ? end
                    : rnd.nextLong(1L << 10, 1L << 24) * 2 * MIB;
                runs.add(new DmaRun(base, 2 * MIB));
                end = base + 2 * MIB;
            }
            else
            {
                final int pages = 1 + rnd.nextInt(6);
                for (int p = 0; p < pages; p++)
                {
                    final long base = (contiguous || p > 0) && rnd.nextInt(4) != 0 && end >= 0 ? end
                        : rnd.nextLong(1L << 8, 1L << 28) * 4 * KIB;
                    runs.add(new DmaRun(base, 4 * KIB));
                    end = base + 4 * KIB;
                }
            }
        }
        final long total = runs.stream().mapToLong(DmaRun::lengthBytes).sum();
        final long trim = rnd.nextLong(Math.min(4096, total - pgoff));
        final long length = total - pgoff - trim;
        final long span = (pgoff + length + 4095) & -4096L;
        final long iova = switch (iovaKind)
        {
            case 0 -> address;
            case 1 -> rnd.nextLong(1L << 16) * (1L << 30) + (address & ((1L << 30) - 1));
            case 2 -> rnd.nextLong(1L << 34) * 4096 + pgoff;
            case 3 -> -span - rnd.nextLong(64) * 4096 + pgoff;
            // differs from the address below 4 KiB, by a multiple of 512 bytes (ConnectX-3 sizes) or not at all
            default -> rnd.nextLong(1L << 34) * 4096 + ((pgoff + 512 * rnd.nextLong(8)) & 0xfff);
        };
        return new Buffer(List.copyOf(runs), address, length, iova);
    }

    @Property(tries = 1000)
    void translationOfEverySampledByteEqualsTheAddressWalkedFromTheRuns(
        @ForAll @IntRange(min = 1, max = 5) final int chunks, @ForAll @IntRange(min = 0, max = 4) final int iovaKind,
        @ForAll("caps") final long cap, @ForAll final boolean buddy, @ForAll final long seed)
    {
        final Buffer b = buffer(chunks, iovaKind, seed);
        final AdapterTables t = new AdapterTables(new AdapterConfig(
            buddy ? MttConfig.buddy(16, 0) : MttConfig.exact(1 << 16), MptConfig.of(8, VariantPolicy.GENERATION),
            cap, 16, 2));
        final RegisteredMr[] got = new RegisteredMr[1];
        final Throwable thrown = catchThrowable(() ->
            got[0] = t.register(3, b.runs(), b.address(), b.length(), b.iova(), AccessFlags.LOCAL_WRITE));
        if (thrown != null)
        {
            // only an iova that differs from the address below 4 KiB may leave no page size
            assertThat(iovaKind).as("registration of %s failed: %s", b, thrown).isEqualTo(4);
            assertThat(thrown).isInstanceOf(TableException.class);
            assertThat(((TableException)thrown).errno()).isEqualTo(Errno.EINVAL);
            assertThat(t.mtt().counters().entriesInUse()).isZero();
            assertThat(t.mpt().inUse()).isZero();
            return;
        }
        final RegisteredMr mr = got[0];
        assertThat(cap & mr.pageSizeBytes()).isEqualTo(mr.pageSizeBytes());
        assertThat(mr.mtt().entries())
            .isEqualTo(PageSizeSelector.numDmaBlocks(b.iova(), b.length(), mr.pageSizeBytes()));

        final SplittableRandom rnd = new SplittableRandom(seed ^ 0x5DEECE66DL);
        final List<Long> offsets = new ArrayList<>(List.of(0L, b.length() - 1));
        long runStart = -(b.address() & 0xfff);
        for (final DmaRun r : b.runs())
        {
            for (final long o : new long[] {runStart - 1, runStart, runStart + r.lengthBytes() - 1})
            {
                if (o >= 0 && o < b.length())
                {
                    offsets.add(o);
                }
            }
            runStart += r.lengthBytes();
        }
        for (int i = 0; i < 24; i++)
        {
            offsets.add(rnd.nextLong(b.length()));
        }
        for (final long o : offsets)
        {
            final long dma = t.translate(mr.key(), 3, AccessFlags.LOCAL_WRITE, b.iova() + o, 1);
            assertThat(dma).as("offset 0x%x of %s, page size %d (%s)", o, b, mr.pageSizeBytes(),
                KeyCheck.ofTranslation(dma)).isEqualTo(AdapterTablesTest.expectedDma(b.runs(), b.address(), o));
        }

        t.deregister(mr.key());
        final MttCounters c = t.mtt().counters();
        assertThat(new long[] {c.entriesInUse(), c.entriesFree(), c.largestFreeBlock(), t.mpt().inUse()})
            .containsExactly(0, c.capacityEntries(), c.capacityEntries(), 0);
        for (long i = mr.mtt().firstEntry(); i < mr.mtt().firstEntry() + mr.mtt().entries(); i++)
        {
            assertThat(t.mtt().entry(i)).isZero();
        }
    }
}
