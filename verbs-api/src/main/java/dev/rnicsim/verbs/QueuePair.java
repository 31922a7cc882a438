package dev.rnicsim.verbs;

import java.util.List;
import java.util.Set;

/**
 * A queue pair ({@code struct ibv_qp}). An RC QP is created in RESET and moved RESET → INIT → RTR → RTS
 * ({@code ibv_modify_qp}); then it executes posted work requests. Errors found at post time throw
 * {@link PostException}; errors found in execution complete the work request with an error status and move the
 * QP to ERR, after which work requests complete with {@link WcStatus#WR_FLUSH_ERR}.
 *
 * <p>Not thread safe on the simulator.
 */
public interface QueuePair extends AutoCloseable
{
    /**
     * @return the PD it belongs to; for an XRC_RECV QP, which has none, the PD of the XRC SRQ that took its last
     *         message (the domain's placeholder until then).
     */
    ProtectionDomain pd();

    /**
     * @return its number (24 bits).
     */
    int qpNum();

    /**
     * @return its transport type.
     */
    QpType type();

    /**
     * @return its current state.
     */
    QpState state();

    /**
     * @return what the peer needs to connect to it.
     */
    QpAddress address();

    /**
     * RESET → INIT ({@code IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS}).
     *
     * @param qpAccessFlags what remote peers may do through this QP: REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC.
     * @throws VerbsException EINVAL when the QP is not in RESET or a flag is not a QP access flag.
     */
    void modifyToInit(Set<Access> qpAccessFlags);

    /**
     * INIT → RTR: the remote QP is now known.
     *
     * @param remote      the peer's address.
     * @param minRnrTimer receiver-not-ready NAK timer code (0 to 31, IBA table 45), sent to peers that find no
     *                    receive posted.
     * @throws VerbsException EINVAL when the QP is not in INIT or the timer code is out of range.
     */
    void modifyToRtr(QpAddress remote, int minRnrTimer);

    /**
     * RTR → RTS.
     *
     * @param retryCount transport retries (0 to 7).
     * @param rnrRetry   receiver-not-ready retries (0 to 6; 7 means retry forever).
     * @throws VerbsException EINVAL when the QP is not in RTR or a count is out of range.
     */
    void modifyToRts(int retryCount, int rnrRetry);

    /**
     * Moves the QP to ERR: outstanding work requests complete with WR_FLUSH_ERR.
     */
    void modifyToError();

    /**
     * {@code ibv_modify_qp}: one transition of the QP state machine (or a change of attributes in place when the mask
     * has no {@link QpAttrMask#STATE}). The mask must hold every attribute the transition requires for this QP type
     * and nothing it does not allow (the kernel's {@code ib_modify_qp_is_ok}); any state may go to RESET, any but
     * RESET to ERR.
     *
     * @param attr the attributes.
     * @param mask the fields of attr to apply.
     * @throws VerbsException EINVAL for a transition the table does not have, a required attribute missing, an
     *                        attribute the transition does not allow, or a value out of range (port, pkey index, path
     *                        MTU, read/atomic depth); EOPNOTSUPP where the backend cannot express it. A refused call
     *                        changes nothing.
     */
    default void modify(final QpAttr attr, final Set<QpAttrMask> mask)
    {
        throw new VerbsException("ibv_modify_qp", Errno.EOPNOTSUPP.code(), "this backend has no ibv_modify_qp with "
            + "an attr_mask: it takes the state changes one helper at a time (modifyToInit, modifyToRtr, modifyToRts, "
            + "modifyToError); call those instead");
    }

    /**
     * {@code ibv_query_qp}: the attributes now, the state included.
     *
     * @return the attributes.
     * @throws VerbsException EOPNOTSUPP where the backend cannot query.
     */
    default QpAttr query()
    {
        throw new VerbsException("ibv_query_qp", Errno.EOPNOTSUPP.code(), "this backend cannot query a QP"
            + " (no query_qp); keep the attributes given to ibv_modify_qp instead");
    }

    /**
     * The capacities the provider granted when it created the QP, which {@code ibv_create_qp} writes back into
     * {@code ibv_qp_init_attr.cap} and {@code ibv_query_qp} reports (IBV_QP_CAP): at least those asked for, as the
     * provider sized its queues (libmlx5 reports the work requests and inline bytes its WQEs hold, rxe the room of its
     * send WQE, mlx4 and mlx5 0 receive capacities for a QP on an SRQ), and what the queues hold.
     *
     * @return the granted capacities.
     * @throws VerbsException EOPNOTSUPP where the backend does not keep them.
     */
    default QpCap cap()
    {
        throw new VerbsException("ibv_query_qp", Errno.EOPNOTSUPP.code(), "this backend does not keep the QP's "
            + "capacities; keep the ones given to ibv_create_qp instead");
    }

