package dev.rnicsim.dma;

import static dev.rnicsim.dma.DmaFixture.CAP_4K_2M;
import static dev.rnicsim.dma.DmaFixture.CAP_ALL;
import static dev.rnicsim.dma.DmaFixture.HUGE;
import static dev.rnicsim.dma.DmaFixture.MIB;
import static dev.rnicsim.dma.DmaFixture.NEVER_ALLOCATED_KEY;
import static dev.rnicsim.dma.DmaFixture.PAGE;
import static dev.rnicsim.dma.DmaFixture.filled;
import static dev.rnicsim.dma.DmaFixture.fromLittleEndian;
import static dev.rnicsim.dma.DmaFixture.littleEndian;
import static dev.rnicsim.dma.DmaFixture.pattern;
import static dev.rnicsim.mtt.AccessFlags.LOCAL_WRITE;
import static dev.rnicsim.mtt.AccessFlags.REMOTE_ATOMIC;
import static dev.rnicsim.mtt.AccessFlags.REMOTE_READ;
import static dev.rnicsim.mtt.AccessFlags.REMOTE_WRITE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.dma.DmaFixture.Mr;
import dev.rnicsim.dma.DmaFixture.Side;
import dev.rnicsim.dma.DmaFixture.Snapshot;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.IndexPolicy;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptState;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.ThpMode;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The DMA engine between two hosts built from the real models (pagetable hosts and processes, mtt adapter tables):
 * bytes land in the other process exactly, checks run in rxe's order, every failure leaves both memories as they
 * were, and the counters move as documented.
 */
class DmaEngineTest
{
    private static final int PD_A = 1;
    private static final int PD_B = 2;
    private static final int MR_ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;
    private static final int QP_ALL = REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;
    private static final int MR_BYTES = (int)(2 * PAGE);

    private final DmaEngine engine = new DmaEngine();
    private final Side a = Side.create(ThpMode.NEVER, CAP_ALL);
    private final Side b = Side.create(ThpMode.NEVER, CAP_ALL);
    /** Requester's buffer, filled with a pattern. */
    private final Mr local = a.register(pattern(MR_BYTES, 1), PD_A, MR_ALL);
    /** Responder's buffer, filled with another pattern. */
    private final Mr remote = b.register(pattern(MR_BYTES, 2), PD_B, MR_ALL);

