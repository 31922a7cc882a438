package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.OdpRig.GIB;
import static dev.rnicsim.simnic.OdpRig.MIB;
import static dev.rnicsim.simnic.OdpRig.ODP_RO;
import static dev.rnicsim.simnic.OdpRig.ODP_RW;
import static dev.rnicsim.simnic.OdpRig.PAGE;
import static dev.rnicsim.simnic.OdpRig.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.OdpCaps;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rules of on-demand-paging MRs, one example each: registration (ODP and implicit capabilities, HUGETLB, no
 * pinning), the snapshot of present pages, device page faults on both sides (RNR NAKs on the responder against
 * rnr_retry and min_rnr_timer), the capability check of the faulting operation, MMU-notifier invalidations from
 * munmap, fork, reclaim and compaction, implicit children, ibv_advise_mr's errno and mappings, and deregistration,
 * rereg and memory windows.
 */
class OdpRulesTest
{
    private static final String REG = "ibv_reg_mr";
    private static final String ADVISE = "ibv_advise_mr";

    private static VerbsException verbsFailure(final ThrowingCallable call)
    {
        final Throwable t = catchThrowable(call);
        assertThat(t).as("the verb throws a VerbsException").isInstanceOf(VerbsException.class);
        return (VerbsException)t;
    }

    private static void assertErrno(final VerbsException e, final String verb, final Errno errno)
    {
        assertThat(e.verb()).isEqualTo(verb);
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(errno);
        assertThat(e.errno()).isEqualTo(errno.code());
    }

    /** Every page of [va, va + pages * PAGE) is device-mapped or not as told; mapped ones point at the CPU's frame. */
    private static void assertDeviceMapped(final SimOdpMr mr, final UserProcess p, final long va, final int pages,
        final boolean mapped)
    {
        for (int i = 0; i < pages; i++)
        {
            final long at = va + i * PAGE;
            assertThat(mr.deviceMapped(at)).as("page %d device-mapped", i).isEqualTo(mapped);
            if (mapped)
            {
                assertThat(mr.devicePhysAddr(at)).as("page %d frame", i).isEqualTo(p.translate(at));
            }
            else
            {
                assertThat(mr.devicePhysAddr(at)).isEqualTo(-1);
            }
        }
    }

    /** True when the device holds a writable translation of va. */
    private static boolean deviceWritable(final OdpRig rig, final SimOdpMr mr, final long va)
    {
        return rig.deviceB.tables().firstUnmapped(mr.lkey(), mr.iovaOf(va), 1, true) < 0;
    }

    private static List<TraceEvent> trace(final OdpRig rig, final String name)
    {
        final List<TraceEvent> out = new ArrayList<>();
        rig.fabric.addTraceListener(e ->
        {
            if (e.name().equals(name))
            {
                out.add(e);
            }
        });
        return out;
    }

    // ------------------------------------------------------------------ registration

    @ParameterizedTest
    @ValueSource(strings = {"rxe-legacy", "connectx3", "e810"})
    void onDemandWithoutOdpIsEopnotsupp(final String profile)
    {
        final DeviceProfile p = DeviceProfiles.byName(profile);
        assertThat(p.attributes().odpCaps().supported()).isFalse();
        final OdpRig rig = OdpRig.of(p, 7, 12);
        final long buf = rig.bufferB(4 * PAGE);
        final long failures = rig.counterB(SimCounter.MR_REGISTRATION_FAILURES);
        final int notifiers = rig.processB().intervalNotifierCount();

        assertErrno(verbsFailure(() -> rig.pdB.regMr(buf, 4 * PAGE, ODP_RW)), REG, Errno.EOPNOTSUPP);
        assertErrno(verbsFailure(() -> rig.pdB.regMr(0, -1L, ODP_RW)), REG, Errno.EOPNOTSUPP);

        assertThat(rig.counterB(SimCounter.MR_REGISTRATION_FAILURES)).isEqualTo(failures + 2);
        assertThat(rig.counterB(SimCounter.ODP_MR_LIVE)).isZero();
        assertThat(rig.processB().intervalNotifierCount()).isEqualTo(notifiers);
    }

    @Test
    void implicitRegistrationCoversTheAddressSpaceWithNoChildYet()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long mtt = rig.counterB(SimCounter.MTT_ENTRIES_IN_USE);
        final long pinned = rig.processB().pinnedVmPages();

        final SimOdpMr mr = (SimOdpMr)rig.pdB.regMr(0, -1L, ODP_RW);

        assertThat(mr.isImplicit()).isTrue();
        assertThat(mr.addr()).isZero();
        assertThat(mr.iova()).isZero();
        assertThat(mr.pageShift()).isEqualTo(12);
        assertThat(mr.implicitChildren()).isZero();
        assertThat(rig.deviceB.tables().isImplicit(mr.lkey())).isTrue();
        assertThat(rig.deviceB.odpMemoryRegion(mr.lkey())).isSameAs(mr);
        assertThat(rig.counterB(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mtt);
        assertThat(rig.counterB(SimCounter.ODP_MR_LIVE)).isEqualTo(1);
        assertThat(rig.processB().pinnedVmPages()).isEqualTo(pinned);
        assertThat(((SimOdpMr)rig.pdB.regMr(0, -1L, 0, ODP_RW)).isImplicit()).as("iova 0 given explicitly").isTrue();
    }

    @Test
    void implicitWithANonZeroIovaIsEinval()
    {
        final OdpRig rig = OdpRig.connectx5();

        assertErrno(verbsFailure(() -> rig.pdB.regMr(0, -1L, 0x1000, ODP_RW)), REG, Errno.EINVAL);
        assertErrno(verbsFailure(() -> rig.pdB.regMr(0, -1L, 1L << 40, ODP_RW)), REG, Errno.EINVAL);
        assertThat(rig.counterB(SimCounter.ODP_MR_LIVE)).isZero();
    }

    @Test
    void implicitWithoutTheImplicitCapabilityIsEinval()
    {
        final OdpCaps full = DeviceProfiles.connectx5().attributes().odpCaps();
        final DeviceProfile explicitOnly = KeyRig.with(DeviceProfiles.connectx5(), b -> b.odpCaps(new OdpCaps(
            OdpCaps.SUPPORT, full.rcOdpCaps(), full.ucOdpCaps(), full.udOdpCaps(), full.xrcOdpCaps())));
        final OdpRig rig = OdpRig.of(explicitOnly, 7, 12);
        final long buf = rig.bufferB(PAGE);

        // mlx5 create_user_odp_mr: an implicit MR without IBV_ODP_SUPPORT_IMPLICIT is EINVAL.
        assertErrno(verbsFailure(() -> rig.pdB.regMr(0, -1L, ODP_RW)), REG, Errno.EINVAL);
        assertThat(rig.odpB(buf, PAGE, ODP_RW).isImplicit()).isFalse();
    }

    @Test
    void hugetlbWithoutOnDemandIsEinval()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long huge = rig.ctxB.memory().allocate(2 * MIB, Backing.HUGETLB_2M);
        final long pinned = rig.processB().pinnedVmPages();

