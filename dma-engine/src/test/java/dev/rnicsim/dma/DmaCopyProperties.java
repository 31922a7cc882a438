package dev.rnicsim.dma;

import static dev.rnicsim.dma.DmaFixture.CAP_4K_2M;
import static dev.rnicsim.dma.DmaFixture.CAP_ALL;
import static dev.rnicsim.dma.DmaFixture.HUGE;
import static dev.rnicsim.dma.DmaFixture.KIB;
import static dev.rnicsim.dma.DmaFixture.PAGE;
import static dev.rnicsim.dma.DmaFixture.pattern;
import static dev.rnicsim.mtt.AccessFlags.LOCAL_WRITE;
import static dev.rnicsim.mtt.AccessFlags.REMOTE_ATOMIC;
import static dev.rnicsim.mtt.AccessFlags.REMOTE_READ;
import static dev.rnicsim.mtt.AccessFlags.REMOTE_WRITE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.dma.DmaFixture.Mr;
import dev.rnicsim.dma.DmaFixture.Side;
import dev.rnicsim.pagetable.ThpMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Random transfers between a buffer of physically scattered 4 KiB pages and either another one or a window of 2 MiB
 * pages that straddles the boundary between two huge pages that are not physically contiguous, with iova == address
 * or a ZERO_BASED-like iova: any split of a range into SGEs (empty ones included) moves exactly the bytes a reference
 * array copy moves, and not one byte outside the target range.
 */
class DmaCopyProperties
{
    private static final int PD_A = 1;
    private static final int PD_B = 2;
    private static final int MR_ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;
    private static final int QP_ALL = REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;
    private static final int LOCAL_LEN = (int)(5 * PAGE) + 0x321;
    private static final int MAX_MESSAGE = 12_000;
    /** The remote window: 16 KiB either side of a 2 MiB boundary, or 6 pages of 4 KiB. */
    private static final int WINDOW = (int)(32 * KIB);
    private static final int SMALL_REMOTE_LEN = (int)(6 * PAGE);

    /** The two sides of one try, with their buffers and the reference copies of their contents. */
    private static final class World
    {
        final DmaEngine engine = new DmaEngine();
        final Side a = Side.create(ThpMode.NEVER, CAP_ALL);
        final Side b;
        final Mr local;
        final Mr remote;
        final byte[] localRef;
        final byte[] remoteRef;

        World(final int localPageOffset, final boolean hugeRemote, final boolean zeroBased, final long seed)
        {
            localRef = pattern(LOCAL_LEN, seed);
            final long la = a.mmapScattered(LOCAL_LEN + PAGE) + localPageOffset;
            a.process().write(la, localRef);
            local = a.register(la, LOCAL_LEN, PD_A, MR_ALL, zeroBased ? la & 0xfff : la);
            if (hugeRemote)
            {
                b = Side.create(ThpMode.ALWAYS, CAP_4K_2M);
                final long base = b.mmapScatteredHuge();
                final long rb = base + HUGE - WINDOW / 2;
                remoteRef = pattern(WINDOW, ~seed);
                b.process().write(rb, remoteRef);
                // the window starts 16 KiB below a 2 MiB boundary, so its page offset is 0: the zero-based-like iova
                // keeps the offset in the huge page instead, which 2 MiB MR pages need
                remote = b.register(rb, WINDOW, PD_B, MR_ALL, zeroBased ? rb & (HUGE - 1) : rb);
                assertThat(remote.registered().pageSizeBytes()).isEqualTo(HUGE);
            }
            else
            {
                b = Side.create(ThpMode.NEVER, CAP_4K_2M);
                remoteRef = pattern(SMALL_REMOTE_LEN, ~seed);
                final long rb = b.mmapScattered(SMALL_REMOTE_LEN);
                b.process().write(rb, remoteRef);
                remote = b.register(rb, SMALL_REMOTE_LEN, PD_B, MR_ALL, zeroBased ? rb & 0xfff : rb);
                assertThat(remote.registered().pageSizeBytes()).isEqualTo(PAGE);
            }
        }

        void assertMatchesReference()
        {
            assertThat(Arrays.mismatch(local.bytes(), localRef)).as("first local byte off").isEqualTo(-1);
            assertThat(Arrays.mismatch(remote.bytes(), remoteRef)).as("first remote byte off")
                .isEqualTo(-1);
        }
    }

    /**
     * @param mr     an MR.
     * @param offset first byte of the range.
     * @param length bytes in the range.
     * @param cuts   split points, taken modulo {@code length + 1}; equal points make empty SGEs.
     * @return SGEs covering the range in order.
     */
    private static List<Segment> split(final Mr mr, final int offset, final int length, final List<Integer> cuts)
    {
        final List<Integer> points = new ArrayList<>();
        for (final int c : cuts)
        {
            points.add(c % (length + 1));
        }
        points.add(0);
        points.add(length);
        points.sort(null);
        final List<Segment> sgl = new ArrayList<>();
        for (int i = 1; i < points.size(); i++)
        {
            sgl.add(mr.sge(offset + points.get(i - 1), points.get(i) - points.get(i - 1)));
        }
        return sgl;
    }