    private static byte[] concat(final byte[]... parts)
    {
        int n = 0;
        for (final byte[] p : parts)
        {
            n += p.length;
        }
        final byte[] all = new byte[n];
        int at = 0;
        for (final byte[] p : parts)
        {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }

    private static byte[] slice(final byte[] bytes, final int from, final int length)
    {
        return Arrays.copyOfRange(bytes, from, from + length);
    }

    private DmaResult write(final List<Segment> sgl, final long remoteAddr, final int rkey)
    {
        return engine.write(a.port(), PD_A, sgl, b.port(), PD_B, QP_ALL, remoteAddr, rkey);
    }

    private DmaResult read(final List<Segment> sgl, final long remoteAddr, final int rkey)
    {
        return engine.read(a.port(), PD_A, sgl, b.port(), PD_B, QP_ALL, remoteAddr, rkey);
    }

    private DmaResult send(final List<Segment> sgl, final List<Segment> recvSgl)
    {
        return engine.send(a.port(), PD_A, sgl, b.port(), PD_B, recvSgl);
    }

    private DmaResult fetchAndAdd(final Segment result, final long remoteAddr, final int rkey, final long add)
    {
        return engine.atomic(a.port(), PD_A, result, b.port(), PD_B, QP_ALL, remoteAddr, rkey, false, add, 0);
    }

    private DmaResult compareAndSwap(final Segment result, final long remoteAddr, final int rkey,
        final long compare, final long swap)
    {
        return engine.atomic(a.port(), PD_A, result, b.port(), PD_B, QP_ALL, remoteAddr, rkey, true, compare, swap);
    }

    private static void assertLocalFailure(final DmaResult r, final DmaStatus status, final KeyCheck check)
    {
        assertThat(r.requester()).isEqualTo(status);
        assertThat(r.responder()).isEqualTo(DmaStatus.SUCCESS);
        assertThat(r.responderError()).isFalse();
        assertThat(r.keyCheck()).isEqualTo(check);
        assertThat(r.byteLen()).isZero();
        assertThat(r.ok()).isFalse();
    }

    private static void assertRemoteFailure(final DmaResult r, final DmaStatus requester, final DmaStatus responder,
        final KeyCheck check)
    {
        assertThat(r.requester()).isEqualTo(requester);
        assertThat(r.responder()).isEqualTo(responder);
        assertThat(r.responderError()).isTrue();
        assertThat(r.keyCheck()).isEqualTo(check);
        assertThat(r.byteLen()).isZero();
        assertThat(r.ok()).isFalse();
    }

    // ------------------------------------------------------------------------------------------------ successes

    @Nested
    class Success
    {
        @Test
        void writeStoresTheGatheredBytesInTheRemoteProcessAndNothingAround()
        {
            final byte[] before = remote.bytes();
            final byte[] src = local.bytes();

            final DmaResult r = write(List.of(local.sge(100, 3000)), remote.at(500), remote.key());

            assertThat(r).isEqualTo(DmaResult.success(3000, 0));
            assertThat(r.ok()).isTrue();
            assertThat(remote.bytes()).isEqualTo(concat(slice(before, 0, 500), slice(src, 100, 3000),
                slice(before, 3500, MR_BYTES - 3500)));
            assertThat(local.bytes()).isEqualTo(src);
        }

        @Test
        void readStoresTheRemoteBytesInTheLocalSglAndNothingAround()
        {
            final byte[] before = local.bytes();
            final byte[] src = remote.bytes();

            final DmaResult r = read(List.of(local.sge(10, 100), local.sge(4000, 200)), remote.at(4090), remote.key());

            assertThat(r).isEqualTo(DmaResult.success(300, 0));
            assertThat(local.bytes()).isEqualTo(concat(slice(before, 0, 10), slice(src, 4090, 100),
                slice(before, 110, 4000 - 110), slice(src, 4190, 200), slice(before, 4200, MR_BYTES - 4200)));
            assertThat(remote.bytes()).isEqualTo(src);
        }

        @Test
        void sendFillsTheReceiveBuffersInOrder()
        {
            final byte[] before = remote.bytes();
            final byte[] src = local.bytes();

            final DmaResult r = send(List.of(local.sge(0, 50), local.sge(6000, 70)),
                List.of(remote.sge(8000, 30), remote.sge(20, 200)));

            assertThat(r).isEqualTo(DmaResult.success(120, 0));
            final byte[] message = concat(slice(src, 0, 50), slice(src, 6000, 70));
            assertThat(remote.bytes()).isEqualTo(concat(slice(before, 0, 20), slice(message, 30, 90),
                slice(before, 110, 8000 - 110), slice(message, 0, 30), slice(before, 8030, MR_BYTES - 8030)));
        }

        @Test
        void inlineWriteAndInlineSendNeedNoLocalKey()
        {
            final byte[] payload = pattern(64, 7);

            final DmaResult w = engine.writeInline(payload, b.port(), PD_B, QP_ALL, remote.at(4064), remote.key());
            final DmaResult s = engine.sendInline(payload, b.port(), PD_B, List.of(remote.sge(100, 64)));

            assertThat(w).isEqualTo(DmaResult.success(64, 0));
            assertThat(s).isEqualTo(DmaResult.success(64, 0));
            assertThat(remote.bytes(4064, 64)).isEqualTo(payload);
            assertThat(remote.bytes(100, 64)).isEqualTo(payload);
        }

        @Test
        void compareAndSwapThatMatchesStoresTheSwapAndReturnsTheOriginal()
        {
            remote.store(64, littleEndian(42));

            final DmaResult r = compareAndSwap(local.sge(8, 8), remote.at(64), remote.key(), 42, 0x0102030405060708L);

            assertThat(r).isEqualTo(DmaResult.success(8, 42));
            assertThat(remote.bytes(64, 8)).isEqualTo(new byte[] {8, 7, 6, 5, 4, 3, 2, 1});
            assertThat(fromLittleEndian(local.bytes(8, 8))).isEqualTo(42);
        }

        @Test
        void compareAndSwapThatMissesLeavesTheRemoteValueAndReturnsIt()
        {
            remote.store(64, littleEndian(42));

            final DmaResult r = compareAndSwap(local.sge(8, 8), remote.at(64), remote.key(), 41, 7);

            assertThat(r).isEqualTo(DmaResult.success(8, 42));
            assertThat(fromLittleEndian(remote.bytes(64, 8))).isEqualTo(42);
            assertThat(fromLittleEndian(local.bytes(8, 8))).isEqualTo(42);
        }

        @Test
        void fetchAndAddWrapsAroundAtTwoToTheSixtyFour()
        {
            remote.store(4088, littleEndian(-1L));
            remote.store(4096, littleEndian(Long.MAX_VALUE));

            final DmaResult r1 = fetchAndAdd(local.sge(0, 8), remote.at(4088), remote.key(), 2);
            final DmaResult r2 = fetchAndAdd(local.sge(16, 8), remote.at(4096), remote.key(), 1);

            assertThat(r1).isEqualTo(DmaResult.success(8, -1L));
            assertThat(fromLittleEndian(remote.bytes(4088, 8))).isEqualTo(1);
            assertThat(fromLittleEndian(local.bytes(0, 8))).isEqualTo(-1L);
            assertThat(r2.atomicOriginal()).isEqualTo(Long.MAX_VALUE);
            assertThat(fromLittleEndian(remote.bytes(4096, 8))).isEqualTo(Long.MIN_VALUE);
            assertThat(engine.atomics()).isEqualTo(2);
        }

        @Test
        void writeIntoAZeroBasedLikeMrUsesOffsetsFromThePageOffset()
        {
            final long va = b.mmapScattered(3 * PAGE) + 0x234;
            b.process().write(va, filled((int)(2 * PAGE), 0x11));
            final Mr zeroBased = b.register(va, 2 * PAGE, PD_B, MR_ALL, va & 0xfff);
            final byte[] src = local.bytes(0, 5000);

            final DmaResult r = write(List.of(local.sge(0, 5000)), 0x234 + 100, zeroBased.key());

            assertThat(zeroBased.iova()).isEqualTo(0x234);
            assertThat(r.ok()).isTrue();
            assertThat(zeroBased.bytes()).isEqualTo(concat(filled(100, 0x11), src,
                filled((int)(2 * PAGE) - 5100, 0x11)));
        }
    }

    // --------------------------------------------------------------------------------------------- check order

    @Nested
    class CheckOrder
    {
        @Test
        void writeReportsTheLocalSgeBeforeABadRkey()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult r = write(List.of(local.sge(0, 10), new Segment(local.at(0), 10, NEVER_ALLOCATED_KEY)),
                remote.at(0), NEVER_ALLOCATED_KEY);

            assertLocalFailure(r, DmaStatus.LOC_PROT_ERR, KeyCheck.NO_SUCH_INDEX);
            assertThat(r.detail()).contains("sge[1]");
            snapshot.assertUnchanged();
        }

        @Test
        void writeReportsTheLocalSgeBeforeMissingQpRights()
        {
            final DmaResult r = engine.write(a.port(), PD_A, List.of(local.sge(0, MR_BYTES + 1)), b.port(), PD_B, 0,
                remote.at(0), remote.key());

            assertLocalFailure(r, DmaStatus.LOC_PROT_ERR, KeyCheck.OUT_OF_RANGE);
        }

        @Test
        void sendReportsTheLocalSgeBeforeABadOrTooSmallReceiveBuffer()
        {
            final Snapshot snapshot = new Snapshot(local, remote);
            final List<Segment> badSgl = List.of(local.sge(0, 10), local.sge(MR_BYTES - 5, 10));

            final DmaResult badReceive = send(badSgl, List.of(new Segment(0, 10, NEVER_ALLOCATED_KEY)));
            final DmaResult tooSmall = send(badSgl, List.of(remote.sge(0, 5)));

            assertLocalFailure(badReceive, DmaStatus.LOC_PROT_ERR, KeyCheck.OUT_OF_RANGE);
            assertLocalFailure(tooSmall, DmaStatus.LOC_PROT_ERR, KeyCheck.OUT_OF_RANGE);
            assertThat(tooSmall.detail()).contains("sge[1]");
            snapshot.assertUnchanged();
        }

        @Test
        void readReportsTheRemoteKeyBeforeABadLocalSge()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult r = read(List.of(new Segment(local.at(0), 10, NEVER_ALLOCATED_KEY)), remote.at(0),
                NEVER_ALLOCATED_KEY);

            assertRemoteFailure(r, DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, KeyCheck.NO_SUCH_INDEX);
            assertThat(r.detail()).contains("rkey");
            snapshot.assertUnchanged();
        }