        assertErrno(verbsFailure(() -> rig.pdB.regMr(huge, 2 * MIB, EnumSet.of(Access.LOCAL_WRITE,
            Access.HUGETLB))), REG, Errno.EINVAL);
        assertThat(rig.processB().pinnedVmPages()).isEqualTo(pinned);
    }

    @Test
    void hugetlbOdpOnABasePageVmaRegistersButItsFaultsFail()
    {
        // ib_umem_odp_get takes HPAGE_SHIFT for IB_ACCESS_HUGETLB without looking at the VMA; a fault on pages mapped
        // smaller than that fails in ib_umem_odp_map_dma_and_lock, so the remote access fails.
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(2 * MIB);
        final Set<Access> access = EnumSet.copyOf(ODP_RW);
        access.add(Access.HUGETLB);
        final SimOdpMr mr = rig.odpB(buf, 2 * MIB, access);
        assertThat(mr.pageShift()).isEqualTo(21);

        assertThat(rig.write(pattern(64, 1), buf, mr.rkey()).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(mr.deviceMapped(buf)).isFalse();
        assertThat(rig.counterB(SimCounter.ODP_PAGE_FAULT_FAILURES)).isEqualTo(1);
    }

    @Test
    void hugetlbOdpOnAHugetlbVmaMapsWholeHugePages()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long huge = rig.ctxB.memory().allocate(2 * MIB, Backing.HUGETLB_2M);
        final Set<Access> access = EnumSet.copyOf(ODP_RW);
        access.add(Access.HUGETLB);
        final SimOdpMr mr = rig.odpB(huge, 2 * MIB, access);
        assertThat(mr.pageShift()).isEqualTo(21);
        assertThat(mr.entriesMapped()).isZero();

        final byte[] data = pattern(8192, 5);
        assertThat(rig.write(data, huge + MIB, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(rig.processB().read(huge + MIB, 8192)).isEqualTo(data);
        assertThat(mr.entriesMapped()).as("one MTT entry per 2 MiB block").isEqualTo(1);
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(mr.deviceMapped(huge)).isTrue();
        assertThat(mr.devicePhysAddr(huge + MIB + 8)).isEqualTo(rig.processB().translate(huge + MIB + 8));
    }

    @Test
    void anOdpMrPinsNothingAndIsNotChargedToRlimitMemlock()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB().rlimitMemlockBytes(MIB).capIpcLock(false);
        final long buf = rig.bufferB(4 * MIB);
        b.touch(buf, 4 * MIB, true);
        final long pinnedBefore = b.pinnedVmPages();
        final long pinnedBytes = rig.counterB(SimCounter.PINNED_BYTES);

        final SimOdpMr mr = rig.odpB(buf, 4 * MIB, ODP_RW);

        assertThat(mr.entriesMapped()).isEqualTo(4 * MIB / PAGE);
        assertThat(b.pinnedVmPages()).isEqualTo(pinnedBefore);
        assertThat(rig.counterB(SimCounter.PINNED_BYTES)).isEqualTo(pinnedBytes);
        assertThat(b.host().physicalMemory().pinCount(b.translate(buf) >>> 12)).isZero();
        assertErrno(verbsFailure(() -> rig.pdB.regMr(buf, 4 * MIB, EnumSet.of(Access.LOCAL_WRITE))), REG,
            Errno.ENOMEM);
        assertThat(b.pinnedVmPages()).isEqualTo(pinnedBefore);
    }

    @Test
    void registrationMapsOnlyThePagesAlreadyPresent()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(8 * PAGE);
        b.touch(buf, 4 * PAGE, true);
        final long mapped = rig.counterB(SimCounter.ODP_ENTRIES_MAPPED);
        final long faults = b.host().counter(VmEvent.PGFAULT);

        final SimOdpMr mr = rig.odpB(buf, 8 * PAGE, ODP_RW);

        assertThat(mr.entriesMapped()).isEqualTo(4);
        assertThat(rig.counterB(SimCounter.ODP_ENTRIES_MAPPED)).isEqualTo(mapped + 4);
        assertThat(b.host().counter(VmEvent.PGFAULT)).as("registration faults nothing in").isEqualTo(faults);
        assertDeviceMapped(mr, b, buf, 4, true);
        assertDeviceMapped(mr, b, buf + 4 * PAGE, 4, false);
        for (int i = 0; i < 4; i++)
        {
            assertThat(deviceWritable(rig, mr, buf + i * PAGE)).isTrue();
        }
        assertThat(mr.pageFaults()).isZero();
    }

    @Test
    void anOdpMrMayCoverAddressesWithNoVmaYet()
    {
        // ib_umem_odp_get looks at no VMA (but for HUGETLB): what is not mapped faults when it is accessed.
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(4 * PAGE);
        rig.processB().munmap(buf + 2 * PAGE, 2 * PAGE);

        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, ODP_RW);

        assertThat(mr.entriesMapped()).isZero();
        rig.mapFixedB(buf + 2 * PAGE, 2 * PAGE);
        final byte[] data = pattern(32, 3);
        assertThat(rig.write(data, buf + 3 * PAGE, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.processB().read(buf + 3 * PAGE, 32)).isEqualTo(data);
    }

    @Test
    void aPageReadBeforeRegistrationIsMappedReadOnlyAndAWriteFaultsAgain()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(PAGE);
        b.read(buf, 1);
        final long zero = b.translate(buf);
        assertThat(zero >>> 12).isEqualTo(b.host().physicalMemory().zeroPfn());

        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RW);

        assertThat(mr.devicePhysAddr(buf)).isEqualTo(zero);
        assertThat(deviceWritable(rig, mr, buf)).as("the zero page is mapped read-only").isFalse();

        final byte[] data = pattern(64, 9);
        assertThat(rig.write(data, buf, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(b.translate(buf)).isNotEqualTo(zero);
        assertThat(mr.devicePhysAddr(buf)).isEqualTo(b.translate(buf));
        assertThat(deviceWritable(rig, mr, buf)).isTrue();
        assertThat(b.read(buf, 64)).isEqualTo(data);
        final byte[] zeros = new byte[64];
        b.host().physicalMemory().read(zero, zeros, 0, 64);
        assertThat(zeros).as("the zero page stays zero").containsOnly(0);
    }

    @Test
    void aReadOnlyMrMapsEveryPageReadOnly()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(2 * PAGE);
        b.write(buf, pattern(2 * (int)PAGE, 1));

        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RO);

        assertDeviceMapped(mr, b, buf, 2, true);
        assertThat(deviceWritable(rig, mr, buf)).isFalse();
        assertThat(rig.read(buf, 2 * (int)PAGE, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.scratchBytes(2 * (int)PAGE)).isEqualTo(pattern(2 * (int)PAGE, 1));
        assertThat(mr.pageFaults()).isZero();
    }

    // ------------------------------------------------------------------ responder page faults and RNR NAKs

    /** Simulated ns of resolving a device write fault on one untouched 4 KiB page, from the cost model. */
    private static long oneNewPageFaultNs(final CostModel cost)
    {
        return cost.odpFaultNs(1, 1, 0, 1);
    }

    private static long naksFor(final long faultNs, final int minRnrTimer)
    {
        final long timer = CostModel.rnrTimerNs(minRnrTimer);
        return Math.max(1, (faultNs + timer - 1) / timer);
    }

    @Test
    void remoteWriteIntoUntouchedOdpMemoryIsRnrNakedThenLands()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RW);
        final List<TraceEvent> waits = trace(rig, "rnr_wait");
        final long naks = naksFor(oneNewPageFaultNs(rig.fabric.costModel()), 12);

        final byte[] data = pattern((int)PAGE, 2);
        final WorkCompletion wc = rig.write(data, buf, mr.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.processB().read(buf, (int)PAGE)).isEqualTo(data);
        assertThat(rig.counterB(SimCounter.ODP_PAGE_FAULTS)).isEqualTo(1);
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isEqualTo(naks).isGreaterThanOrEqualTo(1);
        assertThat(rig.counterA(SimCounter.ODP_PAGE_FAULTS)).isZero();
        // mlx5 counts each RNR NAK the requester retried after (rnr_nak_retry_err); none exhausted rnr_retry
        assertThat(rig.counterA(SimCounter.RNR_NAK_RETRY_ERR)).isEqualTo(naks);
        assertThat(rig.counterA(SimCounter.RNR_RETRIES_EXCEEDED)).isZero();
        assertThat(waits).hasSize(1);
        assertThat(waits.get(0).durationNs()).isEqualTo(naks * CostModel.rnrTimerNs(12));
        assertDeviceMapped(mr, rig.processB(), buf, 1, true);
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void rnrRetryZeroFailsTheWriteButTheResponderStillResolvesTheFault()
    {
        final OdpRig rig = OdpRig.connectx5(0, 12);
        final long buf = rig.bufferB(PAGE);
        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RW);

        final WorkCompletion wc = rig.write(pattern(256, 4), buf, mr.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.RNR_RETRY_EXC_ERR);
        // one RNR NAK, not retried (rnr_retry 0): it counts as the retries exceeded, not as a retried NAK
        assertThat(rig.counterA(SimCounter.RNR_NAK_RETRY_ERR)).isZero();
        assertThat(rig.counterA(SimCounter.RNR_RETRIES_EXCEEDED)).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isEqualTo(1);
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertDeviceMapped(mr, rig.processB(), buf, 1, true);
        assertThat(rig.processB().read(buf, 256)).as("nothing was written").containsOnly(0);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void aShortMinRnrTimerNeedsSeveralNaksAndRnrRetryBoundsThem()
    {
        final CostModel cost = CostModel.defaults();
        final long naks = naksFor(oneNewPageFaultNs(cost), 1);
        assertThat(naks).as("the fault outlasts one 10 us RNR timer").isGreaterThan(1).isLessThan(7);

        for (final int retry : new int[] {1, (int)naks - 1, (int)naks, 7})
        {
            final OdpRig rig = OdpRig.connectx5(retry, 1);
            final long buf = rig.bufferB(PAGE);
            final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RW);
            final byte[] data = pattern(128, retry);

            final WorkCompletion wc = rig.write(data, buf, mr.rkey());

            if (retry < naks)
            {
                assertThat(wc.status()).as("rnr_retry %d < %d NAKs", retry, naks).isEqualTo(WcStatus.RNR_RETRY_EXC_ERR);
                assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).as("NAKs with rnr_retry %d", retry)
                    .isEqualTo(retry + 1L);
                assertThat(rig.processB().read(buf, 128)).containsOnly(0);
            }
            else
            {
                assertThat(wc.status()).as("rnr_retry %d >= %d NAKs", retry, naks).isEqualTo(WcStatus.SUCCESS);
                assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isEqualTo(naks);
                assertThat(rig.processB().read(buf, 128)).isEqualTo(data);
            }
            assertThat(mr.pageFaults()).isEqualTo(1);
        }
    }

    @Test
    void remoteReadFromOdpMemoryFaultsOnTheResponder()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(2 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);
        final byte[] data = pattern(2 * (int)PAGE, 6);
        rig.processB().write(buf, data);
        assertThat(mr.deviceMapped(buf)).as("CPU faults that fill empty entries map nothing").isFalse();

        final WorkCompletion wc = rig.read(buf + 100, (int)PAGE, mr.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.scratchBytes((int)PAGE)).isEqualTo(Arrays.copyOfRange(data, 100, 100 + (int)PAGE));
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isGreaterThanOrEqualTo(1);
        assertDeviceMapped(mr, rig.processB(), buf, 2, true);
    }

    @Test
    void sendIntoAnOdpReceiveBufferFaultsOnTheResponder()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RW);
        rig.qpB.postRecv(List.of(RecvWr.of(77, new Sge(buf, PAGE, mr.lkey()))));
        final byte[] data = pattern(300, 8);
        rig.processA().write(rig.scratch, data);

        final WorkCompletion wc = rig.post(SendWr.send(1, List.of(new Sge(rig.scratch, 300, rig.scratchMr.lkey()))));

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        final List<WorkCompletion> recv = rig.cqB.poll(8);
        assertThat(recv).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(recv.get(0).byteLen()).isEqualTo(300);
        assertThat(rig.processB().read(buf, 300)).isEqualTo(data);
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isGreaterThanOrEqualTo(1);
    }

    @Test
    void theRnrNaksOfAReceiveCoverTheFaultsOfAllItsSges()
    {
        // The responder resolves every faulting SGE of the receive WQE before the request can go on (mlx5
        // pagefault_data_segments), so the requester waits out the sum of their times.
        final OdpRig rig = OdpRig.connectx5(7, 1);
        final long buf = rig.bufferB(2 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);
        rig.qpB.postRecv(List.of(RecvWr.of(1, new Sge(buf, 100, mr.lkey()), new Sge(buf + PAGE, 100, mr.lkey()))));
        final long expected = naksFor(2 * oneNewPageFaultNs(rig.fabric.costModel()), 1);

        final WorkCompletion wc = rig.post(SendWr.send(1, List.of(new Sge(rig.scratch, 200,
            rig.scratchMr.lkey()))));

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(mr.pageFaults()).isEqualTo(2);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isEqualTo(expected);
    }

    // ------------------------------------------------------------------ requester page faults

    @Test
    void localWriteAndSendGatherFromUntouchedOdpMemoryFaultOnTheRequesterWithoutRnr()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess a = rig.processA();
        final long src = a.mmapAnonymous(2 * PAGE);
        final SimOdpMr local = (SimOdpMr)rig.pdA.regMr(src, 2 * PAGE, ODP_RW);
        final byte[] data = pattern(2 * (int)PAGE, 12);
        a.write(src, data);
        assertThat(local.deviceMapped(src)).isFalse();
        final long dst = rig.bufferB(4 * PAGE);
        final MemoryRegion pinned = rig.pdB.regMr(dst, 4 * PAGE, RuleRig.REMOTE_ALL);

        final WorkCompletion write = rig.post(SendWr.write(1, List.of(new Sge(src, PAGE, local.lkey())), dst,
            pinned.rkey()));

        assertThat(write.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.processB().read(dst, (int)PAGE)).isEqualTo(Arrays.copyOf(data, (int)PAGE));
        assertThat(rig.counterA(SimCounter.ODP_PAGE_FAULTS)).isEqualTo(1);
        assertThat(rig.counterA(SimCounter.ODP_RNR_NAKS) + rig.counterB(SimCounter.ODP_RNR_NAKS)).isZero();
        assertThat(rig.counterB(SimCounter.ODP_PAGE_FAULTS)).isZero();

        rig.qpB.postRecv(List.of(RecvWr.of(5, new Sge(dst + 2 * PAGE, 2 * PAGE, pinned.lkey()))));
        final WorkCompletion send = rig.post(SendWr.send(2, List.of(new Sge(src + PAGE, PAGE, local.lkey()))));

        assertThat(send.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.processB().read(dst + 2 * PAGE, (int)PAGE))
            .isEqualTo(Arrays.copyOfRange(data, (int)PAGE, 2 * (int)PAGE));
        assertThat(rig.counterA(SimCounter.ODP_PAGE_FAULTS)).isEqualTo(2);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isZero();
        assertThat(local.pageFaults()).isEqualTo(2);
        assertDeviceMapped(local, a, src, 2, true);
    }

    @Test
    void readIntoALocalOdpMrFaultsOnTheRequester()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess a = rig.processA();
        final long sink = a.mmapAnonymous(PAGE);
        final SimOdpMr local = (SimOdpMr)rig.pdA.regMr(sink, PAGE, ODP_RW);
        final long src = rig.bufferB(PAGE);
        final byte[] data = pattern((int)PAGE, 13);
        rig.processB().write(src, data);
        final MemoryRegion pinned = rig.pdB.regMr(src, PAGE, RuleRig.REMOTE_ALL);

        final WorkCompletion wc = rig.post(SendWr.read(1, List.of(new Sge(sink, PAGE, local.lkey())), src,
            pinned.rkey()));

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(a.read(sink, (int)PAGE)).isEqualTo(data);
        assertThat(local.pageFaults()).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isZero();
        assertDeviceMapped(local, a, sink, 1, true);
    }

    @Test
    void aRequesterFaultThatCannotBeResolvedIsALocalProtectionError()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess a = rig.processA();
        final long src = a.mmapAnonymous(2 * PAGE);
        final SimOdpMr local = (SimOdpMr)rig.pdA.regMr(src, 2 * PAGE, ODP_RW);
        a.munmap(src + PAGE, PAGE);
        final long dst = rig.bufferB(2 * PAGE);
        final MemoryRegion pinned = rig.pdB.regMr(dst, 2 * PAGE, RuleRig.REMOTE_ALL);

        final WorkCompletion wc = rig.post(SendWr.write(1, List.of(new Sge(src, 2 * PAGE, local.lkey())), dst,
            pinned.rkey()));

        assertThat(wc.status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        assertThat(rig.counterA(SimCounter.ODP_PAGE_FAULT_FAILURES)).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.RX_WRITE_REQUESTS)).isZero();
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void aReceiveBufferFaultThatCannotBeResolvedFailsBothSides()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(2 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);
        rig.processB().munmap(buf, 2 * PAGE);
        rig.qpB.postRecv(List.of(RecvWr.of(3, new Sge(buf, PAGE, mr.lkey()))));

        final WorkCompletion wc = rig.post(SendWr.send(1, List.of(new Sge(rig.scratch, 64, rig.scratchMr.lkey()))));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_OP_ERR);
        final List<WorkCompletion> recv = rig.cqB.poll(8);
        assertThat(recv).hasSize(1);
        assertThat(recv.get(0).status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        assertThat(rig.counterB(SimCounter.ODP_PAGE_FAULT_FAILURES)).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isZero();
        assertThat(rig.qpB.state()).isEqualTo(QpState.ERR);
    }

    // ------------------------------------------------------------------ the capability of the faulting operation

    @Test
    void anAtomicThatFaultsOnAnOdpMrFailsWithoutAtomicInRcOdpCaps()
    {
        final OdpRig rig = OdpRig.connectx5();
        assertThat(rig.deviceB.profile().attributes().odpCaps().rcOdpCaps() & OdpCaps.ATOMIC).isZero();
        final long buf = rig.bufferB(PAGE);
        final Set<Access> access = EnumSet.copyOf(ODP_RW);
        access.add(Access.REMOTE_ATOMIC);
        final SimOdpMr mr = rig.odpB(buf, PAGE, access);
        final long failures = rig.counterB(SimCounter.ODP_PAGE_FAULT_FAILURES);

        final WorkCompletion wc = rig.post(SendWr.fetchAndAdd(1, new Sge(rig.scratch, 8, rig.scratchMr.lkey()), buf,
            mr.rkey(), 5));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.counterB(SimCounter.ODP_PAGE_FAULT_FAILURES)).isEqualTo(failures + 1);
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isZero();
        assertThat(mr.deviceMapped(buf)).isFalse();
        assertThat(rig.processB().translate(buf)).as("nothing was faulted in on the host").isEqualTo(-1);
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);

        // Once the page is mapped no fault is taken and the atomic runs.
        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(new Sge(buf, PAGE, mr.lkey())));
        rig.reconnect();
        final WorkCompletion again = rig.post(SendWr.fetchAndAdd(2, new Sge(rig.scratch, 8, rig.scratchMr.lkey()),
            buf, mr.rkey(), 5));
        assertThat(again.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.processB().read(buf, 1)[0]).isEqualTo((byte)5);
    }

    // ------------------------------------------------------------------ invalidations

    @Test
    void munmapZapsFirstThenAWriteThereFailsThenNewMemoryAtTheSameAddressIsUsed()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(4 * PAGE);
        b.write(buf, pattern(4 * (int)PAGE, 1));
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, ODP_RW);
        final long invalidations = rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS);
        final boolean[] mappedDuringUnmap = {false};
        rig.deviceB.addObserver(new DeviceObserver()
        {
            @Override
            public void odpInvalidated(final SimOdpMr m, final long va, final long lengthBytes, final String reason)
            {
                assertThat(reason).isEqualTo("munmap");
                mappedDuringUnmap[0] |= b.translate(va) != -1;
            }
        });

        b.munmap(buf + 2 * PAGE, 2 * PAGE);

        assertThat(mappedDuringUnmap[0]).as("the device was zapped before the page went").isTrue();
        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).isEqualTo(invalidations + 2);
        assertThat(mr.entriesZapped()).isEqualTo(2);
        assertDeviceMapped(mr, b, buf, 2, true);
        assertDeviceMapped(mr, b, buf + 2 * PAGE, 2, false);

        final WorkCompletion hole = rig.write(pattern(64, 3), buf + 2 * PAGE, mr.rkey());

        assertThat(hole.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(rig.counterB(SimCounter.ODP_PAGE_FAULT_FAILURES)).isEqualTo(1);

        rig.reconnect();
        assertThat(rig.mapFixedB(buf + 2 * PAGE, 2 * PAGE)).isEqualTo(buf + 2 * PAGE);
        final byte[] data = pattern(64, 7);
        final WorkCompletion fresh = rig.write(data, buf + 2 * PAGE, mr.rkey());

        assertThat(fresh.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(b.read(buf + 2 * PAGE, 64)).isEqualTo(data);
        assertThat(mr.devicePhysAddr(buf + 2 * PAGE)).isEqualTo(b.translate(buf + 2 * PAGE));
        assertThat(b.read(buf + 2 * PAGE + 64, 64)).as("the rest of the new page is zero").containsOnly(0);
    }

    @Test
    void aPinnedMrKeepsTheOldFramesAfterMunmapAndMmapWhereAnOdpMrFollows()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(2 * PAGE);
        b.write(buf, pattern(2 * (int)PAGE, 1));
        final MemoryRegion pinned = rig.pdB.regMr(buf, PAGE, RuleRig.REMOTE_ALL);
        final SimOdpMr odp = rig.odpB(buf + PAGE, PAGE, ODP_RW);
        b.munmap(buf, 2 * PAGE);
        rig.mapFixedB(buf, 2 * PAGE);

        assertThat(rig.write(pattern(32, 40), buf, pinned.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.write(pattern(32, 50), buf + PAGE, odp.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(b.read(buf, 32)).as("the pinned MR wrote the old, unmapped frame").containsOnly(0);
        assertThat(b.read(buf + PAGE, 32)).as("the ODP MR wrote the new page").isEqualTo(pattern(32, 50));
    }

    @Test
    void aRemoteWriteAfterForkBreaksCopyOnWriteForTheParentOnly()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess parent = rig.processB();
        final long buf = rig.bufferB(2 * PAGE);
        final byte[] old = pattern(2 * (int)PAGE, 20);
        parent.write(buf, old);
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);
        final long invalidations = rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS);

        final UserProcess child = parent.fork("child");

        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).as("fork write-protects the pages")
            .isEqualTo(invalidations + 2);
        assertDeviceMapped(mr, parent, buf, 2, false);

        final byte[] data = pattern(100, 33);
        assertThat(rig.write(data, buf + 50, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(parent.read(buf + 50, 100)).isEqualTo(data);
        assertThat(child.read(buf + 50, 100)).isEqualTo(Arrays.copyOfRange(old, 50, 150));
        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(mr.devicePhysAddr(buf)).isEqualTo(parent.translate(buf)).isNotEqualTo(child.translate(buf));
        assertThat(deviceWritable(rig, mr, buf)).isTrue();
        assertThat(mr.deviceMapped(buf + PAGE)).as("the fault maps the segment's pages only").isFalse();
    }

    @Test
    void reclaimInvalidatesOdpPagesButSkipsPinnedOnesAndTheNextAccessSwapsIn()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final Host host = b.host();
        final long odpBuf = rig.bufferB(4 * PAGE);
        final long pinBuf = rig.bufferB(4 * PAGE);
        final byte[] odpData = pattern(4 * (int)PAGE, 61);
        final byte[] pinData = pattern(4 * (int)PAGE, 62);
        b.write(odpBuf, odpData);
        b.write(pinBuf, pinData);
        final SimOdpMr odp = rig.odpB(odpBuf, 4 * PAGE, ODP_RW);
        final MemoryRegion pinned = rig.pdB.regMr(pinBuf, 4 * PAGE, RuleRig.REMOTE_ALL);
        final long pinFrame = b.translate(pinBuf);
        final long invalidations = rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS);

        host.reclaim(100_000);

        assertThat(b.translate(pinBuf)).isEqualTo(pinFrame);
        for (int i = 0; i < 4; i++)
        {
            assertThat(b.translate(odpBuf + i * PAGE)).as("ODP page %d swapped out", i).isEqualTo(-1);
        }
        assertDeviceMapped(odp, b, odpBuf, 4, false);
        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).isEqualTo(invalidations + 4);

        final long major = host.counter(VmEvent.PGMAJFAULT);
        assertThat(rig.read(odpBuf, 4 * (int)PAGE, odp.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.scratchBytes(4 * (int)PAGE)).isEqualTo(odpData);
        assertThat(host.counter(VmEvent.PGMAJFAULT)).isEqualTo(major + 4);
        assertThat(odp.pageFaults()).isEqualTo(1);
        assertDeviceMapped(odp, b, odpBuf, 4, true);
        assertThat(rig.read(pinBuf, 4 * (int)PAGE, pinned.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.scratchBytes(4 * (int)PAGE)).isEqualTo(pinData);
    }

    @Test
    void compactionMigratesOdpPagesButNotPinnedOnesAndTheDeviceFollows()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long odpBuf = rig.bufferB(16 * PAGE);
        final long pinBuf = rig.bufferB(4 * PAGE);
        final byte[] odpData = pattern(16 * (int)PAGE, 71);
        b.write(odpBuf, odpData);
        b.write(pinBuf, pattern(4 * (int)PAGE, 72));
        final SimOdpMr odp = rig.odpB(odpBuf, 16 * PAGE, ODP_RW);
        rig.pdB.regMr(pinBuf, 4 * PAGE, RuleRig.REMOTE_ALL);
        final long[] before = new long[16];
        for (int i = 0; i < 16; i++)
        {
            before[i] = b.translate(odpBuf + i * PAGE);
        }
        final long pinFrame = b.translate(pinBuf);

        b.host().compact();

        assertThat(b.translate(pinBuf)).isEqualTo(pinFrame);
        int moved = 0;
        for (int i = 0; i < 16; i++)
        {
            final long va = odpBuf + i * PAGE;
            if (b.translate(va) != before[i])
            {
                moved++;
                assertThat(odp.deviceMapped(va)).as("moved page %d zapped", i).isFalse();
            }
            else
            {
                assertThat(odp.devicePhysAddr(va)).isEqualTo(before[i]);
            }
        }
        assertThat(moved).as("compaction moved ODP pages").isPositive();
        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).isEqualTo(moved);

        assertThat(rig.read(odpBuf, 16 * (int)PAGE, odp.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.scratchBytes(16 * (int)PAGE)).isEqualTo(odpData);
        assertThat(odp.pageFaults()).isEqualTo(1);
        assertDeviceMapped(odp, b, odpBuf, 16, true);
    }

    @Test
    void invalidationsAreCountedOncePerHostOperation()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(8 * PAGE);
        b.touch(buf, 8 * PAGE, true);
        rig.odpB(buf, 8 * PAGE, ODP_RW);
        final long keyInvalidations = rig.counterB(SimCounter.KEY_INVALIDATIONS);
        final List<TraceEvent> spans = trace(rig, "odp_invalidate");
        final CostModel cost = rig.fabric.costModel();

        b.madvise(buf, 8 * PAGE, Madvice.DONTNEED);

        assertThat(rig.counterB(SimCounter.KEY_INVALIDATIONS)).isEqualTo(keyInvalidations + 1);
        assertThat(spans.stream().mapToLong(TraceEvent::durationNs).sum()).isEqualTo(cost.odpInvalidationNs(8));
        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).isEqualTo(8);
    }

    @Test
    void oneReclaimPassIsPricedAsOneInvalidation()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(8 * PAGE);
        b.touch(buf, 8 * PAGE, true);
        rig.odpB(buf, 8 * PAGE, ODP_RW);
        final long keyInvalidations = rig.counterB(SimCounter.KEY_INVALIDATIONS);
        final List<TraceEvent> spans = trace(rig, "odp_invalidate");

        b.host().reclaim(100_000);

        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).isEqualTo(8);
        assertThat(rig.counterB(SimCounter.KEY_INVALIDATIONS)).isEqualTo(keyInvalidations + 1);
        assertThat(spans.stream().mapToLong(TraceEvent::durationNs).sum())
            .isEqualTo(rig.fabric.costModel().odpInvalidationNs(8));
    }

    @Test
    void mprotectToProtNoneTakesEvenReadOnlyTranslationsAway()
    {
        // mprotect runs the PROTECTION_VMA invalidation over the whole range (change_protection); a page the CPU
        // may not read is not one the device may read either.
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(PAGE);
        b.write(buf, pattern(64, 1));
        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RO);
        b.mprotect(buf, PAGE, Set.of(Prot.READ));
        assertThat(mr.deviceMapped(buf)).as("losing PROT_WRITE zaps").isFalse();
        rig.pdB.adviseMr(MrAdvice.PREFETCH, MrAdvice.FLAG_FLUSH, List.of(new Sge(buf, PAGE, mr.lkey())));
        assertThat(mr.deviceMapped(buf)).isTrue();

        b.mprotect(buf, PAGE, Set.of());

        assertThat(mr.deviceMapped(buf)).isFalse();
        assertThat(rig.read(buf, 64, mr.rkey()).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void exitOfTheProcessZapsItsOdpMrsAndClosesThem()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(4 * PAGE);
        b.touch(buf, 4 * PAGE, true);
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, ODP_RW);
        final List<String> reasons = new ArrayList<>();
        rig.deviceB.addObserver(new DeviceObserver()
        {
            @Override
            public void odpInvalidated(final SimOdpMr m, final long va, final long lengthBytes, final String reason)
            {
                reasons.add(reason);
            }
        });

        b.exit();

        assertThat(reasons).isNotEmpty().containsOnly("exit");
        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).isEqualTo(4);
        assertThat(mr.isClosed()).isTrue();
        assertThat(rig.counterB(SimCounter.ODP_MR_LIVE)).isZero();
    }

    // ------------------------------------------------------------------ implicit ODP

    @Test
    void implicitRemoteWritesInTwoGibSlotsCreateTwoChildren()
    {
        // rnr_retry 6 bounds the time a fault that never maps takes to fail.
        final OdpRig rig = OdpRig.connectx5(6, 12);
        final SimOdpMr mr = (SimOdpMr)rig.pdB.regMr(0, -1L, ODP_RW);
        final long lowVa = rig.mapFixedB(0x5000_0000_0000L, 4 * PAGE);
        final long highVa = rig.mapFixedB(0x5000_0000_0000L + GIB + 8 * PAGE, 4 * PAGE);
        final long mtt = rig.counterB(SimCounter.MTT_ENTRIES_IN_USE);

        final byte[] one = pattern(2 * (int)PAGE, 81);
        final byte[] two = pattern(2 * (int)PAGE, 82);
        assertThat(rig.write(one, lowVa + PAGE, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.write(two, highVa, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(rig.processB().read(lowVa + PAGE, one.length)).isEqualTo(one);
        assertThat(rig.processB().read(highVa, two.length)).isEqualTo(two);
        assertThat(mr.implicitChildren()).isEqualTo(2);
        assertThat(rig.counterB(SimCounter.MTT_ENTRIES_IN_USE))
            .isEqualTo(mtt + 2 * AdapterTables.IMPLICIT_CHILD_ENTRIES);
        assertThat(mr.pageFaults()).isEqualTo(2);
        assertThat(mr.deviceMapped(lowVa + PAGE)).isTrue();
        assertThat(mr.devicePhysAddr(highVa)).isEqualTo(rig.processB().translate(highVa));
        assertThat(mr.deviceMapped(lowVa)).isFalse();
    }

    @Test
    void munmappingEveryMappedPageOfAnImplicitChildFreesIt()
    {
        final OdpRig rig = OdpRig.connectx5(6, 12);
        final SimOdpMr mr = (SimOdpMr)rig.pdB.regMr(0, -1L, ODP_RW);
        final long lowVa = rig.mapFixedB(0x5000_0000_0000L, 4 * PAGE);
        final long highVa = rig.mapFixedB(0x5000_0000_0000L + 2 * GIB, 4 * PAGE);
        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(new Sge(lowVa, 4 * PAGE, mr.lkey()),
            new Sge(highVa, 2 * PAGE, mr.lkey())));
        assertThat(mr.implicitChildren()).isEqualTo(2);
        final long mtt = rig.counterB(SimCounter.MTT_ENTRIES_IN_USE);
        final int notifiers = rig.processB().intervalNotifierCount();

        rig.processB().munmap(highVa, PAGE);
        assertThat(mr.implicitChildren()).as("one mapped page left").isEqualTo(2);
        rig.processB().munmap(highVa + PAGE, 3 * PAGE);

        assertThat(mr.implicitChildren()).isEqualTo(1);
        assertThat(rig.counterB(SimCounter.MTT_ENTRIES_IN_USE))
            .isEqualTo(mtt - AdapterTables.IMPLICIT_CHILD_ENTRIES);
        assertThat(rig.processB().intervalNotifierCount()).as("the child's interval notifier goes with it")
            .isEqualTo(notifiers - 1);
        assertThat(mr.deviceMapped(lowVa)).isTrue();
        assertThat(rig.read(lowVa, 64, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void deviceMappedOfAnImplicitMrFollowsItsChildren()
    {
        final OdpRig rig = OdpRig.connectx5();
        final SimOdpMr mr = (SimOdpMr)rig.pdB.regMr(0, -1L, ODP_RW);
        final long va = rig.bufferB(2 * PAGE);
        rig.processB().write(va, pattern(16, 1));

        rig.pdB.adviseMr(MrAdvice.PREFETCH_NO_FAULT, MrAdvice.FLAG_FLUSH, List.of(new Sge(va, 2 * PAGE, mr.lkey())));

        assertThat(mr.entriesMapped()).isEqualTo(1);
        assertThat(mr.deviceMapped(va)).isTrue();
        assertThat(mr.devicePhysAddr(va)).isEqualTo(rig.processB().translate(va));
        assertThat(mr.deviceMapped(va + PAGE)).isFalse();
    }

    // ------------------------------------------------------------------ ibv_advise_mr: errno

    @Test
    void adviseMrOnAProviderWithoutAdviseMrIsEopnotsupp()
    {
        final OdpRig rig = OdpRig.of(DeviceProfiles.rxeLegacy(), 7, 12);
        final long buf = rig.bufferB(PAGE);
        final MemoryRegion mr = rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.LOCAL_WRITE));

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, List.of(new Sge(buf, PAGE,
            mr.lkey())))), ADVISE, Errno.EOPNOTSUPP);
    }

    @Test
    void adviseMrRefusesBadFlagsAnEmptyListAndAClosedPdWithEinval()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RW);
        final List<Sge> sgl = List.of(new Sge(buf, PAGE, mr.lkey()));

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 2, sgl)), ADVISE, Errno.EINVAL);
        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, MrAdvice.FLAG_FLUSH | 4, sgl)), ADVISE,
            Errno.EINVAL);
        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, List.of())), ADVISE, Errno.EINVAL);
        assertThat(mr.entriesMapped()).isZero();
        assertThat(rig.counterB(SimCounter.ODP_PAGE_PREFETCH)).isZero();

        final ProtectionDomain other = rig.ctxB.allocPd();
        final SimOdpMr otherMr = (SimOdpMr)other.regMr(buf, PAGE, ODP_RW);
        other.close();
        assertThat(otherMr.isClosed()).as("closing the PD closes its ODP MRs").isTrue();
        assertErrno(verbsFailure(() -> other.adviseMr(MrAdvice.PREFETCH, 0, List.of(new Sge(buf, PAGE,
            otherMr.lkey())))), ADVISE, Errno.EINVAL);
    }

    @Test
    void adviseMrWithAnUnknownLkeyIsEnoent()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RW);
        final int stale = mr.lkey();
        mr.close();

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, List.of(new Sge(buf, PAGE,
            stale)))), ADVISE, Errno.ENOENT);
        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, List.of(new Sge(buf, PAGE,
            0x00ab_cd00)))), ADVISE, Errno.ENOENT);
    }

    @Test
    void adviseMrOnAPinnedMrIsEnoent()
    {
        // mlx5 get_prefetchable_mr looks the key up among the ODP mkeys only: a pinned MR's is not found there.
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final MemoryRegion pinned = rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.LOCAL_WRITE));

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, List.of(new Sge(buf, PAGE,
            pinned.lkey())))), ADVISE, Errno.ENOENT);
    }

    @Test
    void adviseMrOnAnOdpMrOfAnotherPdIsEperm()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final ProtectionDomain other = rig.ctxB.allocPd();
        final SimOdpMr mr = (SimOdpMr)other.regMr(buf, PAGE, ODP_RW);

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH, 0, List.of(new Sge(buf, PAGE,
            mr.lkey())))), ADVISE, Errno.EPERM);
        assertThat(mr.entriesMapped()).isZero();
    }

    @Test
    void prefetchWriteOnAnMrWithoutLocalWriteIsEpermWhilePrefetchWorks()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final SimOdpMr mr = rig.odpB(buf, PAGE, ODP_RO);
        final List<Sge> sgl = List.of(new Sge(buf, PAGE, mr.lkey()));

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, 0, sgl)), ADVISE, Errno.EPERM);
        assertThat(mr.entriesMapped()).isZero();

        rig.pdB.adviseMr(MrAdvice.PREFETCH, MrAdvice.FLAG_FLUSH, sgl);

        assertThat(mr.entriesMapped()).isEqualTo(1);
        assertThat(deviceWritable(rig, mr, buf)).isFalse();
    }

    @Test
    void adviseMrOutsideTheMrIsEfault()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(4 * PAGE);
        final SimOdpMr mr = rig.odpB(buf + PAGE, 2 * PAGE, ODP_RW);

        for (final Sge sge : List.of(new Sge(buf, PAGE, mr.lkey()), new Sge(buf + 2 * PAGE, 2 * PAGE, mr.lkey()),
            new Sge(buf + 3 * PAGE, PAGE, mr.lkey()), new Sge(buf + PAGE, 2 * PAGE + 1, mr.lkey())))
        {
            assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH,
                List.of(sge))), ADVISE, Errno.EFAULT);
        }
        assertThat(mr.entriesMapped()).isZero();
    }

    @Test
    void aBadSgeRefusesTheWholeListBeforeAnyWork()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(2 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH,
            List.of(new Sge(buf, PAGE, mr.lkey()), new Sge(buf, PAGE, 0x00ab_cd00)))), ADVISE, Errno.ENOENT);

        assertThat(mr.entriesMapped()).isZero();
        assertThat(rig.processB().translate(buf)).isEqualTo(-1);
    }

    @Test
    void aFlushedPrefetchOfUnmappedMemoryIsEfaultAndAnUnflushedOneIsBestEffort()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(4 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, ODP_RW);
        b.munmap(buf + 2 * PAGE, 2 * PAGE);
        final List<Sge> sgl = List.of(new Sge(buf, 4 * PAGE, mr.lkey()));

        assertErrno(verbsFailure(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, sgl)), ADVISE,
            Errno.EFAULT);

        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, 0, sgl);
    }

    // ------------------------------------------------------------------ ibv_advise_mr: what is mapped

    @Test
    void prefetchMapsReadOnlySoALaterRemoteWriteFaultsOnce()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(2 * PAGE);
        b.write(buf, pattern(16, 1));
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);
        b.madvise(buf, 2 * PAGE, Madvice.DONTNEED);
        final long faults = b.host().counter(VmEvent.PGFAULT);

        rig.pdB.adviseMr(MrAdvice.PREFETCH, MrAdvice.FLAG_FLUSH, List.of(new Sge(buf, 2 * PAGE, mr.lkey())));

        assertThat(b.host().counter(VmEvent.PGFAULT)).as("PREFETCH faults pages in").isEqualTo(faults + 2);
        assertDeviceMapped(mr, b, buf, 2, true);
        assertThat(deviceWritable(rig, mr, buf)).isFalse();
        assertThat(deviceWritable(rig, mr, buf + PAGE)).isFalse();
        assertThat(rig.counterB(SimCounter.ODP_PAGE_PREFETCH)).isEqualTo(2);
        assertThat(mr.pageFaults()).isZero();

        assertThat(rig.read(buf, 2 * (int)PAGE, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(mr.pageFaults()).as("a READ needs no fault").isZero();
        final byte[] data = pattern(32, 2);
        assertThat(rig.write(data, buf + PAGE, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(mr.pageFaults()).isEqualTo(1);
        assertThat(b.read(buf + PAGE, 32)).isEqualTo(data);
        assertThat(deviceWritable(rig, mr, buf + PAGE)).isTrue();
        assertThat(mr.devicePhysAddr(buf + PAGE)).isEqualTo(b.translate(buf + PAGE));
    }

    @Test
    void prefetchWriteMapsWritableSoARemoteWriteTakesNoFault()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(4 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, ODP_RW);

        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(new Sge(buf, 4 * PAGE, mr.lkey())));

        assertDeviceMapped(mr, b, buf, 4, true);
        for (int i = 0; i < 4; i++)
        {
            assertThat(deviceWritable(rig, mr, buf + i * PAGE)).isTrue();
        }
        assertThat(rig.counterB(SimCounter.ODP_PAGE_PREFETCH)).isEqualTo(4);
        final byte[] data = pattern(4 * (int)PAGE, 3);

        assertThat(rig.write(data, buf, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(mr.pageFaults()).isZero();
        assertThat(rig.counterB(SimCounter.ODP_RNR_NAKS)).isZero();
        assertThat(b.read(buf, data.length)).isEqualTo(data);
    }

    @Test
    void prefetchNoFaultMapsOnlyPresentPages()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(4 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, ODP_RW);
        b.write(buf + PAGE, pattern(8, 1));
        b.write(buf + 3 * PAGE, pattern(8, 1));
        final long faults = b.host().counter(VmEvent.PGFAULT);

        rig.pdB.adviseMr(MrAdvice.PREFETCH_NO_FAULT, MrAdvice.FLAG_FLUSH, List.of(new Sge(buf, 4 * PAGE,
            mr.lkey())));

        assertThat(b.host().counter(VmEvent.PGFAULT)).isEqualTo(faults);
        assertThat(mr.entriesMapped()).isEqualTo(2);
        assertThat(mr.deviceMapped(buf)).isFalse();
        assertThat(mr.deviceMapped(buf + PAGE)).isTrue();
        assertThat(mr.deviceMapped(buf + 2 * PAGE)).isFalse();
        assertThat(mr.devicePhysAddr(buf + 3 * PAGE)).isEqualTo(b.translate(buf + 3 * PAGE));
        assertThat(b.translate(buf)).isEqualTo(-1);
    }

    @Test
    void aFlushedPrefetchAdvancesTheClockByItsPriceAndAnUnflushedOneDoesNot()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long flushed = rig.bufferB(4 * PAGE);
        final long deferred = rig.bufferB(4 * PAGE);
        final SimOdpMr one = rig.odpB(flushed, 4 * PAGE, ODP_RW);
        final SimOdpMr two = rig.odpB(deferred, 4 * PAGE, ODP_RW);
        final CostModel cost = rig.fabric.costModel();
        final List<TraceEvent> spans = trace(rig, "advise_mr");

        long t0 = rig.fabric.clock().nowNs();
        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(new Sge(flushed, 4 * PAGE,
            one.lkey())));
        // Four untouched pages: four walked, four minor faults, four MTT entries.
        assertThat(rig.fabric.clock().nowNs() - t0).isEqualTo(cost.odpFaultNs(4, 4, 0, 4));

        t0 = rig.fabric.clock().nowNs();
        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, 0, List.of(new Sge(deferred, 4 * PAGE, two.lkey())));
        assertThat(rig.fabric.clock().nowNs()).isEqualTo(t0);

        assertThat(one.entriesMapped()).isEqualTo(4);
        assertThat(two.entriesMapped()).as("the simulator maps at once either way").isEqualTo(4);
        assertThat(spans).hasSize(2);
        assertThat(spans).allSatisfy(s -> assertThat(s.durationNs()).isEqualTo(cost.odpFaultNs(4, 4, 0, 4)));
    }

    @Test
    void adviseMrTakesIovasForAnMrRegisteredAtAnotherIova()
    {
        // ibv_advise_mr's sg_list addresses are what the lkey is used with: iovas (mlx5 pagefault_mr: io_virt).
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(2 * PAGE);
        final long iova = 0x10_0000_0000L;
        final SimOdpMr mr = (SimOdpMr)rig.pdB.regMr(buf, 2 * PAGE, iova, ODP_RW);

        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(new Sge(iova + PAGE, PAGE,
            mr.lkey())));

        assertThat(mr.deviceMapped(buf + PAGE)).isTrue();
        assertThat(mr.deviceMapped(buf)).isFalse();
        assertThat(mr.devicePhysAddr(buf + PAGE)).isEqualTo(b.translate(buf + PAGE));
    }

    @Test
    void remoteAccessByIovaFaultsTheRightPages()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(2 * PAGE);
        final long iova = 0x10_0000_0000L;
        final SimOdpMr mr = (SimOdpMr)rig.pdB.regMr(buf, 2 * PAGE, iova, ODP_RW);
        final byte[] data = pattern(64, 4);

        assertThat(rig.write(data, iova + PAGE + 8, mr.rkey()).status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(b.read(buf + PAGE + 8, 64)).isEqualTo(data);
        assertThat(mr.deviceMapped(buf + PAGE)).isTrue();
        assertThat(mr.deviceMapped(buf)).isFalse();
        assertThat(mr.devicePhysAddr(buf + PAGE + 8)).isEqualTo(b.translate(buf + PAGE + 8));
    }

    // ------------------------------------------------------------------ deregistration, rereg, windows

    @Test
    void deregRemovesTheIntervalNotifierAndAMunmapAfterwardsDoesNotReachTheDevice()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final long buf = rig.bufferB(4 * PAGE);
        b.touch(buf, 4 * PAGE, true);
        final int notifiers = b.intervalNotifierCount();
        final long mtt = rig.counterB(SimCounter.MTT_ENTRIES_IN_USE);
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, ODP_RW);
        assertThat(b.intervalNotifierCount()).isEqualTo(notifiers + 1);
        final int lkey = mr.lkey();

        mr.close();

        assertThat(mr.isClosed()).isTrue();
        assertThat(b.intervalNotifierCount()).isEqualTo(notifiers);
        assertThat(rig.deviceB.odpMemoryRegion(lkey)).isNull();
        assertThat(rig.deviceB.tables().isOnDemand(lkey)).isFalse();
        assertThat(rig.counterB(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mtt);
        assertThat(rig.counterB(SimCounter.ODP_MR_LIVE)).isZero();
        assertThat(mr.deviceMapped(buf)).isFalse();
        final long invalidations = rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS);
        final long now = rig.fabric.clock().nowNs();

        b.munmap(buf, 4 * PAGE);

        assertThat(rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS)).isEqualTo(invalidations);
        assertThat(rig.fabric.clock().nowNs()).isEqualTo(now);
        assertThat(rig.write(pattern(8, 1), buf, lkey).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void deregOfAnImplicitMrFreesItsChildrenAndNotifiers()
    {
        final OdpRig rig = OdpRig.connectx5();
        final UserProcess b = rig.processB();
        final int notifiers = b.intervalNotifierCount();
        final long mtt = rig.counterB(SimCounter.MTT_ENTRIES_IN_USE);
        final SimOdpMr mr = (SimOdpMr)rig.pdB.regMr(0, -1L, ODP_RW);
        final long va = rig.bufferB(PAGE);
        b.write(va, pattern(8, 1));
        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(new Sge(va, PAGE, mr.lkey())));

        mr.close();

        assertThat(b.intervalNotifierCount()).isEqualTo(notifiers);
        assertThat(rig.counterB(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mtt);
        assertThat(mr.implicitChildren()).isZero();
    }

    @Test
    void reregOfAnOdpMrIsEopnotsupp()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(2 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);

        final Throwable t = catchThrowable(() -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0,
            EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND)));

        assertThat(t).isInstanceOf(ReregException.class);
        assertThat(((ReregException)t).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(mr.isClosed()).isFalse();
        assertThat(mr.access()).isEqualTo(ODP_RW);
    }

    @Test
    void bindingAWindowToAnOdpMrCompletesWithMwBindErr()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(2 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 2 * PAGE, ODP_RW);
        final MemoryWindow mw = rig.pdB.allocMw(MwType.TYPE_1);
        final int rkeyBefore = mw.rkey();

        rig.qpB.bindMw(mw, 9, EnumSet.of(SendFlag.SIGNALED), new MwBindInfo(mr, buf, PAGE,
            EnumSet.of(Access.REMOTE_READ)));
        final List<WorkCompletion> wcs = rig.cqB.poll(8);

        assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.MW_BIND_ERR);
        assertThat(rig.counterB(SimCounter.MW_BINDS)).isZero();
        assertThat(rig.deviceB.tables().isWindow(rkeyBefore)).isTrue();
    }

    @Test
    void mwBindAccessOnAnOdpMrRegisters()
    {
        // mlx5 create_user_odp_mr takes every legal flag with ON_DEMAND, MW_BIND included.
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(PAGE);
        final Set<Access> access = EnumSet.copyOf(ODP_RW);
        access.add(Access.MW_BIND);

        assertThat(rig.pdB.regMr(buf, PAGE, access).access()).containsAll(access);
    }
}