    @Property(tries = 250, seed = "20261130")
    void aWriteOfAnySglSplitStoresExactlyTheReferenceCopyAtTheRemoteOffset(
        @ForAll @IntRange(max = 4095) final int localPageOffset,
        @ForAll final boolean hugeRemote,
        @ForAll final boolean zeroBased,
        @ForAll @IntRange(max = LOCAL_LEN) final int srcOffset,
        @ForAll @IntRange(max = MAX_MESSAGE) final int wantedLength,
        @ForAll @Size(max = 6) final List<@IntRange(max = MAX_MESSAGE) Integer> cuts,
        @ForAll @IntRange(max = SMALL_REMOTE_LEN) final int wantedRemoteOffset)
    {
        final World w = new World(localPageOffset, hugeRemote, zeroBased, srcOffset * 31L + wantedLength);
        final int length = Math.min(wantedLength, LOCAL_LEN - srcOffset);
        final int remoteOffset = Math.min(wantedRemoteOffset % (w.remoteRef.length + 1), w.remoteRef.length - length);

        final DmaResult r = w.engine.write(w.a.port(), PD_A, split(w.local, srcOffset, length, cuts), w.b.port(),
            PD_B, QP_ALL, w.remote.at(remoteOffset), w.remote.key());

        assertThat(r).isEqualTo(DmaResult.success(length, 0));
        System.arraycopy(w.localRef, srcOffset, w.remoteRef, remoteOffset, length);
        w.assertMatchesReference();
        assertThat(w.engine.bytesMoved()).isEqualTo(length);
    }

    @Property(tries = 250, seed = "20261131")
    void aReadIntoAnySglSplitStoresExactlyTheReferenceCopyAtTheLocalOffset(
        @ForAll @IntRange(max = 4095) final int localPageOffset,
        @ForAll final boolean hugeRemote,
        @ForAll final boolean zeroBased,
        @ForAll @IntRange(max = LOCAL_LEN) final int dstOffset,
        @ForAll @IntRange(max = MAX_MESSAGE) final int wantedLength,
        @ForAll @Size(max = 6) final List<@IntRange(max = MAX_MESSAGE) Integer> cuts,
        @ForAll @IntRange(max = SMALL_REMOTE_LEN) final int wantedRemoteOffset)
    {
        final World w = new World(localPageOffset, hugeRemote, zeroBased, dstOffset * 17L + wantedLength);
        final int length = Math.min(wantedLength, LOCAL_LEN - dstOffset);
        final int remoteOffset = Math.min(wantedRemoteOffset % (w.remoteRef.length + 1), w.remoteRef.length - length);

        final DmaResult r = w.engine.read(w.a.port(), PD_A, split(w.local, dstOffset, length, cuts), w.b.port(),
            PD_B, QP_ALL, w.remote.at(remoteOffset), w.remote.key());

        assertThat(r).isEqualTo(DmaResult.success(length, 0));
        System.arraycopy(w.remoteRef, remoteOffset, w.localRef, dstOffset, length);
        w.assertMatchesReference();
    }

    @Property(tries = 250, seed = "20261132")
    void aSendFromAnySglSplitIntoAnyReceiveSplitStoresTheMessageAtTheStartOfTheReceiveRange(
        @ForAll @IntRange(max = 4095) final int localPageOffset,
        @ForAll final boolean hugeRemote,
        @ForAll @IntRange(max = LOCAL_LEN) final int srcOffset,
        @ForAll @IntRange(max = MAX_MESSAGE) final int wantedLength,
        @ForAll @Size(max = 4) final List<@IntRange(max = MAX_MESSAGE) Integer> cuts,
        @ForAll @Size(max = 4) final List<@IntRange(max = MAX_MESSAGE) Integer> recvCuts,
        @ForAll @IntRange(max = 300) final int slack,
        @ForAll @IntRange(max = SMALL_REMOTE_LEN) final int wantedRecvOffset)
    {
        final World w = new World(localPageOffset, hugeRemote, false, srcOffset * 13L + wantedLength);
        final int length = Math.min(wantedLength, LOCAL_LEN - srcOffset);
        final int capacity = Math.min(length + slack, w.remoteRef.length);
        final int recvOffset = Math.min(wantedRecvOffset % (w.remoteRef.length + 1), w.remoteRef.length - capacity);

        final DmaResult r = w.engine.send(w.a.port(), PD_A, split(w.local, srcOffset, length, cuts), w.b.port(),
            PD_B, split(w.remote, recvOffset, capacity, recvCuts));

        assertThat(r).isEqualTo(DmaResult.success(length, 0));
        System.arraycopy(w.localRef, srcOffset, w.remoteRef, recvOffset, length);
        w.assertMatchesReference();
    }
}
