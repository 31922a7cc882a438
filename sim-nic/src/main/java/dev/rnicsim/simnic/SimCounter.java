package dev.rnicsim.simnic;

/**
 * The counters of a simulated device, each with the name it has on Linux where one exists (the sysfs port counters
 * under {@code /sys/class/infiniband/DEV/ports/1/counters/}, the mlx5 {@code hw_counters} beside them) and a unit.
 * MR statistics and translation-cache counters follow, with {@code sim_} names where Linux has none.
 *
 * <p>Immutable and thread safe.
 */
public enum SimCounter
{
    /** Payload sent, in 4-byte words, as the IB port counter. */
    PORT_XMIT_DATA("port_xmit_data", "4-byte words"),
    /** Payload received, in 4-byte words. */
    PORT_RCV_DATA("port_rcv_data", "4-byte words"),
    /** Packets sent (payload split at the path MTU, at least one per message). */
    PORT_XMIT_PACKETS("port_xmit_packets", "packets"),
    /** Packets received. */
    PORT_RCV_PACKETS("port_rcv_packets", "packets"),
    /** RDMA WRITE requests served as responder. */
    RX_WRITE_REQUESTS("rx_write_requests", "requests"),
    /** RDMA READ requests served as responder. */
    RX_READ_REQUESTS("rx_read_requests", "requests"),
    /** Atomic requests served as responder. */
    RX_ATOMIC_REQUESTS("rx_atomic_requests", "requests"),
    /** Requester completions with an error other than a flush. */
    REQ_CQE_ERROR("req_cqe_error", "completions"),
    /** Requester completions flushed. */
    REQ_CQE_FLUSH_ERROR("req_cqe_flush_error", "completions"),
    /** Responder completions with an error other than a flush. */
    RESP_CQE_ERROR("resp_cqe_error", "completions"),
    /** Responder completions flushed. */
    RESP_CQE_FLUSH_ERROR("resp_cqe_flush_error", "completions"),
    /** NAKs "remote access error" received by the requester. */
    REQ_REMOTE_ACCESS_ERRORS("req_remote_access_errors", "NAKs"),
    /** NAKs "invalid request" received by the requester. */
    REQ_REMOTE_INVALID_REQUEST("req_remote_invalid_request", "NAKs"),
    /** Remote access errors detected as responder. */
    RESP_REMOTE_ACCESS_ERRORS("resp_remote_access_errors", "errors"),
    /** Receives too small, detected as responder. */
    RESP_LOCAL_LENGTH_ERROR("resp_local_length_error", "errors"),
    /** Responder: each request dropped because no receive was posted, each answered with an RNR NAK (mlx5: "drops
     * occurred due to lack of WQE"). A send that runs out of rnr_retry=N was dropped N+1 times. */
    OUT_OF_BUFFER("out_of_buffer", "requests"),
    /** Requester: each RNR NAK received while the retry limit was not exceeded, i.e. answered with a retry (mlx5
     * counters.c; the NAK that exhausts rnr_retry counts in {@link #RNR_RETRIES_EXCEEDED}). */
    RNR_NAK_RETRY_ERR("rnr_nak_retry_err", "NAKs"),
    /** Requester: each expiry of the ACK timer while the retry limit was not exceeded, i.e. followed by a
     * retransmission (mlx5; rxe counts the same retries as completer_retry_err). */
    LOCAL_ACK_TIMEOUT_ERR("local_ack_timeout_err", "timeouts"),
    /** Requester: work requests failed with IBV_WC_RNR_RETRY_EXC_ERR (mlx5 req_rnr_retries_exceeded, Linux 6.11;
     * rxe retry_rnr_exceeded_err). */
    RNR_RETRIES_EXCEEDED("req_rnr_retries_exceeded", "work requests"),
    /** Requester: work requests failed with IBV_WC_RETRY_EXC_ERR (mlx5 req_transport_retries_exceeded, Linux 6.11;
     * rxe retry_exceeded_err). */
    TRANSPORT_RETRIES_EXCEEDED("req_transport_retries_exceeded", "work requests"),
    /** Requester: SEND work requests completed, in error too but not flushed (rxe rdma_sends, counted in the
     * completer's do_complete). */
    SENDS_COMPLETED("sim_sends_completed", "work requests"),
    /** Responder: receives completed successfully (rxe rdma_recvs, counted in the responder's do_complete). */
    RECVS_COMPLETED("sim_recvs_completed", "work requests"),
    /** Responder of RC: ACK and NAK packets sent, no payload (a requester asks for an ACK on the last packet of a
     * message and on every 66th before it: rxe_req.c init_req_packet, noack_pkts above RXE_MAX_PKT_PER_ACK 64; a
     * READ is answered by its responses, an atomic by its ATOMIC ACKNOWLEDGE, both counted as data packets). */
    ACKS_SENT("sim_acks_sent", "packets"),
    /** Requester of RC: ACK and NAK packets received. */
    ACKS_RECEIVED("sim_acks_received", "packets"),
    /** MRs registered now. */
    MR_LIVE("sim_mr_live", "MRs"),
    /** Bytes pinned by live MRs and queue rings. */
    PINNED_BYTES("sim_pinned_bytes", "bytes"),
    /** MTT entries reserved by live MRs (after allocator rounding). */
    MTT_ENTRIES_IN_USE("sim_mtt_entries_in_use", "entries"),
    /** Successful registrations. */
    MR_REGISTRATIONS("sim_mr_registrations", "MRs"),
    /** Deregistrations. */
    MR_DEREGISTRATIONS("sim_mr_deregistrations", "MRs"),
    /** Failed registrations. */
    MR_REGISTRATION_FAILURES("sim_mr_registration_failures", "calls"),
    /** Translation-cache hits. */
    TRANSLATION_CACHE_HITS("sim_translation_cache_hits", "lookups"),
    /** Translation-cache misses (each an MPT or MTT fetch over PCIe). */
    TRANSLATION_CACHE_MISSES("sim_translation_cache_misses", "lookups"),
    /** Translation-cache invalidations (one per deregistration or key change). */
    TRANSLATION_CACHE_INVALIDATIONS("sim_translation_cache_invalidations", "invalidations"),
    /** Bytes the DMA engine moved as requester. */
    DMA_BYTES("sim_dma_bytes", "bytes"),
    /** Key translations the DMA engine performed as requester. */
    DMA_TRANSLATIONS("sim_dma_translations", "translations"),
    /** Memory-window binds that completed (unbinds included). */
    MW_BINDS("sim_mw_binds", "binds"),
    /** Key invalidations other than deregistration: window binds and invalidations, LOCAL_INV, SEND_WITH_INV,
     * rereg. */
    KEY_INVALIDATIONS("sim_key_invalidations", "invalidations"),
    /** Fast registrations (REG_MR work requests) that completed. */
    FAST_REGISTRATIONS("sim_fast_registrations", "registrations"),
    /** ibv_rereg_mr calls that succeeded. */
    MR_REREGISTRATIONS("sim_mr_reregistrations", "calls"),
    /** Device page faults on ODP MRs resolved or failed (mlx5 {@code rdma statistic mr}: page_faults). */
    ODP_PAGE_FAULTS("page_faults", "faults"),
    /** Device page faults that could not be resolved (the work request completed in error). */
    ODP_PAGE_FAULT_FAILURES("sim_odp_page_fault_failures", "faults"),
    /** Page-table walks redone because an invalidation raced with them ({@code mmu_interval_read_retry}). */
    ODP_FAULT_RETRIES("sim_odp_fault_retries", "walks"),
    /** MTT entries of ODP MRs zapped by MMU-notifier invalidations (mlx5: page_invalidations). */
    ODP_PAGE_INVALIDATIONS("page_invalidations", "entries"),
    /** MTT entries of ODP MRs mapped by ibv_advise_mr prefetches (mlx5: page_prefetch). */
    ODP_PAGE_PREFETCH("page_prefetch", "entries"),
    /** MTT entries of ODP MRs mapped by faults, prefetches and registration snapshots. */
    ODP_ENTRIES_MAPPED("sim_odp_entries_mapped", "entries"),
    /** RNR NAKs the responder sent while it handled a page fault. */
    ODP_RNR_NAKS("sim_odp_rnr_naks", "NAKs"),
    /** ODP MRs live (explicit and implicit). */
    ODP_MR_LIVE("sim_odp_mr_live", "MRs"),
    /**
     * RNR NAKs a requester took and retried after (one per wait of the responder's min_rnr_timer, within
     * rnr_retry; IBA vol. 1 ch. 9.7, RNR NAK). mlx5 reports these events in {@code rnr_nak_retry_err} and the exhaustion in
     * {@code req_rnr_retries_exceeded} (kernel commit b339e0a, "RDMA/mlx5: Add Qcounters
     * req_transport_retries_exceeded/req_rnr_retries_exceeded"); this model's {@code rnr_nak_retry_err} counts
     * the exhaustion.
     */
    RNR_RETRIES("sim_rnr_retries", "NAKs"),
    /**
     * Transport retries: ACK timeouts a requester retried after (within retry_cnt; IBA vol. 1 ch. 9.7, ACK timeout and retry counter), before it gave
     * up with IBV_WC_RETRY_EXC_ERR; this model's {@code local_ack_timeout_err} counts the giving up.
     */
    TRANSPORT_RETRIES("sim_transport_retries", "timeouts");

    private final String label;
    private final String unit;

    SimCounter(final String label, final String unit)
    {
        this.label = label;
        this.unit = unit;
    }

    /**
     * @return the counter's file or statistic name.
     */
    public String label()
    {
        return label;
    }

    /**
     * @return its unit.
     */
    public String unit()
    {
        return unit;
    }
}
