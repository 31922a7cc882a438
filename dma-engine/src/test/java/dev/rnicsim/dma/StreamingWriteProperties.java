package dev.rnicsim.dma;

import static dev.rnicsim.dma.DmaFixture.CAP_4K_2M;
import static dev.rnicsim.dma.DmaFixture.CAP_ALL;
import static dev.rnicsim.dma.DmaFixture.HUGE;
import static dev.rnicsim.dma.DmaFixture.KIB;
import static dev.rnicsim.dma.DmaFixture.PAGE;
import static dev.rnicsim.dma.DmaFixture.pattern;
import static dev.rnicsim.mtt.AccessFlags.LOCAL_WRITE;
import static dev.rnicsim.mtt.AccessFlags.REMOTE_WRITE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.dma.DmaFixture.Mr;
import dev.rnicsim.dma.DmaFixture.Side;
import dev.rnicsim.pagetable.ThpMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * RDMA WRITEs moved packet by packet whose later packets stream ({@link DmaMessage#streams}: straight to the copy
 * while neither side's key-change count moved since the first packet's checks, no observer) place, count and fail
 * exactly as the general path does ({@link PacketPath#movePacket} with its re-checks, page-fault test and observer
 * calls). Each try runs the same messages on two worlds built alike, one with a {@link DmaObserver} (which sends every
 * packet through the general path) and one without: the bytes of both buffers, the translations, both translation
 * caches' hits and misses and every packet's answer are the same, and the target holds the reference copy. Between
 * and in the middle of messages a try may deregister the target MR and register it again, write the source buffer
 * from the CPU, or hand out and free frames on either host.
 */
class StreamingWriteProperties
{
    private static final int PD_A = 1;
    private static final int PD_B = 2;
    private static final int LOCAL_LEN = (int)(9 * PAGE) + 0x321;
    private static final int WINDOW = (int)(40 * KIB);

    /** What a try does between two packets (or two messages). */
    enum Event
    {
        NOTHING, REREGISTER_TARGET, DEREGISTER_TARGET, STORE_SOURCE, FREE_FRAME_SOURCE_HOST, FREE_FRAME_TARGET_HOST
    }

    /** One side of the comparison: the two hosts, their buffers, and an engine with or without an observer. */
    private static final class World
    {
        final DmaEngine engine = new DmaEngine();
        final Side a = Side.create(ThpMode.NEVER, CAP_ALL);
        final Side b;
        final Mr local;
        Mr remote;
        boolean remoteDeregistered;
        final List<String> answers = new ArrayList<>();

        World(final boolean observed, final boolean hugeRemote, final int localPageOffset, final long seed)
        {
            if (observed)
            {
                engine.observer((port, key, iova, phys, length, write) -> { });
            }
            final long la = a.mmapScattered(LOCAL_LEN + PAGE) + localPageOffset;
            a.process().write(la, pattern(LOCAL_LEN, seed));
            local = a.register(la, LOCAL_LEN, PD_A, LOCAL_WRITE, la);
            final byte[] remoteBytes = pattern(WINDOW, ~seed);
            if (hugeRemote)
            {
                b = Side.create(ThpMode.ALWAYS, CAP_4K_2M);
                final long rb = b.mmapScatteredHuge() + HUGE - WINDOW / 2;
                b.process().write(rb, remoteBytes);
                remote = b.register(rb, WINDOW, PD_B, LOCAL_WRITE | REMOTE_WRITE, rb);
            }
            else
            {
                b = Side.create(ThpMode.NEVER, CAP_4K_2M);
                final long rb = b.mmapScattered(WINDOW);
                b.process().write(rb, remoteBytes);
                remote = b.register(rb, WINDOW, PD_B, LOCAL_WRITE | REMOTE_WRITE, rb);
            }
        }

        void apply(final Event e, final int step)
        {
            switch (e)
            {
                case NOTHING -> { }
                case REREGISTER_TARGET ->
                {
                    final Mr old = remote;
                    remote = b.reregister(old);
                    if (!remoteDeregistered)
                    {
                        b.tables().deregister(old.key());
                    }
                    remoteDeregistered = false;
                }
                case DEREGISTER_TARGET ->
                {
                    if (!remoteDeregistered)
                    {
                        b.tables().deregister(remote.key());
                        remoteDeregistered = true;
                    }
                }
                case STORE_SOURCE -> local.store(step % LOCAL_LEN, new byte[] {(byte)step, (byte)~step});
                case FREE_FRAME_SOURCE_HOST -> churn(a);
                case FREE_FRAME_TARGET_HOST -> churn(b);
            }
        }

        /** A page faulted in, written and unmapped: a frame handed out and freed on that host. */
        private static void churn(final Side side)
        {
            final long va = side.process().mmapAnonymous(PAGE);
            side.process().write(va, new byte[] {1});
            side.process().munmap(va, PAGE);
        }

        long hits()
        {
            return a.tables().cache().hits() + 1_000_000L * b.tables().cache().hits();
        }

        long misses()
        {
            return a.tables().cache().misses() + 1_000_000L * b.tables().cache().misses();
        }
    }

    @Provide
    Arbitrary<List<Event>> events()
    {
        return Arbitraries.of(Event.class).list().ofMaxSize(40);
    }

    @Property(tries = 200, seed = "20261207")
    void streamedPacketsPlaceCountAndFailAsTheGeneralPath(
        @ForAll final boolean hugeRemote,
        @ForAll @IntRange(max = 4095) final int localPageOffset,
        @ForAll @IntRange(min = 1, max = 3) final int messages,
        @ForAll @IntRange(max = LOCAL_LEN) final int srcOffset,
        @ForAll @IntRange(min = 1, max = LOCAL_LEN) final int wantedLength,
        @ForAll @IntRange(max = WINDOW) final int wantedRemoteOffset,
        @ForAll @IntRange(min = 1, max = 6000) final int wantedPacketBytes,
        @ForAll final boolean twoSges,
        @ForAll("events") final List<Event> events,
        @ForAll @Size(max = 40) final List<@IntRange(max = 3) Integer> eventAt)
    {
        final long seed = srcOffset * 31L + wantedLength;
        final World observed = new World(true, hugeRemote, localPageOffset, seed);
        final World streamed = new World(false, hugeRemote, localPageOffset, seed);
        final int length = Math.max(1, Math.min(wantedLength, LOCAL_LEN - srcOffset));
        final int remoteOffset = Math.min(wantedRemoteOffset, WINDOW - length);
        final int packetBytes = pick(wantedPacketBytes);
        int step = 0;
        for (int msg = 0; msg < messages; msg++)
        {
            for (final World w : List.of(observed, streamed))
            {
                final List<Segment> sgl = twoSges && length > 1
                    ? List.of(w.local.sge(srcOffset, length / 2), w.local.sge(srcOffset + length / 2,
                    length - length / 2))
                    : List.of(w.local.sge(srcOffset, length));
                final DmaMessage m = w.engine.openMessage(false, w.a.port(), PD_A, sgl, w.b.port(), PD_B,
                    REMOTE_WRITE, w.remote.at(remoteOffset), w.remote.key());
                w.answers.add(String.valueOf(m.failure()));
                int at = step;
                for (long offset = 0; m.failure() == null && offset < length; offset += packetBytes)
                {
                    final DmaResult r = w.engine.movePacket(m, Math.min(packetBytes, length - offset));
                    w.answers.add(String.valueOf(r));
                    if (r != null)
                    {
                        break;
                    }
                    if (at < events.size() && at < eventAt.size() && eventAt.get(at) == 0)
                    {
                        w.apply(events.get(at), at);
                    }
                    at++;
                }
                if (at < events.size())
                {
                    w.apply(events.get(at), at);
                }
                at++;
                if (w == streamed)
                {
                    step = at;
                }
            }
        }
        assertThat(streamed.answers).isEqualTo(observed.answers);
        assertThat(streamed.remote.bytes()).isEqualTo(observed.remote.bytes());
        assertThat(streamed.local.bytes()).isEqualTo(observed.local.bytes());
        assertThat(streamed.engine.translations()).isEqualTo(observed.engine.translations());
        assertThat(streamed.engine.bytesMoved()).isEqualTo(observed.engine.bytesMoved());
        assertThat(streamed.hits()).isEqualTo(observed.hits());
        assertThat(streamed.misses()).isEqualTo(observed.misses());
    }

    @Property(tries = 100, seed = "20261208")
    void aStreamedWriteStoresTheReferenceCopyAndNothingElse(
        @ForAll final boolean hugeRemote,
        @ForAll @IntRange(max = 4095) final int localPageOffset,
        @ForAll @IntRange(max = LOCAL_LEN - 1) final int srcOffset,
        @ForAll @IntRange(min = 1, max = LOCAL_LEN) final int wantedLength,
        @ForAll @IntRange(max = WINDOW) final int wantedRemoteOffset,
        @ForAll @IntRange(min = 1, max = 6000) final int wantedPacketBytes)
    {
        final long seed = srcOffset * 17L + wantedLength;
        final World w = new World(false, hugeRemote, localPageOffset, seed);
        final byte[] localRef = w.local.bytes();
        final byte[] remoteRef = w.remote.bytes();
        final int length = Math.max(1, Math.min(wantedLength, LOCAL_LEN - srcOffset));
        final int remoteOffset = Math.min(wantedRemoteOffset, WINDOW - length);
        final int packetBytes = pick(wantedPacketBytes);
        for (int msg = 0; msg < 2; msg++)
        {
            final DmaMessage m = w.engine.openMessage(false, w.a.port(), PD_A, List.of(w.local.sge(srcOffset,
                length)), w.b.port(), PD_B, REMOTE_WRITE, w.remote.at(remoteOffset), w.remote.key());
            assertThat(m.failure()).isNull();
            for (long offset = 0; offset < length; offset += packetBytes)
            {
                assertThat(w.engine.movePacket(m, Math.min(packetBytes, length - offset))).isNull();
            }
        }
        System.arraycopy(localRef, srcOffset, remoteRef, remoteOffset, length);
        assertThat(Arrays.mismatch(w.remote.bytes(), remoteRef)).as("first target byte off").isEqualTo(-1);
        assertThat(w.local.bytes()).isEqualTo(localRef);
    }

    /** Packet sizes: the path MTUs most of the time, anything else sometimes. */
    private static int pick(final int wanted)
    {
        return switch (wanted % 4)
        {
            case 0 -> 4096;
            case 1 -> 1024;
            case 2 -> 256;
            default -> wanted;
        };
    }
}