        @Test
        void readReportsABadLocalSgeOnlyAfterTheRemoteKeyPassed()
        {
            final Mr readOnly = a.register(pattern(MR_BYTES, 9), PD_A, REMOTE_READ);
            final Snapshot snapshot = new Snapshot(local, remote, readOnly);

            final DmaResult r = read(List.of(local.sge(0, 10), readOnly.sge(0, 10)), remote.at(0), remote.key());

            assertLocalFailure(r, DmaStatus.LOC_PROT_ERR, KeyCheck.RIGHTS_MISSING);
            assertThat(r.detail()).contains("sge[1]");
            snapshot.assertUnchanged();
        }

        @Test
        void readChecksTheMessageLengthBeforeAnyKey()
        {
            final long before = engine.translations();

            final DmaResult r = read(List.of(new Segment(0, 1L << 30, NEVER_ALLOCATED_KEY),
                new Segment(0, (1L << 30) + 1, NEVER_ALLOCATED_KEY)), 0, NEVER_ALLOCATED_KEY);

            assertLocalFailure(r, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID);
            assertThat(engine.translations()).isEqualTo(before);
        }
    }

    // --------------------------------------------------------------------------------------------- key checks

    @Nested
    class KeyChecks
    {
        private void assertWriteRefused(final DmaResult r, final KeyCheck check, final Snapshot snapshot)
        {
            assertRemoteFailure(r, DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, check);
            snapshot.assertUnchanged();
        }

        @Test
        void aKeyWhoseIndexWasNeverAllocatedIsNoSuchIndex()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            assertWriteRefused(write(List.of(local.sge(0, 8)), remote.at(0), NEVER_ALLOCATED_KEY),
                KeyCheck.NO_SUCH_INDEX, snapshot);
        }

        @Test
        void aDeregisteredKeyIsNoSuchIndexWhileItsIndexIsFree()
        {
            final Mr victim = b.register(pattern(MR_BYTES, 3), PD_B, MR_ALL);
            b.tables().deregister(victim.key());
            final Snapshot snapshot = new Snapshot(local, remote, victim);

            assertWriteRefused(write(List.of(local.sge(0, 8)), victim.at(0), victim.key()), KeyCheck.NO_SUCH_INDEX,
                snapshot);
        }

        @Test
        void aStaleKeyOfAReusedIndexIsVariantMismatchUnderGeneration()
        {
            final Side lowest = Side.create(ThpMode.NEVER, CAP_ALL, IndexPolicy.LOWEST_FREE);
            final Mr first = lowest.register(pattern(MR_BYTES, 4), PD_B, MR_ALL);
            lowest.tables().deregister(first.key());
            final Mr second = lowest.reregister(first);
            final Snapshot snapshot = new Snapshot(local, second);

            final DmaResult stale = engine.write(a.port(), PD_A, List.of(local.sge(0, 8)), lowest.port(), PD_B,
                QP_ALL, first.at(0), first.key());

            assertThat(MKey.index(second.key(), 8)).isEqualTo(MKey.index(first.key(), 8));
            assertThat(MKey.variant(second.key(), 8)).isEqualTo(MKey.variant(first.key(), 8) + 1);
            assertRemoteFailure(stale, DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, KeyCheck.VARIANT_MISMATCH);
            snapshot.assertUnchanged();
            assertThat(engine.write(a.port(), PD_A, List.of(local.sge(0, 8)), lowest.port(), PD_B, QP_ALL,
                second.at(0), second.key()).ok()).isTrue();
        }

        @Test
        void aKeyOfAnotherPdIsWrongPd()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult r = engine.write(a.port(), PD_A, List.of(local.sge(0, 8)), b.port(), PD_A, QP_ALL,
                remote.at(0), remote.key());

            assertWriteRefused(r, KeyCheck.WRONG_PD, snapshot);
        }

        @Test
        void aKeyWithoutRemoteWriteIsRightsMissing()
        {
            final Mr readable = b.register(pattern(MR_BYTES, 5), PD_B, LOCAL_WRITE | REMOTE_READ);
            final Snapshot snapshot = new Snapshot(local, remote, readable);

            assertWriteRefused(write(List.of(local.sge(0, 8)), readable.at(0), readable.key()),
                KeyCheck.RIGHTS_MISSING, snapshot);
            assertThat(read(List.of(local.sge(0, 8)), readable.at(0), readable.key()).ok()).isTrue();
        }

        @Test
        void anInvalidatedKeyIsWrongState()
        {
            b.tables().mpt().setState(remote.key(), MptState.INVALID);
            final Snapshot snapshot = new Snapshot(local, remote);

            assertWriteRefused(write(List.of(local.sge(0, 8)), remote.at(0), remote.key()), KeyCheck.WRONG_STATE,
                snapshot);
        }

        @Test
        void aRemoteRangeOneBytePastTheEndIsOutOfRange()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            assertWriteRefused(write(List.of(local.sge(0, 101)), remote.at(MR_BYTES - 100), remote.key()),
                KeyCheck.OUT_OF_RANGE, snapshot);
            assertWriteRefused(write(List.of(local.sge(0, 8)), remote.at(-1), remote.key()), KeyCheck.OUT_OF_RANGE,
                snapshot);
            assertThat(write(List.of(local.sge(0, 100)), remote.at(MR_BYTES - 100), remote.key()).ok()).isTrue();
        }

        @Test
        void aLocalRangeOneBytePastTheEndIsOutOfRange()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult r = write(List.of(local.sge(MR_BYTES - 100, 101)), remote.at(0), remote.key());

            assertLocalFailure(r, DmaStatus.LOC_PROT_ERR, KeyCheck.OUT_OF_RANGE);
            snapshot.assertUnchanged();
            assertThat(write(List.of(local.sge(MR_BYTES - 100, 100)), remote.at(0), remote.key()).ok()).isTrue();
        }

        @Test
        void aLocalKeyOfAnotherPdIsWrongPd()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult r = engine.write(a.port(), PD_B, List.of(local.sge(0, 8)), b.port(), PD_B, QP_ALL,
                remote.at(0), remote.key());

            assertLocalFailure(r, DmaStatus.LOC_PROT_ERR, KeyCheck.WRONG_PD);
            snapshot.assertUnchanged();
        }

        @Test
        void aZeroLengthWriteOrReadChecksNoRkey()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult w = write(List.of(), 0xdead_beefL, NEVER_ALLOCATED_KEY);
            final DmaResult w0 = write(List.of(new Segment(0, 0, NEVER_ALLOCATED_KEY)), 0, NEVER_ALLOCATED_KEY);
            final DmaResult r = read(List.of(), 0, NEVER_ALLOCATED_KEY);

            assertThat(List.of(w, w0, r)).containsOnly(DmaResult.success(0, 0));
            assertThat(engine.translations()).isZero();
            assertThat(engine.keyCheckFailures()).isZero();
            snapshot.assertUnchanged();
        }

        @Test
        void aZeroLengthWriteStillNeedsTheQpRight()
        {
            final DmaResult r = engine.write(a.port(), PD_A, List.of(), b.port(), PD_B, REMOTE_READ, 0,
                NEVER_ALLOCATED_KEY);

            assertRemoteFailure(r, DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID);
        }
    }

    // --------------------------------------------------------------------------------------------- QP rights

    @Nested
    class QpRights
    {
        @Test
        void eachOperationNeedsItsRightInTheResponderQpAccessFlags()
        {
            final Snapshot snapshot = new Snapshot(local, remote);
            final int allButWrite = REMOTE_READ | REMOTE_ATOMIC;
            final int allButRead = REMOTE_WRITE | REMOTE_ATOMIC;
            final int allButAtomic = REMOTE_WRITE | REMOTE_READ;

            final DmaResult w = engine.write(a.port(), PD_A, List.of(local.sge(0, 8)), b.port(), PD_B, allButWrite,
                remote.at(0), remote.key());
            final DmaResult wi = engine.writeInline(new byte[8], b.port(), PD_B, allButWrite, remote.at(0),
                remote.key());
            final DmaResult r = engine.read(a.port(), PD_A, List.of(local.sge(0, 8)), b.port(), PD_B, allButRead,
                remote.at(0), remote.key());
            final DmaResult at = engine.atomic(a.port(), PD_A, local.sge(0, 8), b.port(), PD_B, allButAtomic,
                remote.at(0), remote.key(), false, 1, 0);

            for (final DmaResult result : List.of(w, wi, r, at))
            {
                assertRemoteFailure(result, DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID);
                assertThat(result.detail()).contains("qp_access_flags");
            }
            // only the local SGEs of the WRITE and the atomic were translated: READ checks the responder first
            assertThat(engine.translations()).isEqualTo(2);
            assertThat(engine.atomics()).isZero();
            snapshot.assertUnchanged();
        }
    }

    // --------------------------------------------------------------------------------------------- atomics

    @Nested
    class Atomics
    {
        @Test
        void aMisalignedAtomicIsAnInvalidRequestOnceTheRkeyPasses()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult faa = fetchAndAdd(local.sge(0, 8), remote.at(4), remote.key(), 1);
            final DmaResult cas = compareAndSwap(local.sge(0, 8), remote.at(12), remote.key(), 0, 1);

            assertRemoteFailure(faa, DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID);
            assertRemoteFailure(cas, DmaStatus.REM_INV_REQ_ERR, DmaStatus.REM_INV_REQ_ERR, KeyCheck.VALID);
            assertThat(faa.detail()).contains("aligned");
            assertThat(engine.atomics()).isZero();
            assertThat(engine.bytesMoved()).isZero();
            snapshot.assertUnchanged();
        }

        @Test
        void aMisalignedAtomicWithABadRkeyIsARemoteAccessError()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult r = fetchAndAdd(local.sge(0, 8), remote.at(4), NEVER_ALLOCATED_KEY, 1);
            final DmaResult outOfRange = fetchAndAdd(local.sge(0, 8), remote.at(MR_BYTES - 4), remote.key(), 1);

            assertRemoteFailure(r, DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, KeyCheck.NO_SUCH_INDEX);
            assertRemoteFailure(outOfRange, DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR,
                KeyCheck.OUT_OF_RANGE);
            snapshot.assertUnchanged();
        }

        @Test
        void anAtomicWithoutRemoteAtomicRightOnTheMrIsRightsMissing()
        {
            final Mr noAtomic = b.register(pattern(MR_BYTES, 6), PD_B, LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ);
            final Snapshot snapshot = new Snapshot(local, noAtomic);

            final DmaResult r = fetchAndAdd(local.sge(0, 8), noAtomic.at(0), noAtomic.key(), 1);

            assertRemoteFailure(r, DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, KeyCheck.RIGHTS_MISSING);
            snapshot.assertUnchanged();
        }

        @Test
        void theResultSgeMustBeEightBytesAndLocallyWritable()
        {
            final Mr readOnly = a.register(pattern(MR_BYTES, 8), PD_A, REMOTE_READ);
            final Snapshot snapshot = new Snapshot(local, remote, readOnly);

            final DmaResult shortSge = fetchAndAdd(local.sge(0, 4), remote.at(0), NEVER_ALLOCATED_KEY, 1);
            final DmaResult notWritable = fetchAndAdd(readOnly.sge(0, 8), remote.at(0), NEVER_ALLOCATED_KEY, 1);

            assertLocalFailure(shortSge, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID);
            assertLocalFailure(notWritable, DmaStatus.LOC_PROT_ERR, KeyCheck.RIGHTS_MISSING);
            snapshot.assertUnchanged();
        }
    }

    // --------------------------------------------------------------------------------------------- receives

    @Nested
    class Receives
    {
        @Test
        void aReceiveTooSmallIsAnInvalidRequestForTheRequesterAndALengthErrorForTheResponder()
        {
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult r = send(List.of(local.sge(0, 100), local.sge(200, 1)),
                List.of(remote.sge(0, 60), remote.sge(1000, 40)));

            assertRemoteFailure(r, DmaStatus.REM_INV_REQ_ERR, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID);
            assertThat(r.detail()).contains("101").contains("100");
            snapshot.assertUnchanged();
            assertThat(send(List.of(local.sge(0, 100)), List.of(remote.sge(0, 60), remote.sge(1000, 40))).ok())
                .isTrue();
        }

        @Test
        void aBadReceiveLkeyIsARemoteOperationalErrorAndALocalProtectionErrorForTheResponder()
        {
            final Mr readOnly = b.register(pattern(MR_BYTES, 10), PD_B, REMOTE_READ);
            final Snapshot snapshot = new Snapshot(local, remote, readOnly);

            final DmaResult noKey = send(List.of(local.sge(0, 10)), List.of(new Segment(0, 10, NEVER_ALLOCATED_KEY)));
            final DmaResult rights = send(List.of(local.sge(0, 10)), List.of(remote.sge(0, 4), readOnly.sge(0, 10)));
            final DmaResult range = send(List.of(local.sge(0, 10)), List.of(remote.sge(MR_BYTES - 9, 10)));

            assertRemoteFailure(noKey, DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, KeyCheck.NO_SUCH_INDEX);
            assertRemoteFailure(rights, DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, KeyCheck.RIGHTS_MISSING);
            assertThat(rights.detail()).contains("receive sge[1]");
            assertRemoteFailure(range, DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, KeyCheck.OUT_OF_RANGE);
            snapshot.assertUnchanged();
        }

        @Test
        void aBadReceiveLkeyWinsOverAReceiveTooSmall()
        {
            final DmaResult r = send(List.of(local.sge(0, 100)), List.of(new Segment(0, 10, NEVER_ALLOCATED_KEY)));

            assertRemoteFailure(r, DmaStatus.REM_OP_ERR, DmaStatus.LOC_PROT_ERR, KeyCheck.NO_SUCH_INDEX);
        }
    }

    // --------------------------------------------------------------------------------------------- message length

    @Nested
    class MessageLength
    {
        /** A 2 GiB MR of fabricated DMA runs: its keys pass for any range, and nothing is ever copied from it. */
        private int hugeKey(final AdapterTables tables, final int pd)
        {
            final long va = 0x7f00_0000_0000L;
            final RegisteredMr mr = tables.register(pd, List.of(new DmaRun(1L << 32, 1L << 31)), va, 1L << 31, va,
                MR_ALL);
            return mr.key();
        }

        @Test
        void aWriteOfMoreThanTwoToTheThirtyOneBytesIsALocalLengthErrorAfterTheKeysPass()
        {
            final int key = hugeKey(a.tables(), PD_A);
            final long va = 0x7f00_0000_0000L;
            final Snapshot snapshot = new Snapshot(local, remote);

            final DmaResult tooLong = write(List.of(new Segment(va, 1L << 31, key), new Segment(va, 1, key)),
                remote.at(0), remote.key());
            final DmaResult exact = write(List.of(new Segment(va, (1L << 31) - 1, key), new Segment(va, 1, key)),
                remote.at(0), NEVER_ALLOCATED_KEY);

            assertLocalFailure(tooLong, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID);
            assertThat(tooLong.detail()).contains("max_msg_sz");
            assertRemoteFailure(exact, DmaStatus.REM_ACCESS_ERR, DmaStatus.REM_ACCESS_ERR, KeyCheck.NO_SUCH_INDEX);
            assertThat(engine.bytesMoved()).isZero();
            snapshot.assertUnchanged();
        }

        @Test
        void aSendOfMoreThanTwoToTheThirtyOneBytesIsALocalLengthError()
        {
            final int key = hugeKey(a.tables(), PD_A);
            final long va = 0x7f00_0000_0000L;

            final DmaResult r = send(List.of(new Segment(va, 1L << 31, key), new Segment(va, 1, key)),
                List.of(new Segment(0, 10, NEVER_ALLOCATED_KEY)));

            assertLocalFailure(r, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID);
        }

        @Test
        void aReadOfMoreThanTwoToTheThirtyOneBytesIsALocalLengthErrorEvenWithValidKeys()
        {
            final int key = hugeKey(a.tables(), PD_A);
            final int rkey = hugeKey(b.tables(), PD_B);
            final long va = 0x7f00_0000_0000L;

            final DmaResult r = read(List.of(new Segment(va, 1L << 30, key), new Segment(va, (1L << 30) + 1, key)),
                va, rkey);

            assertLocalFailure(r, DmaStatus.LOC_LEN_ERR, KeyCheck.VALID);
            assertThat(engine.translations()).isZero();
        }
    }

    // --------------------------------------------------------------------------------------------- page sizes

    @Nested
    class PageSizes
    {
        private final Side small = Side.create(ThpMode.NEVER, CAP_4K_2M);
        private final Side huge = Side.create(ThpMode.ALWAYS, CAP_4K_2M);
        private final Mr smallMr = small.register(pattern((int)(4 * PAGE), 11), PD_A, MR_ALL);
        private final Mr hugeMr = registerHuge(huge, 12);

        private Mr registerHuge(final Side side, final long seed)
        {
            final long va = side.mmapScatteredHuge();
            side.process().write(va, pattern((int)(2 * HUGE), seed));
            return side.register(va, 2 * HUGE, PD_B, MR_ALL, va);
        }

        private DmaResult writeSmallToHuge(final List<Segment> sgl, final long remoteAddr)
        {
            return engine.write(small.port(), PD_A, sgl, huge.port(), PD_B, QP_ALL, remoteAddr, hugeMr.key());
        }

        @Test
        void theMrsHaveFourKibAndTwoMibPages()
        {
            assertThat(smallMr.registered().pageSizeBytes()).isEqualTo(PAGE);
            assertThat(hugeMr.registered().pageSizeBytes()).isEqualTo(HUGE);
            assertThat(huge.process().mappedPageSize(hugeMr.va())).isEqualTo(dev.rnicsim.pagetable.PageSize.SIZE_2M);
        }

        @Test
        void aGatherAcrossFourKibPagesLandsAcrossATwoMibBoundary()
        {
            final byte[] src = smallMr.bytes();
            final byte[] before = hugeMr.bytes(HUGE - 10_000, 20_000);
            final List<Segment> sgl = List.of(smallMr.sge(PAGE - 100, 300), smallMr.sge(2 * PAGE - 1, 2),
                smallMr.sge(3 * PAGE - 4000, 5000));
            final long at = hugeMr.at(HUGE - 2000);

            final DmaResult r = writeSmallToHuge(sgl, at);

            assertThat(r.ok()).isTrue();
            assertThat(r.byteLen()).isEqualTo(5302);
            final byte[] message = concat(slice(src, (int)PAGE - 100, 300), slice(src, (int)(2 * PAGE) - 1, 2),
                slice(src, (int)(3 * PAGE) - 4000, 5000));
            assertThat(hugeMr.bytes(HUGE - 10_000, 20_000)).isEqualTo(concat(slice(before, 0, 8000), message,
                slice(before, 8000 + 5302, 20_000 - 8000 - 5302)));
            // checks: 3 lkeys + 1 rkey, which also give each range's first page; copy: each SGE crosses into a second
            // 4 KiB page (3), the remote range into a second 2 MiB page (1)
            assertThat(engine.translations()).isEqualTo(4 + 3 + 1);
        }

        @Test
        void aCopyInsideOneTwoMibPageTranslatesItOnceButEachFourKibPage()
        {
            final byte[] src = smallMr.bytes(0, (int)(3 * PAGE));

            final DmaResult r = writeSmallToHuge(List.of(smallMr.sge(0, 3 * PAGE)), hugeMr.at(PAGE / 2));

            assertThat(r.ok()).isTrue();
            assertThat(hugeMr.bytes(PAGE / 2, (int)(3 * PAGE))).isEqualTo(src);
            // checks: 1 lkey + 1 rkey (their first pages); copy: two more 4 KiB pages locally, none remotely
            assertThat(engine.translations()).isEqualTo(2 + 2 + 0);
        }

        @Test
        void aReadAcrossATwoMibBoundaryScattersAcrossFourKibPages()
        {
            final byte[] src = hugeMr.bytes(HUGE - 3000, 6000);
            final byte[] before = smallMr.bytes();

            final DmaResult r = engine.read(small.port(), PD_A, List.of(smallMr.sge(PAGE - 1000, 2500),
                smallMr.sge(3 * PAGE - 500, 3500)), huge.port(), PD_B, QP_ALL, hugeMr.at(HUGE - 3000), hugeMr.key());

            assertThat(r.ok()).isTrue();
            final byte[] expected = before.clone();
            System.arraycopy(src, 0, expected, (int)PAGE - 1000, 2500);
            System.arraycopy(src, 2500, expected, (int)(3 * PAGE) - 500, 3500);
            assertThat(smallMr.bytes()).isEqualTo(expected);
        }

        @Test
        void aMadvisedHugepageBufferWithAZeroBasedLikeIovaKeepsTwoMibPages()
        {
            final Side side = Side.create(ThpMode.MADVISE, CAP_4K_2M);
            final long va = side.process().mmapAnonymous(4 * MIB);
            side.process().madvise(va, 4 * MIB, Madvice.HUGEPAGE);
            side.process().touch(va, 4 * MIB, true);
            final Mr mr = side.register(va, 4 * MIB, PD_B, MR_ALL, va & 0xfff);
            final byte[] src = smallMr.bytes();

            final DmaResult r = engine.write(small.port(), PD_A, List.of(smallMr.sge(0, 4 * PAGE)), side.port(),
                PD_B, QP_ALL, HUGE - 2 * PAGE, mr.key());

            assertThat(mr.iova()).isZero();
            assertThat(mr.registered().pageSizeBytes()).isEqualTo(HUGE);
            assertThat(r.ok()).isTrue();
            assertThat(mr.bytes(HUGE - 2 * PAGE, (int)(4 * PAGE))).isEqualTo(src);
            assertThat(mr.bytes(HUGE - 2 * PAGE - 1, 1)).isEqualTo(new byte[1]);
            assertThat(mr.bytes(HUGE + 2 * PAGE, 1)).isEqualTo(new byte[1]);
        }
    }

    // --------------------------------------------------------------------------------------------- counters

    @Nested
    class Counters
    {
        @Test
        void aSuccessfulWriteCountsOneOperationItsBytesAndTwoTranslations()
        {
            write(List.of(local.sge(0, 100)), remote.at(0), remote.key());

            assertThat(engine.operations()).isEqualTo(1);
            assertThat(engine.bytesMoved()).isEqualTo(100);
            // the lkey check and the rkey check, which also give the copy its first page on each side
            assertThat(engine.translations()).isEqualTo(2);
            assertThat(engine.keyCheckFailures()).isZero();
            assertThat(engine.atomics()).isZero();
        }

        @Test
        void aFailedOperationCountsTheOperationAndTheFailedCheckButNoBytes()
        {
            write(List.of(local.sge(0, 100)), remote.at(0), NEVER_ALLOCATED_KEY);
            read(List.of(new Segment(0, 8, NEVER_ALLOCATED_KEY)), remote.at(0), remote.key());

            assertThat(engine.operations()).isEqualTo(2);
            assertThat(engine.bytesMoved()).isZero();
            assertThat(engine.translations()).isEqualTo(4);
            assertThat(engine.keyCheckFailures()).isEqualTo(2);
        }

        @Test
        void aRepeatedTransferHitsTheTranslationCache()
        {
            write(List.of(local.sge(0, 100)), remote.at(0), remote.key());
            final long localMisses = a.tables().cache().misses();
            final long remoteMisses = b.tables().cache().misses();
            final long localHits = a.tables().cache().hits();

            write(List.of(local.sge(0, 100)), remote.at(0), remote.key());

            assertThat(a.tables().cache().misses()).isEqualTo(localMisses);
            assertThat(b.tables().cache().misses()).isEqualTo(remoteMisses);
            // the one translation on the requester reads the MPT entry and the MTT entry
            assertThat(a.tables().cache().hits()).isEqualTo(localHits + 2);
        }

        @Test
        void anAtomicCountsEightBytesMovedAndOneAtomic()
        {
            fetchAndAdd(local.sge(0, 8), remote.at(0), remote.key(), 1);

            assertThat(engine.operations()).isEqualTo(1);
            assertThat(engine.atomics()).isEqualTo(1);
            assertThat(engine.bytesMoved()).isEqualTo(8);
            assertThat(engine.translations()).isEqualTo(2);
        }

        @Test
        void inlineOperationsCountTheirPayload()
        {
            engine.writeInline(new byte[40], b.port(), PD_B, QP_ALL, remote.at(0), remote.key());
            engine.sendInline(new byte[2], b.port(), PD_B, List.of(remote.sge(0, 2)));

            assertThat(engine.operations()).isEqualTo(2);
            assertThat(engine.bytesMoved()).isEqualTo(42);
        }

        @Test
        void aSendCountsTranslationsOnlyForTheReceivePagesItWrites()
        {
            send(List.of(local.sge(0, 100)), List.of(remote.sge(0, 100), remote.sge(PAGE, 100)));
            send(List.of(local.sge(0, 100)), List.of(remote.sge(PAGE - 100, 200)));

            // each SEND: its lkey and receive checks, which give the first pages; no copy reaches a further page
            assertThat(engine.translations()).isEqualTo(3 + 2);
        }
    }

    // --------------------------------------------------------------------------------------------- zero frames

    @Nested
    class NeverWrittenFrames
    {
        @Test
        void writingFromPinnedButNeverWrittenMemoryStoresZeros()
        {
            final long va = a.process().mmapAnonymous(2 * PAGE);
            final Mr untouched = a.register(va, 2 * PAGE, PD_A, MR_ALL, va);
            remote.store(0, filled(MR_BYTES, 0xa5));

            final DmaResult r = write(List.of(untouched.sge(100, 6000)), remote.at(50), remote.key());

            assertThat(r.ok()).isTrue();
            assertThat(remote.bytes()).isEqualTo(concat(filled(50, 0xa5), new byte[6000],
                filled(MR_BYTES - 6050, 0xa5)));
        }

        @Test
        void readingFromALongTermReadPinOfUntouchedMemoryReadsFreshZeroedPagesNotTheSharedZeroPage()
        {
            final long va = b.process().mmapAnonymous(2 * PAGE);
            final Mr zeroPage = b.register(va, 2 * PAGE, PD_B, REMOTE_READ, va, false);
            local.store(0, filled(MR_BYTES, 0x77));

            final DmaResult r = read(List.of(local.sge(10, 5000)), zeroPage.at(100), zeroPage.key());

            // gup_must_unshare: a long-term pin never holds the shared zero page on a modern kernel.
            assertThat(zeroPage.runs()).allSatisfy(run ->
                assertThat(run.dmaAddr()).isNotEqualTo(b.host().physicalMemory().zeroPfn() * PAGE));
            assertThat(r.ok()).isTrue();
            assertThat(local.bytes()).isEqualTo(concat(filled(10, 0x77), new byte[5000],
                filled(MR_BYTES - 5010, 0x77)));
        }

        @Test
        void physicalCopyFromANeverWrittenFrameBetweenHostsYieldsZeros()
        {
            final long va = a.process().mmapAnonymous(PAGE);
            a.process().touch(va, PAGE, true);
            final long src = a.process().translate(va);
            final long dst = b.process().translate(remote.va());
            remote.store(0, filled(MR_BYTES, 0x3c));

            PhysicalMemory.copy(a.host().physicalMemory(), src + 10, b.host().physicalMemory(), dst + 20, 100);

            assertThat(remote.bytes(0, 200)).isEqualTo(concat(filled(20, 0x3c), new byte[100], filled(80, 0x3c)));
        }
    }
}
