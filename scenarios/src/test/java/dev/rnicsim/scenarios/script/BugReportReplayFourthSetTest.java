package dev.rnicsim.scenarios.script;

import static dev.rnicsim.scenarios.script.BugReportReplayTest.replay;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The fourth and fifth sets of public bug reports replayed (47 and on, docs/bug-reports.md): work in flight when a
 * peer tears down, keys of reused buffers, the rights a READ's sink and a receive need, and limits that belong to one
 * device (EFA's page budget, the READs a QP keeps outstanding); then (56 and on) teardown order, QP states and
 * address vectors, the kernel's pinning limits (RLIMIT_MEMLOCK in containers, long-term pins and movable memory),
 * holes in a registered range, and which keys a SEND_WITH_INV may invalidate. As {@link BugReportReplayTest}: each
 * script expects what the reporter saw; each test checks that the message names the maintainers' cause and fix.
 */
class BugReportReplayFourthSetTest
{
    @Test
    @DisplayName("https://github.com/ofiwg/fabtests/issues/410: the sink of an RDMA READ needs LOCAL_WRITE")
    void readSinkWithoutLocalWrite()
    {
        assertThat(replay("47-read-sink-without-local-write.rsim"))
            .contains("IBV_WC_LOC_PROT_ERR vendor_err=0x4").contains("lacks [LOCAL_WRITE]: asked [LOCAL_WRITE], "
                + "granted [REMOTE_READ]")
            .contains("fix: register the local buffer's MR with [LOCAL_WRITE] (an RDMA READ or an atomic writes its "
                + "result into the local buffer)")
            .contains("wr_id 2 flushed: QP 0x11 is in ERR since wr_id 1 completed with IBV_WC_LOC_PROT_ERR");
    }

    @Test
    @DisplayName("https://github.com/openucx/ucx/issues/844: a send to a QP the peer destroyed exhausts its retries")
    void peerQpDestroyedInFlight()
    {
        assertThat(replay("48-peer-qp-destroyed-in-flight.rsim"))
            .contains("IBV_WC_RETRY_EXC_ERR vendor_err=0x15")
            .contains("the peer QP 0x11 on sim:beta/nic_b was destroyed while this QP still had work for it")
            .contains("fix: tear a connection down so that neither side destroys its QP (or exits) while the other "
                + "has work requests outstanding to it: a disconnect handshake")
            .doesNotContain("fix: connect both QPs to each other");
    }

    @Test
    @DisplayName("https://github.com/ydb-platform/nbs/issues/5729: a late READ of a reused buffer; a window stops it")
    void staleReadOfAReusedBuffer()
    {
        assertThat(replay("49-stale-read-of-reused-buffer.rsim"))
            .contains("expect bytes stage \"request R2 data\": held")
            .contains("names a type 2 window that is no longer bound: a LOCAL_INV or a SEND_WITH_INV from the peer "
                + "invalidated it (invalidated at 49-stale-read-of-reused-buffer.rsim:")
            .contains("fix: a peer must stop using a window's rkey once it is invalidated");
    }

    @Test
    @DisplayName("https://github.com/ofiwg/libfabric/issues/9739: EFA registers at most max_mr_pages pages an MR")
    void efaMaxMrPages()
    {
        assertThat(replay("50-efa-mr-pages.rsim"))
            .contains("-> ENOMEM: ibv_reg_mr: the MR needs 25427968 translation entries of 4096 bytes")
            .contains("the device's max_mr_pages, which efa_query_device reports as max_mr_size = max_mr_pages x 4 KiB")
            .contains("efa_com_comp_status_to_errno: ENOMEM").contains("back it with huge pages")
            .contains("expect mr2.page_size >= 2M: held");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/rdma-core/pull/660: RELAXED_ORDERING is optional, never refused")
    void relaxedOrderingIsOptional()
    {
        assertThat(replay("51-relaxed-ordering-optional.rsim"))
            .contains("expect nic_a.relaxed_ordering == 0: held").doesNotContain("-> E");
    }

    @Test
    @DisplayName("https://github.com/tarickb/the-geek-in-the-corner/pull/7: a SEND's source needs no access flag")
    void sendSourceNeedsNoAccessFlag()
    {
        assertThat(replay("52-send-needs-no-access-flags.rsim"))
            .contains("expect bytes dst \"a message\": held")
            .contains("the responder's receive wr_id 3 sge[0] lkey 0x00000201 lacks [LOCAL_WRITE]")
            .contains("fix: register the receive buffer's MR with [LOCAL_WRITE]")
            .contains("IBV_WC_REM_OP_ERR vendor_err=0x14");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/perftest/issues/114: max_rd_atomic from the peer's device is EINVAL")
    void maxRdAtomicFromThePeer()
    {
        assertThat(replay("53-max-rd-atomic-from-peer.rsim"))
            .contains("-> EINVAL: ibv_modify_qp: QP 0x11: max_rd_atomic=32 > max_qp_init_rd_atom=16")
            .contains("ask for at most the smaller of this device's max_qp_init_rd_atom and the peer's "
                + "max_dest_rd_atomic")
            .contains("expect qp_a.state == RTS: held");
    }

    @Test
    @DisplayName("https://github.com/kvcache-ai/Mooncake/pull/1567: RESET drops the receives a reconnection needs")
    void resetDropsReceives()
    {
        assertThat(replay("54-reset-drops-receives.rsim"))
            .contains("RESET dropped 2 posted receive(s) and 0 send work request(s) without completions")
            .contains("post the receives again once the QP is connected")
            .contains("expect nic_b.out_of_buffer >= 1: held").contains("expect SUCCESS: held");
    }

    @Test
    @DisplayName("https://github.com/spdk/spdk/issues/2253: on iWARP (Chelsio) a READ's sink needs REMOTE_WRITE")
    void iwarpReadSinkNeedsRemoteWrite()
    {
        assertThat(replay("55-iwarp-read-sink-remote-write.rsim"))
            .contains("IBV_WC_LOC_ACCESS_ERR").contains("is the sink of the RDMA READ, and cxgb4 places a READ "
                + "response as a tagged message into the sink's STag, which must grant REMOTE_WRITE")
            .contains("IBV_EVENT_QP_ACCESS_ERR on QP qp_t")
            .contains("fix: register the READ's sink with LOCAL_WRITE and REMOTE_WRITE on an iWARP device")
            .contains("expect bytes buf \"host write data\": held");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/perftest/issues/52: ibv_dealloc_pd is EBUSY while an MR is left")
    void deallocPdWithAnMrLeft()
    {
        assertThat(replay("56-dealloc-pd-with-mr-left.rsim"))
            .contains("-> EBUSY: ibv_dealloc_pd: the PD still has 1 MR(s)")
            .contains("the kernel frees a PD only when its use count is 0")
            .contains("MRs still registered on it: lkey 0x").contains("(4096 bytes at 0x")
            .contains("(ibv_dereg_mr each); destroy them first")
            .contains("ibv_dealloc_pd: the PD is freed");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/rdma-core/pull/1139: rxe refuses a receive posted in RESET")
    void rxeReceiveInReset()
    {
        assertThat(replay("57-rxe-recv-in-reset.rsim"))
            .contains("-> EINVAL: ibv_post_recv: wr[0]: QP 0x11 is in RESET; receives need INIT or later")
            .contains("modify the QP to INIT first").contains("expect q.receives == 1: held");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/perftest/issues/150: IBV_QP_AV in RTS is EINVAL; INIT -> RTR takes it")
    void addressVectorInRts()
    {
        assertThat(replay("58-av-in-rts.rsim"))
            .contains("-> EINVAL: ibv_modify_qp: QP 0x11 (RC, in RTS): RTS -> RTS of a RC QP does not take IBV_QP_AV")
            .contains("IBV_QP_AV is taken by INIT -> RTR, SQD -> SQD (ib_modify_qp_is_ok)")
            .contains("nothing changed").contains("expect qp_c.state == RTR: held");
    }

    @Test
    @DisplayName("https://github.com/madsys-dev/smart/issues/2: a RoCE address vector without a GRH is EINVAL")
    void roceAddressVectorWithoutGrh()
    {
        assertThat(replay("59-roce-av-without-grh.rsim"))
            .contains("-> EINVAL: ibv_modify_qp: QP 0x11: an address vector without a GID on an Ethernet (RoCE) port: "
                + "is_global is mandatory there (rdma_check_ah_attr); give the destination GID")
            .contains("expect qp_a.state == INIT: held").contains("expect qp_a.state == RTR: held");
    }

    @Test
    @DisplayName("https://github.com/NVIDIA/cudf-spark/pull/7632: a container's memlock limit fails ibv_create_cq")
    void containerMemlockFailsCreateCq()
    {
        assertThat(replay("60-container-memlock-cq.rsim"))
            .contains("-> ENOMEM: ibv_create_cq: pinned_vm=16384 pages + 128 > RLIMIT_MEMLOCK=16384 pages")
            .contains("pinned_vm counts every MR and CQ or QP ring the process pins")
            .contains("in a container the runtime sets the limit: docker run --ulimit memlock=-1");
    }

    @Test
    @DisplayName("https://github.com/MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/issues/259: a long-term pin "
        + "cannot migrate its pages out of movable memory")
    void longtermPinCannotMigrate()
    {
        assertThat(replay("61-longterm-pin-cma-migration.rsim"))
            .contains("-> ENOMEM: ibv_reg_mr: long-term pin must move the page at 0x")
            .contains("out of ZONE_MOVABLE but ZONE_NORMAL has no free frame")
            .contains("pin_user_pages with FOLL_LONGTERM first migrates pages out of ZONE_MOVABLE and CMA pageblocks")
            .contains("migrate_longterm_unpinnable_folios").contains("kho=off")
            .contains("expect app.pinned_vm == 0: held");
    }

    @Test
    @DisplayName("https://github.com/openucx/ucx/pull/9592: a merged registration across an unmapped hole is EFAULT")
    void mergedRegistrationAcrossAHole()
    {
        assertThat(replay("62-rcache-merge-across-gap.rsim"))
            .contains("-> EFAULT: ibv_reg_mr: SIGSEGV at 0x").contains("no VMA maps it")
            .contains("the range is mapped before and after a hole of 65536 bytes")
            .contains("must not register a union that spans unmapped memory (register the range asked for)")
            .doesNotContain("mmap the whole range first");
    }

    @Test
    @DisplayName("https://github.com/spdk/spdk/issues/974: SEND_WITH_INV cannot invalidate an ordinary MR's rkey")
    void sendWithInvalidateOfAnOrdinaryMr()
    {
        assertThat(replay("63-send-inv-ordinary-mr.rsim"))
            .contains("IBV_WC_REM_INV_REQ_ERR vendor_err=0x12")
            .contains("is the key of an ordinary MR").contains("which no work request can invalidate")
            .contains("register the pages with a fast-registration MR (ib_alloc_mr, IB_WR_REG_MR), as the kernel's "
                + "NVMe-oF host does")
            .contains("expect last.invalidated_rkey == fkey: held").contains("expect frmr.valid == 0: held");
    }

    @Test
    @DisplayName("https://github.com/ofiwg/libfabric/issues/11643: a READ at offset 0 of an MR that is not zero-based")
    void offsetGivenAsRemoteAddress()
    {
        assertThat(replay("64-offset-as-remote-address.rsim"))
            .contains("IBV_WC_REM_ACCESS_ERR vendor_err=0x13").contains("check RANGE")
            .contains("fix: 0x0 is an offset into the MR, not an address in it: an MR registered without "
                + "IBV_ACCESS_ZERO_BASED is addressed from its iova (0x")
            .contains("register it with IBV_ACCESS_ZERO_BASED to be addressed from 0")
            .contains("expect bytes dst \"target data\": held");
    }

    @Test
    @DisplayName("https://github.com/linux-rdma/rdma-core/pull/1106: irdma completes a retry-exceeded write with "
        + "IBV_WC_RETRY_EXC_ERR")
    void irdmaRetryExceededStatus()
    {
        assertThat(replay("65-irdma-retry-exceeded-status.rsim"))
            .contains("IBV_WC_RETRY_EXC_ERR vendor_err=0x0")
            .contains("no acknowledgement after retry_cnt=3 retries: the peer QP 0x11 on sim:beta/nic_b was destroyed")
            .contains("vendor_err 0: irdma reports the status only")
            .contains("fix: tear a connection down so that neither side destroys its QP")
            .doesNotContain("fix: connect both QPs to each other");
    }
}