    /**
     * {@code ibv_query_qp_data_in_order} with flags 0 (ibv_query_qp_data_in_order(3)): whether the data of each work
     * request of {@code opcode} is written in order at the receiving side, so that a reader may poll the data instead
     * of the completion. A device answers it from its provider (mlx5 reads the QP's context in RTS; providers
     * without the verb answer false).
     *
     * @param opcode the operation asked about (RDMA_READ, RDMA_WRITE or SEND).
     * @return true when the data is written in order.
     */
    default boolean dataInOrder(final WrOpcode opcode)
    {
        return false;
    }

    /**
     * @return the SRQ this QP takes its receives from, or null.
     */
    default SharedReceiveQueue srq()
    {
        return null;
    }

    /**
     * {@code ibv_post_send} on a UD QP: each work request with its address handle, remote QP number and Q_Key.
     *
     * @param wrs the work requests.
     * @throws PostException as {@link #postSend(List)}, and EINVAL on a QP that is not UD, for an opcode other than
     *                       SEND and SEND_WITH_IMM, or an address handle of another PD.
     */
    default void postSendUd(final List<UdSendWr> wrs)
    {
        throw new PostException("ibv_post_send", Errno.EOPNOTSUPP.code(), 0, "this backend has no UD QPs; use an RC "
            + "QP, or the simulated NIC for UD");
    }

    /**
     * INIT, RTR and RTS in one step, with infinite RNR retry: the usual RC set-up once addresses are exchanged.
     *
     * @param remote        the peer's address.
     * @param qpAccessFlags remote rights allowed through this QP.
     * @throws VerbsException as the three steps.
     */
    default void connect(final QpAddress remote, final Set<Access> qpAccessFlags)
    {
        modifyToInit(qpAccessFlags);
        modifyToRtr(remote, 12);
        modifyToRts(7, 7);
    }

    /**
     * {@code ibv_post_send}: work requests are executed in order.
     *
     * @param wrs work requests.
     * @throws PostException at the first work request refused at post time (its index is badWrIndex): EINVAL for
     *                       a QP in RESET, INIT or RTR, too many SGEs, an opcode the QP type does not allow, inline
     *                       data above max_inline_data; ENOMEM for a full send queue; EOPNOTSUPP for atomics on a
     *                       device without them.
     */
    void postSend(List<SendWr> wrs);

    /**
     * @param wr one work request.
     * @throws PostException as {@link #postSend(List)}.
     */
    default void postSend(final SendWr wr)
    {
        postSend(java.util.Collections.singletonList(wr)); // a null is the list's, refused with its position
    }

    /**
     * {@code ibv_post_recv}.
     *
     * @param wrs receive work requests.
     * @throws PostException EINVAL in RESET or for too many SGEs; ENOMEM for a full receive queue.
     */
    void postRecv(List<RecvWr> wrs);

    /**
     * @param wr one receive work request.
     * @throws PostException as {@link #postRecv(List)}.
     */
    default void postRecv(final RecvWr wr)
    {
        postRecv(java.util.Collections.singletonList(wr));
    }

    /**
     * {@code ibv_bind_mw} (ibv_bind_mw(3)): binds a type 1 window by posting a bind work request on this QP. The
     * synchronous checks are those of verbs.h; the semantic ones run when the work request executes, and a failure
     * completes it with IBV_WC_MW_BIND_ERR. The window's rkey changes now ({@code ibv_inc_rkey}), before the
     * completion: keep the old one to restore if the completion fails.
     *
     * @param mw    a type 1 window.
     * @param wrId  the bind work request's identifier.
     * @param flags SIGNALED and/or FENCE.
     * @param info  MR, range and rights; {@link MwBindInfo#unbind()} unbinds.
     * @return the window's new rkey.
     * @throws VerbsException EINVAL when the window is not type 1, or there is no MR but an address or length;
     *                        EPERM when the MR and the window are in different PDs; as postSend otherwise.
     */
    int bindMw(MemoryWindow mw, long wrId, Set<SendFlag> flags, MwBindInfo info);

    /**
     * @return true once destroyed.
     */
    boolean isClosed();

    /**
     * {@code ibv_destroy_qp}: its rings are unpinned. Idempotent.
     */
    @Override
    void close();
}
