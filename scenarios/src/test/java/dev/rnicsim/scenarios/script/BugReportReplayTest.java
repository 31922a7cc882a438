package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Public bug reports and questions about memory registration and key invalidation, replayed on the simulator: each
 * script under {@code bug-reports/} stages what the reporter did on the driver profile closest to theirs and expects
 * the errno or work-completion status they saw (the script's own {@code expect} lines); each test then checks that the
 * simulator's message names the cause the maintainers gave and its fix. The report's address is the test's display
 * name and the script's first line; docs/bug-reports.md lists them with what the real stack answered.
 */
class BugReportReplayTest
{
    /** @return the output of the replay {@code bug-reports/SCRIPT}, whose every expect held. */
    static String replay(final String script)
    {
        final String name = "bug-reports/" + script;
        try (InputStream in = BugReportReplayTest.class.getResourceAsStream("/" + name))
        {
            assertThat(in).as(name).isNotNull();
            return ScriptRun.ok(script, new String(in.readAllBytes(), StandardCharsets.UTF_8)).out();
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    @DisplayName("https://github.com/tarickb/the-geek-in-the-corner/issues/6: ENOMEM past a 64 KiB memlock")
    void memlockOf64KiB()
    {
        assertThat(replay("01-memlock-64k-reg-100k.rsim"))
            .contains("-> ENOMEM: ibv_reg_mr: pinned_vm=8 pages + 32 > RLIMIT_MEMLOCK=16 pages")
            .contains("raise 'ulimit -l' or grant CAP_IPC_LOCK");
    }

    @Test
    @DisplayName("https://github.com/NVIDIA/nccl-tests/issues/206: ibv_reg_mr_iova2 ENOMEM under ulimit -l 8192")
    void ncclMemlockOf8MiB()
    {
        assertThat(replay("02-nccl-memlock-8m.rsim"))
            .contains("RLIMIT_MEMLOCK=2048 pages (8388608 bytes); raise 'ulimit -l'");
    }

    @Test
    @DisplayName("https://github.com/openucx/ucx/issues/8229: ibv_create_cq(cqe=4096) ENOMEM under memlock 64")
    void createCqUnderMemlock()
    {
        assertThat(replay("03-ucx-create-cq-memlock.rsim"))
            .contains("-> ENOMEM: ibv_create_cq: pinned_vm=2 pages + 128 > RLIMIT_MEMLOCK=16 pages");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/rdma-core/pull/1222: fork child faults beside a sub-page MR")
    void forkChildFaultsBesideASubPageRegistration()
    {
        assertThat(replay("04-fork-subpage-dontfork.rsim"))
            .contains("-> EFAULT: page fault: SIGSEGV at").contains("no VMA maps it");
    }

    @Test
    @DisplayName("https://github.com/kvcache-ai/Mooncake/issues/3639: MADV_DONTFORK splits VMAs to max_map_count")
    void dontforkSplitsVmasToMaxMapCount()
    {
        assertThat(replay("05-fork-dontfork-max-map-count.rsim"))
            .contains("could not madvise(MADV_DONTFORK)").contains("vm.max_map_count=64")
            .contains("raise vm.max_map_count").contains("register fewer, larger buffers");
    }

    @Test
    @DisplayName("https://github.com/Mellanox/nv_peer_memory/issues/36: GPU memory without nv_peer_mem is EFAULT")
    void gpuMemoryWithoutPeerMemory()
    {
        assertThat(replay("06-gpu-without-peermem.rsim"))
            .contains("no peer-memory client (nvidia-peermem) is loaded").contains("load one or register through "
                + "ibv_reg_dmabuf_mr");
    }

    @Test
    @DisplayName("https://github.com/Mellanox/nv_peer_memory/issues/101: a large GPU registration fills BAR1")
    void largeGpuRegistrationFillsBar1()
    {
        assertThat(replay("07-gpu-bar1-full.rsim")).contains("-> EFAULT: ibv_reg_mr: g0: BAR1 aperture exhausted")
            .contains("peer-memory MRs are bounded by BAR1, not by VRAM");
    }

    @Test
    @DisplayName("https://github.com/openucx/ucx/pull/9771: FETCH_ADD on an MR without REMOTE_ATOMIC")
    void atomicOnAnMrWithoutRemoteAtomic()
    {
        assertThat(replay("08-ucx-rcache-no-atomic.rsim"))
            .contains("IBV_WC_REM_ACCESS_ERR vendor_err=0x13").contains("lacks [REMOTE_ATOMIC]")
            .contains("check RIGHTS").contains("fix: register the MR with [REMOTE_ATOMIC] and LOCAL_WRITE");
    }

    @Test
    @DisplayName("https://github.com/uccl-project/uccl/pull/1040: an SGE with the rkey instead of the lkey")
    void rkeyUsedAsLkey()
    {
        assertThat(replay("09-sge-rkey-as-lkey.rsim"))
            .contains("IBV_WC_LOC_QP_OP_ERR")
            .contains("0 is the rkey rxe gives an MR registered without remote rights")
            .contains("fix: an SGE takes the MR's lkey (mr->lkey), not its rkey");
    }

    @Test
    @DisplayName("https://github.com/animeshtrivedi/rdma-example/pull/4: the lkey passed as the rkey works on mlx5")
    void lkeyAsRkeyWorksWhereTheyAreEqual()
    {
        assertThat(replay("10-lkey-passed-as-rkey.rsim")).contains("IBV_WC_SUCCESS");
    }

    @Test
    @DisplayName("https://github.com/ofi-cray/libfabric-cray/issues/1000: a write lands in unmapped pages")
    void writeLandsInPagesUnmappedWithoutDereg()
    {
        assertThat(replay("11-unmap-without-dereg.rsim"))
            .contains("warning STALE_MAPPING").contains("the MR outlived its memory");
    }

    @Test
    @DisplayName("https://github.com/ofi-cray/libfabric-cray/issues/1350: the cache hands back a stale MR")
    void registrationCacheHandsBackAStaleMr()
    {
        assertThat(replay("12-rcache-reused-address.rsim")).contains("acquire h2: hit")
            .contains("warning STALE_MAPPING").contains("deregister or invalidate it when");
    }

    @Test
    @DisplayName("https://github.com/spdk/spdk/issues/298: receives flushed when the QP goes to ERR")
    void flushOnDisconnect()
    {
        assertThat(replay("13-flush-on-disconnect.rsim"))
            .contains("IBV_WC_WR_FLUSH_ERR vendor_err=0x5").contains("is in ERR since ibv_modify_qp to ERR");
    }

    @Test
    @DisplayName("https://github.com/open-mpi/ompi/issues/95: a flush names the error before it")
    void flushNamesTheFirstError()
    {
        assertThat(replay("14-flush-follows-first-error.rsim"))
            .contains("wr_id 2 flushed: QP 0x11 is in ERR since wr_id 1 completed with IBV_WC_REM_ACCESS_ERR")
            .contains("fix: look at the first error completion of the QP");
    }

    @Test
    @DisplayName("https://github.com/ydb-platform/nbs/issues/5790: min_rnr_timer=0 stalls a SEND 655 ms")
    void rnrTimerZeroStallsASend()
    {
        final String out = replay("15-rnr-timer-zero-latency.rsim");
        assertThat(out).contains("expect now-t0 >= 600ms: held").contains("expect now-t1 < 10ms: held");
    }

    @Test
    @DisplayName("https://github.com/meta-pytorch/torchcomms/pull/3345: RNR NAKs when receives come after RTR")
    void rnrNaksWhenReceivesComeLate()
    {
        assertThat(replay("16-rnr-before-prepost.rsim")).contains("expect nic_a.rnr_nak_retry_err >= 1: held");
    }

    @Test
    @DisplayName("https://github.com/hellas-ai/thunderbolt-ibverbs/pull/71: rnr_retry=0 fails the SEND at once")
    void rnrRetryZero()
    {
        assertThat(replay("17-rnr-retry-zero.rsim"))
            .contains("IBV_WC_RNR_RETRY_EXC_ERR vendor_err=0x16")
            .contains("answered RNR NAK 1 time (rnr_retry=0): no receive was posted")
            .contains("fix: post receives before the peer sends, or set rnr_retry=7");
    }

    @Test
    @DisplayName("https://github.com/zrlio/disni/issues/39: ODP needs a non-zero rnr_retry")
    void odpNeedsRnrRetry()
    {
        assertThat(replay("18-odp-needs-rnr-retry.rsim"))
            .contains("an on-demand-paging page fault at the responder did not settle in time")
            .contains("fix: an ODP responder answers RNR NAK while it resolves a page fault: connect with rnr_retry "
                + "above 0")
            .doesNotContain("fix: post receives before the peer sends");
    }

    @Test
    @DisplayName("https://github.com/ofiwg/libfabric/issues/6467: a read-only buffer with LOCAL_WRITE is EFAULT")
    void readOnlyBufferWithLocalWrite()
    {
        assertThat(replay("19-readonly-buffer-local-write.rsim"))
            .contains("-> EFAULT: ibv_reg_mr: SIGSEGV at")
            .contains("so ib_umem_get pins the pages for writing (FOLL_WRITE) and this mapping is read-only")
            .contains("register a buffer the NIC only reads with none of them");
    }

    @Test
    @DisplayName("https://github.com/openucx/ucx/issues/6264: CREATE_MKEY limits exceeded after many MRs")
    void mkeyLimitAfterManyRegistrations()
    {
        assertThat(replay("20-mlx5-mkey-limit.rsim"))
            .contains("ENOMEM in repetition 65: ibv_reg_mr: MPT full").contains("(max_mr=64");
    }

    @Test
    @DisplayName("https://thelinuxcluster.com/2013/08/11/"
        + "registering-sufficent-memory-for-openib-when-using-mellanox-hca/: mlx4 registers what log_num_mtt allows")
    void mlx4LogNumMttBoundsRegistrableMemory()
    {
        assertThat(replay("21-mlx4-log-num-mtt.rsim"))
            .contains("-> ENOMEM: ibv_reg_mr: MTT cannot give 32768 entries")
            .contains("raise the mlx4_core module parameter log_num_mtt (now 12) or log_mtts_per_seg (now 3)");
    }

    @Test
    @DisplayName("https://github.com/ut-osa/assise/issues/26: a range past the mapping is EFAULT")
    void rangePastTheMapping()
    {
        assertThat(replay("22-reg-beyond-mapping.rsim"))
            .contains("-> EFAULT: ibv_reg_mr: SIGSEGV at").contains("mmap the whole range first");
    }

    @Test
    @DisplayName("https://github.com/kvcache-ai/Mooncake/pull/3845: DONTFORK off a hugetlb boundary is EINVAL")
    void dontforkOffAHugetlbBoundary()
    {
        assertThat(replay("23-hugetlb-dontfork-unaligned.rsim"))
            .contains("cuts through a 2048 kB hugetlb page").contains("set RDMAV_HUGEPAGES_SAFE=1");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/rdma-core/pull/1011: ibv_fork_init after a registration is EINVAL")
    void forkInitAfterARegistration()
    {
        assertThat(replay("24-forkinit-too-late.rsim"))
            .contains("-> EINVAL: ibv_fork_init").contains("before the first ibv_reg_mr");
    }

    @Test
    @DisplayName("https://github.com/ofiwg/libfabric/issues/8257: the key of a failed registration")
    void keyOfAFailedRegistration()
    {
        assertThat(replay("25-unchecked-failed-registration.rsim"))
            .contains("IBV_WC_REM_ACCESS_ERR").contains("read from an MR whose registration failed");
    }

    @Test
    @DisplayName("https://github.com/spdk/spdk/issues/1387: the host deregisters while the target's READ is in flight")
    void deregWhileAReadIsInFlight()
    {
        assertThat(replay("26-dereg-during-read.rsim"))
            .contains("warning KEY_RETIRED_IN_FLIGHT: ibv_dereg_mr").contains("(3 of 256 packets placed)")
            .contains("IBV_WC_REM_ACCESS_ERR vendor_err=0x13").contains("then deregistered at")
            .contains("deregister an MR only after its last work request completed");
    }

    @Test
    @DisplayName("https://github.com/kvcache-ai/Mooncake/issues/2017: a write past a truncated MR")
    void writePastAShorterMr()
    {
        assertThat(replay("27-mr-shorter-than-advertised.rsim"))
            .contains("check RANGE").contains("(65536 bytes)").contains("register a larger range or split the "
                + "transfer");
    }

    @Test
    @DisplayName("https://github.com/NVIDIA/nccl/issues/778: ibv_reg_dmabuf_mr EOPNOTSUPP on a driver without it")
    void dmabufOnADriverWithoutIt()
    {
        assertThat(replay("28-dmabuf-unsupported.rsim"))
            .contains("-> EOPNOTSUPP: ibv_reg_dmabuf_mr: connectx5 (mlx5) cannot register dma-bufs")
            .contains("through a peer-memory client instead (nvidia-peermem").contains("NCCL_DMABUF_ENABLE=0")
            .doesNotContain("use a device that registers dma-bufs (mlx5)");
    }

    @Test
    @DisplayName("https://github.com/SoftRoCE/rxe-dev/issues/39: destroying an SRQ a QP still uses is EBUSY")
    void destroySrqInUse()
    {
        assertThat(replay("29-destroy-srq-in-use.rsim"))
            .contains("-> EBUSY: ibv_destroy_srq: 1 QP(s) still take their receives from this SRQ")
            .contains("destroy them first");
    }

    @Test
    @DisplayName("https://github.com/ofiwg/libfabric/pull/4913: a CQ overrun leaves its QPs unusable")
    void cqOverrun()
    {
        assertThat(replay("30-cq-overrun.rsim"))
            .contains("IBV_EVENT_CQ_ERR on CQ cq_a: a completion found the CQ full (3 entries) and was lost")
            .contains("poll the CQ sooner or create it with more entries");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/rdma-core/pull/1048: PREFETCH_WRITE on a read-only ODP MR is EPERM")
    void prefetchWriteOnAReadOnlyOdpMr()
    {
        assertThat(replay("31-advise-prefetch-write-readonly.rsim"))
            .contains("-> EPERM: ibv_advise_mr: PREFETCH_WRITE on lkey")
            .contains("(REMOTE_WRITE, REMOTE_ATOMIC, MW_BIND: ib_access_writable; get_prefetchable_mr)")
            .contains("register the MR with LOCAL_WRITE or use PREFETCH");
    }

    @Test
    @DisplayName("https://github.com/ceph/ceph/pull/13740: a write after fork leaves the NIC on the child's page")
    void copyOnWriteAfterFork()
    {
        assertThat(replay("32-cow-after-fork.rsim"))
            .contains("warning STALE_MAPPING").contains("a copy-on-write after fork")
            .contains("call ibv_fork_init() or set RDMAV_FORK_SAFE=1 before registering")
            .contains("without the 2 VM_DONTCOPY (MADV_DONTFORK) VMAs of its parent");
    }

    @Test
    @DisplayName("https://github.com/spdk/spdk/issues/1697: an rxe without the 2023 patch raises no LAST_WQE_REACHED")
    void oldRxeRaisesNoLastWqeReached()
    {
        assertThat(replay("33-rxe-no-last-wqe.rsim"))
            .contains("expect no events: held")
            .contains("IBV_EVENT_QP_LAST_WQE_REACHED on QP q2 (0x11): QP 0x11 is in ERR and takes no more receives");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/rdma-core/pull/834: an ODP range is not MADV_DONTFORK")
    void odpRangeIsNotDontfork()
    {
        assertThat(replay("34-odp-not-dontfork.rsim"))
            .contains("without the 2 VM_DONTCOPY (MADV_DONTFORK) VMAs of its parent")
            .contains("-> EFAULT: page fault: SIGSEGV at").contains("maps it in a MADV_DONTFORK (VM_DONTCOPY) VMA, "
                + "which fork does not copy")
            .contains("expect bytes dst \"after the fork!\": held");
    }

    @Test
    @DisplayName("https://github.com/open-mpi/ompi/pull/3292: a child faults on the tail page of a registered buffer")
    void childFaultsOnTheTailPageOfARegisteredBuffer()
    {
        assertThat(replay("35-fork-child-touches-buffer-tail.rsim"))
            .contains("-> EFAULT: page fault: SIGSEGV at").contains("which fork does not copy")
            .contains("keep what the child uses off the pages of registered buffers");
    }

    @Test
    @DisplayName("https://github.com/ceph/ceph/pull/25447: a beacon posted after ERR completes after the rest")
    void beaconAfterErrCompletesLast()
    {
        assertThat(replay("36-beacon-after-err.rsim"))
            .contains("expect last.wr_id == 99: held")
            .contains("wr_id 99 flushed: QP 0x11 is in ERR since ibv_modify_qp to ERR");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/perftest/issues/139: 220 inline bytes are EINVAL on an E810")
    void irdmaInlineLimit()
    {
        assertThat(replay("37-irdma-inline-220.rsim"))
            .contains("-> EINVAL: ibv_create_qp: max_inline_data=220 > 101 bytes, the most the irdma driver takes")
            .contains("no attribute of ibv_query_device reports it").contains("Ask for at most 101 inline bytes");
    }

    @Test
    @DisplayName("https://github.com/ofiwg/libfabric/issues/4719: rxe refuses more inline data than RXE_MAX_INLINE_DATA")
    void rxeInlineProbe()
    {
        assertThat(replay("38-rxe-inline-probe.rsim"))
            .contains("-> EINVAL: ibv_create_qp: max_inline_data=512 > 400 bytes, the most the rxe driver takes "
                + "(rxe_qp_chk_cap: RXE_MAX_INLINE_DATA")
            .contains("max_inline_data=513 > 512 bytes");
    }

    @Test
    @DisplayName("https://github.com/zrlio/softiwarp/issues/13: siw takes 80 inline bytes, Open MPI's 72 fit")
    void siwInlineLimit()
    {
        assertThat(replay("39-siw-inline-limit.rsim"))
            .contains("-> EINVAL: ibv_create_qp: max_inline_data=81 > 80 bytes").contains("siw_create_qp: SIW_MAX_INLINE");
    }

    @Test
    @DisplayName("https://github.com/open-mpi/ompi/pull/1101: REMOTE_WRITE without LOCAL_WRITE is EINVAL")
    void remoteWriteWithoutLocalWrite()
    {
        assertThat(replay("40-remote-write-without-local-write.rsim"))
            .contains("-> EINVAL: ibv_reg_mr: access=[REMOTE_WRITE, REMOTE_READ]: REMOTE_WRITE and REMOTE_ATOMIC need "
                + "LOCAL_WRITE (ib_check_mr_access); add LOCAL_WRITE");
    }

    @Test
    @DisplayName("https://github.com/uccl-project/uccl/issues/267: the three ENOMEMs of ibv_post_send on mlx5")
    void postSendEnomemCauses()
    {
        assertThat(replay("41-post-send-enomem-causes.rsim"))
            .contains("inline payload of 128 bytes > max_inline_data=60; send less inline or drop IBV_SEND_INLINE")
            .contains("num_sge=3 > max_send_sge=2 (mlx5_post_send answers ENOMEM)")
            .contains("send queue full: 2 work requests hold its slots = max_send_wr=2 (2 not finished")
            .contains("poll the send CQ");
    }

    @Test
    @DisplayName("https://github.com/spdk/spdk/issues/2401: 31 SGEs of 512 bytes are ENOMEM on a ConnectX-5")
    void difInsertTooManySges()
    {
        assertThat(replay("42-dif-insert-too-many-sges.rsim"))
            .contains("-> ENOMEM: ibv_post_send: wr[0]: num_sge=31 > max_send_sge=30")
            .contains("use fewer SGEs or create the QP with a larger max_send_sge");
    }

    @Test
    @DisplayName("https://github.com/ofiwg/libfabric/pull/1802: unsignaled sends fill the send queue on mlx5")
    void unsignaledSendsFillTheSendQueue()
    {
        assertThat(replay("43-unsignaled-sends-fill-sq.rsim"))
            .contains("-> ENOMEM: ibv_post_send: wr[0]: send queue full: 4 work requests hold its slots = "
                + "max_send_wr=4 (0 not finished, 4 finished whose completion, or a later one's, was not polled)")
            .contains("the mlx5 provider frees a slot only when ibv_poll_cq returns the completion of its work "
                + "request or of a later one")
            .contains("signal at least one work request in every max_send_wr")
            .contains("expect ok: held");
    }

    @Test
    @DisplayName("https://github.com/apache/brpc/issues/3132: the window reopens before the send queue does")
    void windowReopensBeforeTheSendQueue()
    {
        assertThat(replay("44-window-before-send-cqe.rsim"))
            .contains("expect last.imm == 2: held")
            .contains("send queue full: 2 work requests hold its slots = max_send_wr=2 (0 not finished, 2 finished")
            .contains("an unsignaled work request holds its slot until a signaled one after it is polled");
    }

    @Test
    @DisplayName("https://github.com/openucx/ucx/pull/9363: ON_DEMAND is EOPNOTSUPP on a BlueField without ODP")
    void onDemandOnABlueFieldWithoutOdp()
    {
        assertThat(replay("45-bluefield-no-odp.rsim"))
            .contains("-> EOPNOTSUPP: ibv_reg_mr: access ON_DEMAND: bluefield2 has no on-demand paging")
            .contains("check odp_caps.general_caps of ibv_query_device_ex for IBV_ODP_SUPPORT before asking for it");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/perftest/issues/189: qp_access_flags need no LOCAL_WRITE, the MR does")
    void qpAccessFlagsNeedNoLocalWrite()
    {
        assertThat(replay("46-qp-access-without-local-write.rsim"))
            .contains("expect qp_b.access == 2: held")
            .contains("-> EINVAL: ibv_reg_mr: access=[REMOTE_WRITE]: REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE")
            .contains("expect bytes dst \"remote write ok\": held");
    }
}
