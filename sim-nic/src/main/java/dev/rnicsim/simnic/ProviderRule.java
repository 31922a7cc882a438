package dev.rnicsim.simnic;

/**
 * Behaviours in which real providers differ (rdma-core's providers and the kernel drivers rxe and mlx5), switched on per device profile.
 *
 * <p>Immutable and thread safe.
 */
public enum ProviderRule
{
    /** An MR without remote rights gets rkey 0: the rkey exists only with REMOTE_READ, REMOTE_WRITE or
     * REMOTE_ATOMIC (rxe, {@code rxe_mr_init}; qedr, {@code qedr_reg_user_mr}). Without it, rkey == lkey always
     * (mlx4, mlx5, siw). */
    RKEY_ONLY_WITH_REMOTE_ACCESS,
    /** Posting an atomic on a QP created without atomics fails with EOPNOTSUPP at post: mlx5 sets a QP's
     * {@code atomics_enabled} when it creates the QP, from the context's atomic_cap being ATOMIC_HCA, not from the
     * QP's qp_access_flags (providers/mlx5/verbs.c {@code create_qp}; checked in qp.c {@code _mlx5_post_send}), so an
     * XRC_SEND QP with qp_access_flags 0 posts atomics (rdma-core tests/test_atomic.py XRC cases). */
    ATOMICS_NEED_QP_ATOMIC_ACCESS,
    /** A misaligned remote address of an atomic is refused at post time with EINVAL (rxe provider) instead of
     * failing at the responder with IBV_WC_REM_INV_REQ_ERR. */
    ATOMIC_ALIGNMENT_AT_POST,
    /** Inline data longer than the QP's {@code max_inline_data} is refused with ENOMEM (mlx5 provider,
     * {@code set_data_inl_seg}); without this rule, EINVAL (rxe). */
    INLINE_OVERFLOW_ENOMEM,
    /** A send-queue slot is given back only when {@code ibv_poll_cq} returns the completion of its WQE or of a later
     * one: the provider moves the queue's tail at poll time (libmlx5 {@code mlx5_parse_cqe}, libmlx4 {@code
     * mlx4_poll_one}, libirdma {@code irdma_uk_cq_poll_cmpl}) and {@code ibv_post_send} is ENOMEM on a full queue
     * ({@code mlx5_wq_overflow}, {@code wq_overflow}, {@code IRDMA_RING_FULL_ERR}), so finished work whose completion
     * was not polled, and unsignaled work requests with no signaled one polled after them, still fill it. Without this
     * rule a slot is free once the device finished the WQE (rxe's completer advances the send queue's consumer index;
     * siw clears the WQE's valid flag). See {@link SendSlots}. */
    SEND_QUEUE_FREED_AT_POLL,
    /** {@code ibv_get_srq_num} answers the number of any SRQ, basic ones too (mlx5 {@code mlx5_get_srq_num}, which
     * keeps it for DC users as well). Without this rule a basic SRQ has none: EOPNOTSUPP (mlx4
     * {@code mlx4_get_srq_num} answers only an SRQ of an XRC domain; a provider without XRC, such as rxe, has no
     * {@code get_srq_num}, and libibverbs' stand-in answers EOPNOTSUPP for every SRQ). See {@link SimSrq#srqNum()}. */
    SRQ_NUM_OF_ANY_SRQ,
    /** An unknown or stale lkey in a send's gather list (or one of another PD, or of an MR not valid) completes with
     * IBV_WC_LOC_QP_OP_ERR, and a bad receive buffer completes the receive with IBV_WC_LOC_QP_OP_ERR (rxe:
     * {@code copy_data}'s failed {@code lookup_mr} is -EINVAL, which {@code rxe_req.c} maps to LOC_QP_OP_ERR;
     * RESPST_ERR_MALFORMED_WQE in {@code rxe_resp.c}); without this rule both are IBV_WC_LOC_PROT_ERR (mlx5). */
    LOCAL_KEY_ERRORS_AS_QP_OP_ERR,
    /** ibv_rereg_mr with CHANGE_TRANSLATION fails with EOPNOTSUPP: only PD and access changes are implemented (rxe,
     * {@code rxe_rereg_user_mr}). */
    REREG_TRANSLATION_UNSUPPORTED,
    /** ibv_rereg_mr is EOPNOTSUPP with IBV_REREG_MR_ERR_INPUT after libibverbs' own input checks: the provider library
     * sets no {@code rereg_mr} operation, so libibverbs' stand-in ({@code libibverbs/dummy_ops.c}) answers. In rdma-core
     * 44 only the mlx4, mlx5 and hns providers have one (they alone import {@code ibv_cmd_rereg_mr}: {@code
     * mlx4_rereg_mr}, {@code mlx5_rereg_mr}, {@code hns_roce_u_rereg_mr}); librxe, libsiw, libbnxt_re, libefa, libqedr,
     * liberdma, libmana, libcxgb4, libhfi1verbs and libirdma do not ({@code verbs_context_ops} without
     * {@code .rereg_mr}; irdma's {@code irdma_urereg_mr} came in a later rdma-core). The bnxt_re and siw kernel drivers
     * have no {@code rereg_user_mr} either. Nothing reaches the kernel, so the MR is unchanged. */
    REREG_MR_UNSUPPORTED,
    /** The rdma-core 44 provider has no {@code reg_dmabuf_mr} although the kernel driver registers dma-bufs: a C
     * program's {@code ibv_reg_dmabuf_mr} gets libibverbs' EOPNOTSUPP before any argument is looked at (of the
     * distribution's rdma-core 44 providers only libmlx5 and libefa import {@code ibv_cmd_reg_dmabuf_mr}; libbnxt_re
     * gained it in a later release). The model's Java verb follows the kernel driver. */
    DMABUF_MR_NOT_IN_PROVIDER,
    /** {@code ibv_modify_qp} to RESET removes the QP's completions still in its send and receive CQs, as the provider
     * cleans them after the kernel command succeeded (mlx4 {@code mlx4_modify_qp} calling {@code mlx4_cq_clean}, mlx5
     * {@code mlx5_modify_qp} calling {@code mlx5_cq_clean}, hns {@code hns_roce_u_v2_modify_qp} calling {@code
     * hns_roce_v2_cq_clean} in providers/hns/hns_roce_u_hw_v2.c). Without this rule they stay to be polled (rxe and siw
     * keep the CQ in the kernel, whose {@code rxe_qp_reset} and {@code siw_qp_modify} leave it as it is). */
    RESET_CLEANS_CQ,
    /** {@code ibv_modify_qp} with IBV_QP_CUR_STATE naming a state the QP is not in is EINVAL. mlx4 and mlx5 take cur_qp_state as the state to move from ({@code _mlx4_ib_modify_qp},
     * {@code mlx5_ib_modify_qp}: {@code cur_state = attr_mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state}),
     * check that transition with {@code ib_modify_qp_is_ok}, then send the firmware the command of that transition
     * ({@code __mlx5_ib_modify_qp}'s {@code optab[cur][new]}, {@code mlx4_qp_modify}'s {@code op[cur][new]}); the
     * device refuses a command for a state its QP is not in with a bad-QP-state status, which the drivers answer
     * with EINVAL ({@code MLX5_CMD_STAT_BAD_QP_STATE_ERR} in mlx5's {@code cmd_status_to_err}, {@code
     * CMD_STAT_BAD_QP_STATE} in {@code mlx4_status_to_errno}); no transition to RESET or ERR takes IBV_QP_CUR_STATE
     * in the table, so their commands (taken from any state) never meet a wrong one. (The
     * firmware's check itself is not published; its status codes and their errno are.) Without this rule (rxe:
     * {@code rxe_qp_chk_attr} checks the claimed transition against the table only, then {@code rxe_qp_from_attr}
     * moves the QP from where it is), a valid claimed transition is accepted. */
    CUR_QP_STATE_CHECKED_BY_FIRMWARE,
    /** A QP moved to RESET keeps the attributes it was given, and {@code ibv_query_qp} reports them with the state
     * RESET: rxe's {@code rxe_qp_reset} resets the requester and responder (their tasks, opcodes, the read/atomic
     * resources) but leaves {@code qp->attr}, {@code qp->pri_av} and the retry counters, which {@code rxe_qp_to_attr}
     * copies out. Without this rule the attributes read as 0 after RESET: mlx4's {@code mlx4_ib_query_qp} fills only
     * the state and the capabilities of a QP in RESET, and mlx5's {@code mlx5_ib_query_qp} zeroes the answer and
     * reads the device's QP context, which the 2RST_QP command resets (assumed: the context's contents after 2RST_QP
     * are not published). The other drivers are modelled as mlx5 (assumed). */
    RESET_KEEPS_QP_ATTRS,
    /** {@code ibv_post_recv} on a QP that takes its receives from an SRQ is refused with ENOMEM: mlx4 and mlx5 give
     * such a QP a receive queue of 0 entries ({@code mlx4_create_qp}, {@code mlx5_calc_rq_size}), which their
     * {@code post_recv} finds full before anything else ({@code wq_overflow}, {@code mlx5_wq_overflow}). Without this
     * rule, EINVAL (rxe's {@code post_recv} refuses a QP with an SRQ). */
    RECV_ON_SRQ_QP_ENOMEM,
    /** ibv_modify_qp with IBV_QP_ACCESS_FLAGS refuses (EINVAL) a flag outside {@code RXE_ACCESS_SUPPORTED_QP}, which
     * is rxe's MR set: every flag but ZERO_BASED and HUGETLB ({@code rxe_qp_chk_attr}). Without this rule no flag is
     * refused: uverbs passes qp_access_flags on unchecked and mlx4, mlx5 read only the remote bits ({@code
     * to_mlx5_access_flags}), so ON_DEMAND or MW_BIND in qp_access_flags is accepted (rdma-core tests/test_odp.py
     * gives the MR's access, ON_DEMAND included, to its RC QPs). */
    QP_ACCESS_FLAGS_CHECKED,
    /** ibv_rereg_mr with CHANGE_TRANSLATION gives the MR a new mkey, so new lkey and rkey (mlx5: a translation that
     * UMR cannot rewrite in place is registered anew). Without this rule (and without
     * {@link #REREG_TRANSLATION_UNSUPPORTED}) the key survives (mlx4 edits the MPT in place, {@code
     * mlx4_ib_rereg_user_mr}). PD and access changes keep the key on every device. */
    REREG_TRANSLATION_NEW_KEY,
    /** ibv_bind_mw and a posted BIND_MW check the bind at post time: a zero-based window or MR is EINVAL, a window
     * longer than 2 GiB EOPNOTSUPP (rdma-core providers/mlx5/qp.c {@code mlx5_bind_mw}, {@code set_bind_wr}: "KLM
     * support only 2GB"). Without this rule those binds are posted and complete with IBV_WC_MW_BIND_ERR (rxe). */
    MW_BIND_CHECKED_AT_POST,
    /** LOCAL_INV and a received SEND_WITH_INV invalidate a type 2 window only from the QP it is bound to, and a
     * fast-registration MR only from a QP of its PD (mlx5 posts them as UMRs with {@code
     * MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN}); otherwise the work request completes with IBV_WC_LOC_QP_OP_ERR (or the
     * SEND_WITH_INV with IBV_WC_REM_INV_REQ_ERR). Without this rule any QP of the device may (rxe's
     * {@code rxe_invalidate_mw} and {@code rxe_invalidate_mr} check neither). */
    INVALIDATION_CHECKS_OWNER,
    /** ibv_reg_dmabuf_mr registers a dynamic attachment: the exporter may move the buffer, its {@code move_notify}
     * zaps the MR's translation and the next access faults and re-maps it (mlx5: {@code mlx5_ib_reg_user_mr_dmabuf},
     * {@code mlx5_ib_dmabuf_invalidate_cb}, {@code pagefault_dmabuf_mr}). */
    DMABUF_DYNAMIC,
    /** ibv_reg_dmabuf_mr pins the dma-buf ({@code ib_umem_dmabuf_get_pinned}): for devices that cannot take an
     * invalidation; the exporter cannot move it while the MR lives. Without this rule and {@link #DMABUF_DYNAMIC}
     * the verb is EOPNOTSUPP (the driver has no {@code reg_user_mr_dmabuf}). */
    DMABUF_PINNED,
    /** IBV_ACCESS_RELAXED_ORDERING is applied to DMA reads too (mlx5 sets the read bit only when the device reports
     * the relaxed_ordering_read capability, mr.c {@code set_mkc_access_pd_addr_fields}); write is
     * {@link DeviceProfile#relaxedOrdering()}. */
    RELAXED_ORDERING_READ,
    /** The device applies relaxed ordering on a platform whose PCIe root complex does not keep the ordering rules
     * for it (the kernel's {@code quirk_relaxedordering_disable} list, e.g. Intel Xeon E5 v3/v4 root ports, where
     * {@code pcie_relaxed_ordering_enabled} is false and drivers leave it off), because it was forced on: a write
     * may then overtake earlier writes even when it is not relaxed itself. */
    RELAXED_ORDERING_UNSAFE_PLATFORM,
    /** The responder of an RDMA WRITE or READ takes a reference on the MR (or window) when it checks the rkey on the
     * message's first packet and drops it when the message is done, and a key's retirement waits for the references
     * to drop: ibv_dereg_mr, ibv_dealloc_mw, LOCAL_INV, a received SEND_WITH_INV and a rebind return (or complete)
     * only after the message holding the key has placed its last packet (rxe: {@code check_rkey} in rxe_resp.c
     * keeps {@code qp->resp.mr}; {@code rxe_dereg_mr} ends in {@code rxe_cleanup}, which waits for the pool
     * element's references). Without this rule (mlx5) the retirement destroys the mkey at once and the packets that
     * follow are NAKed with a remote access error; those already placed stay placed ({@code mlx5_ib_dereg_mr}
     * destroys the mkey; the HCA checks each packet against the mkey context). */
    RESPONDER_HOLDS_KEY_REFERENCE,
    /** The receive of an RC SEND longer than its receive buffers completes with the status of the class C error the
     * responder NAKs, IBV_WC_REM_INV_REQ_ERR (rxe_resp.c: {@code send_data_in} answers RESPST_ERR_LENGTH when {@code
     * copy_data} returns -ENOSPC, and {@code rxe_responder} handles it with {@code do_class_ac_error(qp,
     * AETH_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR)}, which {@code do_complete} writes into the receive's CQE). Without
     * this rule the receive completes with IBV_WC_LOC_LEN_ERR (mlx5: CQE syndrome MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR,
     * mapped by {@code mlx5_handle_error_cqe} in providers/mlx5/cq.c). The requester's status is
     * {@link SendOverflow#requesterStatus}. */
    RECEIVE_OVERFLOW_AS_INVALID_REQUEST,
    /** The driver's MR access mask has neither ZERO_BASED nor HUGETLB: a registration asking for either fails with
     * EOPNOTSUPP after the core's checks (rxe: {@code RXE_ACCESS_SUPPORTED_MR} in rxe_verbs.h, checked by
     * {@code rxe_reg_user_mr}). */
    MR_ACCESS_WITHOUT_ZERO_BASED_OR_HUGETLB,
    /** ibv_alloc_null_mr is implemented (mlx5: {@code mlx5_alloc_null_mr} with the device's dump-fill mkey); without
     * this rule the provider has no alloc_null_mr and the verb is EOPNOTSUPP. */
    NULL_MR,
    /** Device memory (ibv_alloc_dm, ibv_reg_dm_mr, ibv_memcpy_to/from_dm: mlx5 MEMIC) of
     * {@link DeviceProfile#maxDmSizeBytes()}; without this rule max_dm_size is 0 and the verbs are EOPNOTSUPP. */
    DEVICE_MEMORY,
    /** An MR asking for IBV_ACCESS_FLUSH_PERSISTENT must lie in persistent memory: a page that is not is EINVAL after
     * the pin (rxe: {@code rxe_mr_fill_pages_from_sgt}, {@code is_pmem_page}). The simulated hosts have no persistent
     * memory, so on such a driver the flag is always refused. */
    FLUSH_PERSISTENT_NEEDS_PMEM,
    /** The requester posts an RDMA WRITE or READ longer than 2^31 and the responder refuses its first packet: RETH DMA
     * length above 2^31 is RESPST_ERR_LENGTH, a NAK "invalid request", so the requester completes with
     * IBV_WC_REM_INV_REQ_ERR and the responder QP goes to the error state (rxe: no length check on a user QP's post,
     * {@code rxe_resp_check_length} in rxe_resp.c, IBA C9-94). Without this rule the requester refuses a message above
     * max_msg_sz itself with IBV_WC_LOC_LEN_ERR and nothing is sent. */
    MESSAGE_LENGTH_CHECKED_BY_RESPONDER,
    /** With {@link #LOCAL_KEY_ERRORS_AS_QP_OP_ERR}: a gather-list SGE outside its MR also completes with
     * IBV_WC_LOC_QP_OP_ERR, because {@code mr_check_range} answers -EINVAL (rxe_mr.c of current kernels; older ones
     * answered -EFAULT, which rxe_req.c maps to IBV_WC_LOC_PROT_ERR). */
    GATHER_RANGE_ERRORS_AS_QP_OP_ERR,
    /** The kernel predates IBV_ACCESS_FLUSH_GLOBAL and _PERSISTENT (Linux 6.2): bits 8 and 9 lie outside its
     * {@code IB_ACCESS_SUPPORTED}, so {@code ib_check_mr_access} answers EINVAL for them, not EOPNOTSUPP (rdma-core
     * tests/test_qpex.py skips on that EINVAL: "not supported in kernel"). */
    KERNEL_WITHOUT_FLUSH_ACCESS,
    /** {@code ibv_create_qp_ex} with send_ops_flags takes mlx5's table (rdma-core providers/mlx5/qp.c
     * {@code mlx5_qp_fill_wr_pfns}, {@code MLX5_SUPPORTED_SEND_OPS_FLAGS_*}): RC SEND, SEND_WITH_INV, SEND_WITH_IMM,
     * RDMA WRITE (with immediate), RDMA READ, both atomics (only where the device has atomics), LOCAL_INV and BIND_MW;
     * UC the same without READ and atomics; UD SEND and SEND_WITH_IMM; no FLUSH and no ATOMIC_WRITE. Anything else is
     * EOPNOTSUPP. See {@link SendOps}. */
    SEND_OPS_MLX5,
    /** {@code ibv_create_qp_ex} with send_ops_flags takes the rxe provider's table (rdma-core providers/rxe/rxe.c
     * {@code check_qp_init_attr}, {@code RXE_SUP_*_QP_SEND_OPS_FLAGS}): RC SEND, SEND_WITH_IMM, SEND_WITH_INV, RDMA
     * WRITE (with immediate), RDMA READ, both atomics, LOCAL_INV, BIND_MW, and FLUSH and ATOMIC_WRITE where the device
     * reports them; UC SEND, SEND_WITH_IMM, SEND_WITH_INV, RDMA WRITE (with immediate) and BIND_MW (no LOCAL_INV);
     * UD SEND and SEND_WITH_IMM. Anything else is EOPNOTSUPP. See {@link SendOps}. */
    SEND_OPS_RXE,
    /** {@code ibv_post_send} on a UD QP takes any opcode: mlx5's {@code _mlx5_post_send} adds the datagram segment
     * to the WQE and checks no opcode for the QP type (it checks the opcode against its table's size, the queue's
     * room and num_sge only), so an RDMA or atomic work request on a UD QP is posted and the device refuses the WQE:
     * IBV_WC_LOC_QP_OP_ERR, the QP to the error state (the device's status is assumed: it is not in public code).
     * Without this rule (or {@link #OPCODES_CHECKED_BY_RXE_REQUESTER}) it is EINVAL at post. See
     * {@link QpTypeOpcodes}. */
    UD_OPCODES_UNCHECKED_AT_POST,
    /** A send work request with more SGEs than the QP's send queue takes is refused with ENOMEM: mlx5's
     * {@code _mlx5_post_send} answers {@code num_sge > max_gs} with ENOMEM (its receive side, {@code mlx5_post_recv},
     * with EINVAL). Without this rule, EINVAL (rxe {@code validate_send_wr}). */
    SEND_SGE_OVERFLOW_ENOMEM,
    /** {@code vendor_err} of an error completion carries a byte of the error CQE: the mlx4 and mlx5 providers copy it
     * ({@code mlx4_handle_error_cqe}, {@code mlx5_handle_error_cqe}); the model gives the CQE error syndrome
     * ({@code MLX5_CQE_SYNDROME_*}) there, as the firmware's own byte is not published. Without this rule
     * {@code vendor_err} is 0 and the device says nothing beyond the status (rxe {@code rxe_comp.c make_send_cqe}
     * and {@code rxe_resp.c do_complete} set no vendor error; siw and irdma neither). */
    VENDOR_ERR_CQE_SYNDROME,
    /** {@code ibv_query_qp_data_in_order} with flags 0 answers 1 for a QP in RTS: mlx5's
     * {@code mlx5_query_qp_data_in_order} (providers/mlx5/verbs.c) reads the {@code data_in_order} bit of the QP's
     * context when the device reports the {@code qp_data_in_order} capability (assumed reported: the simulated device
     * writes each message's bytes in order), and answers 0 in any other state. Without this rule the provider has no
     * {@code query_qp_data_in_order} and libibverbs' default answers 0 (rxe, siw, bnxt_re, efa, the rest). See
     * {@link SimQp#dataInOrder}. */
    QP_DATA_IN_ORDER,
    /** {@code ibv_create_qp_ex} takes {@code IBV_QP_CREATE_BLOCK_SELF_MCAST_LB} in create_flags (mlx5
     * {@code process_create_flags} with the {@code block_lb_mc} capability; mlx4 {@code
     * MLX4_IB_QP_BLOCK_MULTICAST_LOOPBACK}); without this rule every create flag is EOPNOTSUPP (rxe {@code
     * rxe_create_qp}). See {@link QpCreateFlags}. */
    BLOCK_MULTICAST_LOOPBACK,
    /** {@code ibv_create_srq} takes max_wr 0 and max_sge 0: mlx5 sizes the queue to {@code max_wr + 1} rounded up
     * to a power of two (providers/mlx5/verbs.c {@code mlx5_create_srq}, kernel {@code mlx5_ib_create_srq}) and
     * checks only the upper limits. Without this rule max_wr 0 is EINVAL (rxe {@code rxe_srq_chk_init}). */
    SRQ_OF_ZERO_WR,
    /** The provider takes the buffer allocation type of a QP, CQ or SRQ from {@code MLX_QP_ALLOC_TYPE},
     * {@code MLX_CQ_ALLOC_TYPE} and {@code MLX_SRQ_ALLOC_TYPE} in the environment (mlx5: providers/mlx5/buf.c
     * {@code mlx5_get_alloc_type}, read by {@code create_cq}, {@code create_qp} and {@code mlx5_create_srq}); {@code
     * HUGE} takes the buffer from the hugetlb pool and fails the create (ENOMEM) when the pool has no page for it
     * ({@code alloc_huge_buf}, no fallback). Without this rule the variables mean nothing to the provider (the other
     * providers read none of them). */
    QUEUE_ALLOC_TYPE_FROM_ENV,
    /** The provider sets no {@code create_qp_ex}: {@code ibv_create_qp_ex} with any {@code comp_mask} but
     * IBV_QP_INIT_ATTR_PD alone (send_ops_flags for the {@code ibv_wr_*} API among them) is answered by libibverbs'
     * stand-in with EOPNOTSUPP (verbs.h {@code ibv_create_qp_ex}: PD alone goes to {@code ibv_create_qp}, else the
     * provider's op, {@code dummy_ops.c} when there is none). rdma-core 44's libbnxt_re, libcxgb4, liberdma,
     * libhfi1verbs, libirdma and libsiw create QPs with {@code ibv_cmd_create_qp} only (no {@code
     * ibv_cmd_create_qp_ex}/{@code _ex2} import, no {@code create_qp_ex} in their {@code verbs_context_ops}), so they
     * build no {@code ibv_wr_*} function. See {@link SendOps}. */
    CREATE_QP_EX_UNSUPPORTED,
    /** Hardware tag matching on RC with rendezvous offload (ConnectX-5 and later: the {@code tag_matching} and
     * {@code rndv_offload_rc} capabilities, which {@code mlx5_ib_query_device} reports as {@code tm_caps}): SRQs of
     * type IBV_SRQT_TM and {@code ibv_post_srq_ops}. See {@link TagMatchingCaps} and {@link TagMatchingList};
     * without this rule {@code tm_caps} is all 0. */
    TAG_MATCHING,
    /** {@code ibv_create_qp_ex} with send_ops_flags takes libhns's table (providers/hns/hns_roce_u_hw_v2.c
     * {@code fill_send_wr_ops}, {@code HNS_SUPPORTED_SEND_OPS_FLAGS_RC_XRC} and {@code _UD}): RC and XRC_SEND SEND,
     * SEND_WITH_INV, SEND_WITH_IMM, RDMA WRITE (with immediate), RDMA READ and both atomics, no LOCAL_INV and no
     * BIND_MW; UD SEND and SEND_WITH_IMM; no other QP type. Anything else is EOPNOTSUPP. See {@link SendOps}. */
    SEND_OPS_HNS,
    /** The provider has a {@code create_qp_ex} but takes no {@code IBV_QP_INIT_ATTR_SEND_OPS_FLAGS}: mlx4's
     * {@code create_qp_ex} (providers/mlx4/verbs.c) refuses a comp_mask outside {@code MLX4_CREATE_QP_SUP_COMP_MASK}
     * (PD, XRCD, CREATE_FLAGS and, in rdma-core 44's build, MAX_TSO_HEADER: the test is {@code comp_mask > 0xf} once
     * RX_HASH and IND_TABLE have taken their RSS path) with errno ENOTSUP, EOPNOTSUPP on Linux (read from the
     * disassembly of Debian's 44.0-2 libmlx4-rdmav34.so; older sources returned NULL without setting errno), so it
     * builds no {@code ibv_wr_*} function whatever the flags; XRC and create_flags are taken. Its queue-size checks
     * come first: a cap past max_qp_wr, max_sge or 1024 inline bytes is EINVAL. See {@link SendOps}. */
    CREATE_QP_EX_WITHOUT_SEND_OPS,
    /** Memory windows although the device reports max_mw 0: mlx4's {@code mlx4_ib_query_device} sets the MEM_WINDOW
     * and MEM_WINDOW_TYPE_2B flags from the firmware's capabilities but never max_mw, while the driver registers
     * {@code alloc_mw} ({@code mlx4_ib_dev_mw_ops}, drivers/infiniband/hw/mlx4/main.c) and {@code mlx4_mw_alloc}
     * takes the window's MPT entry from the table MRs use; libmlx4 has {@code mlx4_alloc_mw} and {@code
     * mlx4_bind_mw}. So ibv_alloc_mw works, bounded by the MPT (max_mr, shared with MRs), not by max_mw. Without this
     * rule max_mw 0 means no windows: EOPNOTSUPP. See {@link MwAllocation}. */
    WINDOWS_WITHOUT_MAX_MW,
    /** {@code ibv_modify_qp} with a {@code timeout} above 31 is EINVAL (rxe {@code rxe_qp_chk_attr}: "invalid
     * timeout"). Without this rule its low 5 bits are kept (mlx5 {@code __mlx5_ib_modify_qp}: {@code MLX5_SET} of the
     * 5-bit {@code ack_timeout}). See {@link QpAttrValues}. */
    QP_TIMEOUT_CHECKED,
    /** {@code retry_cnt}, {@code rnr_retry} and {@code min_rnr_timer} are kept as given (the u8 of {@code struct
     * ibv_qp_attr}): rxe {@code rxe_qp_from_attr} stores them in {@code qp->attr} and its completer counts the retries
     * down from them ({@code rxe_comp.c}: only 7 retries forever), so {@code ibv_query_qp} answers them as given.
     * Without this rule they are masked to their fields' widths, 3, 3 and 5 bits (mlx5 {@code __mlx5_ib_modify_qp}:
     * {@code MLX5_SET(qpc, qpc, retry_count / rnr_retry / min_rnr_nak, ...)}). See {@link QpAttrValues}. */
    QP_RETRY_FIELDS_KEPT_WHOLE,
    /** {@code max_dest_rd_atomic} is not checked against the device's {@code max_qp_rd_atom}: rxe's {@code
     * rxe_qp_chk_attr} checks only {@code max_rd_atomic}, and {@code rxe_qp_from_attr} allocates as many responder
     * resources as asked (rounded up to a power of two). Without this rule a larger value is EINVAL (mlx5 {@code
     * validate_rd_atomic}, mlx4 {@code mlx4_ib_modify_qp}). */
    DEST_RD_ATOMIC_UNCHECKED,
    /** {@code ibv_dereg_mr} of an MR that memory windows are bound to succeeds, and the windows stop translating (an
     * access through one is refused like one through an invalid key): mlx5 counts no windows of an MR
     * ({@code mlx5_ib_dereg_mr} revokes or destroys the mkey, which the windows' indirect mkeys name). Without this
     * rule the deregistration is EINVAL and changes nothing (IBA 10.6.7.2.6; rxe {@code rxe_dereg_mr}, mlx4
     * {@code mlx4_mr_free_reserved}). See {@link MrWindows}. */
    DEREG_MR_INVALIDATES_BOUND_WINDOWS,
    /** {@code ibv_post_send} on a UC QP takes any opcode: mlx5's {@code _mlx5_post_send} adds the remote-address
     * segment of an RDMA WRITE and checks no opcode for the QP type, so an RDMA READ or atomic is posted and the
     * device refuses the WQE with IBV_WC_LOC_QP_OP_ERR (assumed, as {@link #UD_OPCODES_UNCHECKED_AT_POST}). Without
     * this rule (or {@link #OPCODES_CHECKED_BY_RXE_REQUESTER}) it is EINVAL at post. See {@link QpTypeOpcodes}. */
    UC_OPCODES_UNCHECKED_AT_POST,
    /** librxe posts a UC or UD work request of any opcode but BIND_MW on UD (EINVAL: {@code validate_send_wr}), and
     * the kernel's {@code rxe_requester} completes those the QP type lacks with IBV_WC_LOC_QP_OP_ERR ({@code
     * next_opcode}, {@code rxe_wr_opcode_info}): on UC all but SEND, SEND_WITH_IMM, RDMA WRITE (with immediate) and
     * BIND_MW, on UD all but SEND and SEND_WITH_IMM. See {@link QpTypeOpcodes}. */
    OPCODES_CHECKED_BY_RXE_REQUESTER,
    /** {@code num_sge} (an int in {@code struct ibv_send_wr} and {@code ibv_recv_wr}) is compared with the queue's
     * SGE limit as a signed int: mlx5's {@code max_gs} is an int ({@code struct mlx5_wq}), so {@code _mlx5_post_send}
     * and {@code mlx5_post_recv} let a negative count through and read no SGE (a message or receive of 0 bytes).
     * Without this rule the provider's limit is unsigned and a negative count is EINVAL (librxe's {@code rxe_wq}
     * {@code max_sge} is an unsigned int). Only a C program can give a negative count; the C library applies it. */
    NUM_SGE_COMPARED_SIGNED,
    /** {@code ibv_create_srq} with max_wr above max_srq_wr or max_sge above max_srq_sge is E2BIG: cxgb4
     * ({@code c4iw_create_srq} in drivers/infiniband/hw/cxgb4/qp.c checks max_wr against {@code t4_max_rq_size} and
     * max_sge against {@code T4_MAX_RECV_SGE}, both -E2BIG). Without this rule it is EINVAL, as mlx4
     * ({@code mlx4_ib_create_srq}), mlx5 ({@code mlx5_ib_create_srq}, libmlx5 {@code mlx5_create_srq}), rxe
     * ({@code rxe_srq_chk_init}), siw ({@code siw_create_srq}), hns ({@code hns_roce_create_srq}), qedr
     * ({@code qedr_check_srq_params}) and bnxt_re ({@code bnxt_re_create_srq}) answer. See {@link SimSrq}. */
    SRQ_SIZE_E2BIG,
    /** An SRQ holds {@code roundup_pow_of_two(max_wr + 1) - 1} receives, and {@code ibv_create_srq} and
     * {@code ibv_query_srq} report that max_wr: mlx4 ({@code mlx4_ib_create_srq}, {@code mlx4_ib_query_srq}: {@code
     * msrq.max - 1}), mlx5 (libmlx5 {@code mlx5_create_srq} writes {@code srq->max - 1} back to max_wr;
     * {@code mlx5_ib_query_srq}), rxe ({@code rxe_queue_init} sizes the ring to a power of two with one slot empty;
     * {@code rxe_query_srq} answers its {@code index_mask}). Without this rule the SRQ holds and reports the max_wr
     * asked for. See {@link SimSrq}. */
    SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE,
    /** {@code dest_qp_num} of 2^24 or more is kept whole and {@code ibv_query_qp} answers it: rxe
     * ({@code rxe_qp_from_attr} stores the u32, {@code rxe_qp_to_attr} copies {@code qp->attr}); its packets carry the
     * low 24 bits ({@code bth_init}: {@code qpn & BTH_QPN_MASK}). Without this rule the QP keeps the low 24 bits
     * (mlx5 {@code MLX5_SET(qpc, qpc, remote_qpn, ...)}, a 24-bit field). Never refused. See {@link QpContextFields}. */
    DEST_QPN_KEPT_WHOLE,
    /** A {@code max_rd_atomic} or {@code max_dest_rd_atomic} of 0 leaves the QP context's log2 field at 0, so the QP
     * has one resource and {@code ibv_query_qp} answers 1: mlx5 ({@code __mlx5_ib_modify_qp} sets {@code log_rra_max}
     * and {@code log_sra_max} only for a depth other than 0; {@code mlx5_ib_query_qp} answers {@code 1 << log}) and
     * mlx4 ({@code __mlx4_ib_modify_qp}, {@code params1} / {@code params2}). A responder QP given 0 then answers an
     * RDMA READ or atomic. Without this rule 0 is kept, and the responder refuses them with a NAK invalid request
     * (rxe {@code check_resource}, {@link ResponderResources}). See {@link QpContextFields}. */
    RD_ATOMIC_ZERO_KEPT_AS_ONE,
    /** The requester's retransmit timer counts whole kernel jiffies: rxe turns the local ACK timeout into
     * {@code nsecs_to_jiffies(4096ULL << timeout)}, at least 1 ({@code rxe_qp_from_attr}), and arms its
     * {@code retrans_timer} with that; so a short timeout waits a whole jiffy ({@link CostModel#DEFAULT_JIFFY_NS}).
     * Without this rule the device waits the IBA figure, 4.096 µs × 2^timeout. See {@link AckTimeout}. */
    RETRANSMIT_TIMER_IN_JIFFIES,
    /** {@code ibv_create_cq} is EINVAL unless the context has a parent domain's buffer allocators: rdma-core 44's
     * libmana serves DPDK only, and its {@code mana_create_cq} (providers/mana/cq.c) refuses to allocate a CQ buffer
     * itself ("Allocating core buffers for CQ is not supported"); the model has no parent domains on mana, so every
     * CQ of a C program is refused and {@code ibv_rc_pingpong} stops at "Couldn't create CQ", as on an Azure VM with
     * that library. Only a C program meets it; the C library applies it (the Java API's {@code createCq} stands for
     * the kernel's {@code mana_ib_create_cq}, which takes a buffer the application gives). */
    CQ_NEEDS_PARENT_DOMAIN_ALLOCATORS,
    /** The MR's size is bounded in the device's pages, not in bytes: efa ({@code efa_query_device} reports
     * {@code max_mr_size} as {@code max_mr_pages * PAGE_SIZE}, and {@code efa_reg_mr} compares the length with
     * nothing). The device takes at most {@code max_mr_pages} pages of the page size the driver chose
     * ({@code ib_umem_find_best_pgsz}) and refuses more in its REG_MR admin command with a resource-allocation
     * failure, which {@code efa_com_comp_status_to_errno} turns into ENOMEM (libfabric #9739: 95 GB registered, 96 GB
     * "Cannot allocate memory"; huge pages register more). Without this rule a length above {@code max_mr_size} is
     * refused before anything is pinned (irdma {@code irdma_reg_user_mr}: EINVAL). See {@link MrSizeLimit}. */
    MR_SIZE_IN_DEVICE_PAGES,
    /** A length above the driver's maximum MR size is ENOMEM, not EINVAL: bnxt_re ({@code bnxt_re_reg_user_mr}:
     * "MR Size: %lld > Max supported", {@code -ENOMEM}). See {@link MrSizeLimit}. */
    MR_SIZE_ABOVE_MAX_ENOMEM,
    /** {@code ibv_create_qp} of a QP taking its receives from an SRQ checks neither {@code max_recv_wr} nor
     * {@code max_recv_sge}: rxe's {@code rxe_qp_chk_cap} compares them with max_qp_wr and max_recv_sge only when the
     * QP has no SRQ (its caller {@code rxe_qp_chk_init} passes {@code !!init->srq}), and {@code rxe_qp_init_resp} makes
     * no receive queue, so any value is taken and reported as given. Without this rule (or {@link
     * #SRQ_QP_RECV_SGE_UNCHECKED}) both are checked as for a QP of its own (EINVAL past max_qp_wr or max_sge): libmlx4's
     * {@code mlx4_create_qp_ex} checks them before it zeroes them for an SRQ. See {@link QpCreation}. */
    SRQ_QP_RECV_CAPS_UNCHECKED,
    /** {@code ibv_create_qp} of a QP taking its receives from an SRQ checks {@code max_recv_wr} (EINVAL past max_qp_wr)
     * but not {@code max_recv_sge}: libmlx5's {@code mlx5_calc_rq_size} compares max_recv_wr with the context's
     * max_recv_wr before anything else, then {@code mlx5_calc_rcv_wqe} returns 0 for a QP with an SRQ before it looks
     * at the SGEs (and the kernel's {@code set_rq_size} checks max_recv_wr against {@code log_max_qp_sz} only). See
     * {@link QpCreation}. */
    SRQ_QP_RECV_SGE_UNCHECKED,
    /** {@code ibv_create_qp} reports the capacities libmlx5 sized its WQEs for ({@code create_qp} writes
     * {@code sq.max_post}, {@code rq.max_post} and {@code rq.max_gs} back; {@code mlx5_calc_sq_size} the
     * {@code max_inline_data}), which can be more than was asked, and the queues hold that much; an SRQ's max_sge the
     * same way ({@code mlx5_create_srq} writes back {@code max_gs}). See {@link QpCaps}. */
    QP_CAPS_FROM_MLX5_WQE_SIZES,
    /** {@code ibv_create_qp} reports the capacities rxe's queues were made with: max_send_sge and max_inline_data both
     * the room of the send WQE, the larger of the two asked for ({@code rxe_init_sq}), and on current kernels the
     * queue depths {@code roundup_pow_of_two(n + 1) - 1} ({@code rxe_queue_init}). See {@link QpCaps}. */
    QP_CAPS_FROM_RXE_QUEUES,
    /** A CQ holds and reports {@code roundup_pow_of_two(cqe)} entries, not one less: siw's {@code siw_create_cq}
     * rounds the count asked for up to a power of two and sets {@code base_cq.cqe} to it. Without this rule (or {@link
     * #CQE_AT_LEAST_64}) {@code roundup_pow_of_two(cqe + 1) - 1} (mlx4 {@code mlx4_ib_create_cq}, mlx5
     * {@code mlx5_ib_create_cq}, rxe {@code rxe_queue_init}; assumed for the drivers not read). See {@link CqDepth}. */
    CQE_ROUNDED_TO_POW2,
    /** A CQ holds and reports {@code roundup_pow_of_two(max(cqe, 64)) - 1} entries: libhns's {@code hns_roce_verify_cq}
     * raises the count to {@code HNS_ROCE_MIN_CQE_NUM} (64) and a power of two, and the kernel's {@code set_cq_param}
     * sets {@code ib_cq.cqe} to that depth less one ("used as cqe index"), so a CQ of 128 reports 127. See
     * {@link CqDepth}. */
    CQE_AT_LEAST_64,
    /** The sink of an RDMA READ needs REMOTE_WRITE, as iWARP asks (RFC 5040, RDMAP: the Read Response is a tagged
     * message placed into the Data Sink STag, which must grant remote write): cxgb4, whose adapter checks the STag and
     * reports the violation as T4_ERR_ACCESS, which libcxgb4 ({@code c4iw_poll_cq_one}, providers/cxgb4/cq.c) turns
     * into IBV_WC_LOC_ACCESS_ERR and the kernel ({@code c4iw_ev_dispatch}) into IBV_EVENT_QP_ACCESS_ERR (SPDK #2253:
     * NVMe-oF discovery failed on Chelsio once the target registered its buffers without REMOTE_WRITE). Without this
     * rule LOCAL_WRITE suffices, as on InfiniBand and RoCE. See {@link ReadSinkRule}. */
    READ_SINK_NEEDS_REMOTE_WRITE,
    /** {@code ibv_create_srq} checks srq_limit: siw's {@code siw_create_srq} answers EINVAL for a limit above max_wr
     * (both unsigned) and arms the one given. Without this rule srq_limit is not checked at creation, as
     * ibv_create_srq(3) says it is ignored there (mlx5 {@code mlx5_ib_create_srq}, rxe {@code rxe_srq_chk_init} and
     * the other drivers read do not look at it); an out-of-range limit is then not armed. See {@link SimSrq}. */
    SRQ_LIMIT_CHECKED_AT_CREATE,
    /** {@code ibv_resize_cq} weighs the completions waiting against the rounded size: libmlx4's {@code mlx4_resize_cq}
     * rounds {@code cqe + 1} up to a power of two and refuses (EINVAL) only when that is below the outstanding CQEs
     * plus one, so with 10 waiting a resize to 9 (rounded to 16, a CQ of 15) succeeds. Without this rule the count
     * asked for itself must hold them (rxe {@code rxe_cq_chk_attr}; ibv_resize_cq(3)). See {@link CqResize}. */
    CQ_RESIZE_CHECKS_ROUNDED_SIZE,
    /** {@code ibv_create_qp} reports the capacities libmlx4 sized its WQEs for: {@code mlx4_calc_sq_wqe_size} makes the
     * send WQE a power of two of at least 64 bytes holding the transport's segments and the larger of the SGEs and the
     * inline data (an inline segment header every 64 bytes), {@code mlx4_create_qp_ex} adds {@code (2048 >> shift) + 1}
     * spare WQEs and rounds the queue to a power of two, and {@code mlx4_set_sq_sizes} writes back the WQEs less the
     * spares, the SGEs and the inline bytes that WQE holds; the kernel's {@code set_rq_size} rounds the receive queue
     * and its SGEs up to powers of two and writes them back. A send WQE larger than the device's largest descriptor is
     * EINVAL ({@code set_user_sq_size}). See {@link Mlx4QueueSizes}. */
    QP_CAPS_FROM_MLX4_WQE_SIZES,
    /** {@code ibv_create_qp} reports the work requests libirdma's queues hold: {@code irdma_ucreate_qp} sizes each queue
     * in 32-byte quanta ({@code irdma_uk_calc_depth_shift_sq}, {@code irdma_get_sqdepth}: a WQE of 2^shift quanta by its
     * SGEs and inline bytes, the depth a power of two with 258 quanta reserved on the send side and 1 on the receive
     * side) and writes back {@code (depth - reserved) >> shift}; the SGEs and inline bytes stay as asked. The depth, not
     * {@code max_qp_wr}, is the limit: a queue of more quanta than the hardware's 32768 is EINVAL. See
     * {@link IrdmaQueueSizes}. */
    QP_CAPS_FROM_IRDMA_QUANTA,
    /** {@code ibv_create_cq} refuses a count whose rounded size is past {@code max_cqe}: libefa's {@code efa_create_cq}
     * rounds {@code cqe} up to a power of two before the kernel sees it, and the kernel's {@code efa_create_cq} refuses
     * entries above {@code max_cq_depth} with EINVAL. Goes with {@link #CQE_ROUNDED_TO_POW2}. See {@link CqDepth}. */
    CQE_ROUNDED_COUNT_CHECKED,
    /** A CQ reports the {@code cqe} asked for: libirdma's {@code ucreate_cq} gives the kernel a larger ring (twice
     * {@code cqe + 1} on GEN_2, room for completions with immediate data) and sets {@code cq->cqe} back to the count
     * asked for ("Do not report the CQE's reserved for immediate and burned by HW"). See {@link CqDepth}. */
    CQE_AS_ASKED,
    /** A CQ reports {@code roundup_pow_of_two(cqe + 1)}, at most {@code max_cqe + 1}: bnxt_re's {@code
     * bnxt_re_create_cq} ({@code bnxt_re_init_depth(cqe + 1)}, capped at {@code max_cq_wqes + 1}) sets {@code
     * ib_cq.cqe} to that depth itself, not one less. See {@link CqDepth}. */
    CQE_POW2_OF_COUNT_PLUS_ONE,
    /** A CQ reports {@code cqe + 2} rounded up to a multiple of 16, less 2: cxgb4's {@code c4iw_create_cq} adds the
     * status page's entry and one to tell full from empty, rounds to 16 for the hardware and sets {@code ibcq.cqe} to
     * {@code entries - 2}. See {@link CqDepth}. */
    CQE_MULTIPLE_OF_16_LESS_TWO,
    /** A CQ reports the 32-byte CQEs of the pages {@code cqe + 1} of them fill: qedr's {@code qedr_create_cq}
     * ({@code qedr_align_cq_entries}: {@code (cqe + 1) * QEDR_CQE_SIZE} aligned to a page, divided by the CQE size,
     * capped at {@code QEDR_MAX_CQES}) sets a user CQ's {@code ibcq.cqe} to that chain. See {@link CqDepth}. */
    CQE_PAGES_OF_32_BYTE_ENTRIES,
    /** A CQ holds one completion more than it reports: hns's {@code set_cq_param} gives the hardware a ring of
     * {@code cq_depth} entries (the power of two libhns's {@code hns_roce_verify_cq} asked for) and reports {@code
     * cq_depth - 1} ("used as cqe index"); the CQ overflows only when all {@code cq_depth} hold completions. Without
     * this rule a CQ holds what it reports. See {@link CqDepth#held}. */
    CQ_HOLDS_ONE_MORE_THAN_REPORTED,
    /** The provider's {@code post_send} has no case for the atomic opcodes, so {@code ibv_post_send} of a
     * compare-and-swap or fetch-and-add is EINVAL with {@code bad_wr} at it, the work requests before it in the list
     * posted: libcxgb4 {@code c4iw_post_send} (providers/cxgb4/qp.c) takes SEND, SEND_WITH_INV, RDMA_WRITE (with
     * immediate where the adapter has it) and RDMA_READ and answers any other opcode from its {@code default} case
     * (as {@code -EINVAL}, a negative value libibverbs passes through; the model reports EINVAL); the kernel's
     * iw_cxgb4 {@code c4iw_post_send} does the same. libsiw too (providers/siw/siw.c {@code push_send_wqe}: its
     * {@code map_send_opcode} table maps the atomics to no siw opcode, and {@code siw_post_send} answers
     * {@code -EINVAL} with {@code bad_wr} at the work request). iWARP has no atomics (RFC 5040), and these devices
     * report atomic_cap ATOMIC_NONE. Without this rule an atomic on a device of ATOMIC_NONE is EOPNOTSUPP at post.
     * See {@link PostChecks}. */
    ATOMIC_OPCODES_NOT_IN_PROVIDER,
    /** A user MR translates in pages of the kernel's PAGE_SIZE whatever its page_size_cap: rxe keeps one entry per
     * PAGE_SIZE page of the umem ({@code rxe_mr_init} sets {@code ibmr.page_size} to PAGE_SIZE and
     * {@code rxe_mr_fill_pages_from_sgt} stores each page; before the xarray, {@code rxe_mr_init_user} filled one
     * {@code rxe_phys_buf} per page, and the newest page_info array warns unless the MR's page size is PAGE_SIZE), so
     * a 64 KiB MR on a 4 KiB host takes 16 entries. Without this rule the page size is {@code ib_umem_find_best_pgsz}'s
     * over the device's page_size_cap (mlx5, irdma, ...). See {@link SimDevice}. */
    USER_MR_IN_BASE_PAGES
}
