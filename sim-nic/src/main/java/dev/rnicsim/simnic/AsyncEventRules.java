package dev.rnicsim.simnic;

/**
 * Which affiliated asynchronous events a driver raises where drivers differ; the events every driver raises
 * (IBV_EVENT_CQ_ERR on a CQ overrun, IBV_EVENT_SRQ_LIMIT_REACHED) need no rule. Derived from the device profile,
 * so that the event queue asks the profile instead of testing driver names.
 *
 * <p>The rules and their sources:
 * <ul>
 * <li>{@code commEst}: the first message that reaches an RC or UC QP in RTR raises IBV_EVENT_COMM_EST (IBA 11.6.3.1,
 * "communication established"; mlx5 {@code mlx5_ib_qp_event} maps MLX5_EVENT_TYPE_COMM_EST, mlx4
 * MLX4_EVENT_TYPE_COMM_EST, hns HNS_ROCE_EVENT_TYPE_COMM_EST, rdmavt {@code rvt_comm_est}). rxe's responder raises
 * none.</li>
 * <li>{@code responderAccessError} and {@code responderInvalidRequest}: an RC responder's class C error that no
 * receive WQE can carry (an RDMA WRITE without immediate data, an RDMA READ, an atomic) is reported to the
 * responder's client as an affiliated asynchronous error, IBV_EVENT_QP_ACCESS_ERR for an R_Key violation and
 * IBV_EVENT_QP_REQ_ERR for an invalid request (IBA C9-222.1.1; mlx5 maps MLX5_EVENT_TYPE_WQ_ACCESS_ERROR and
 * MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR). rxe raises the access error only, since the patch "RDMA/rxe: Generate async
 * error for r_key violations" (linux-rdma, February 2026: {@code RESPST_ERR_RKEY_VIOLATION_EVENT} in rxe_resp.c);
 * its length and opcode errors raise nothing.</li>
 * <li>{@code responderFatal}: a responder's class A error (a remote operation error no receive WQE carries) raises
 * IBV_EVENT_QP_FATAL (local work queue catastrophic error: mlx5 MLX5_EVENT_TYPE_WQ_CATAS_ERROR); rxe raises
 * none.</li>
 * <li>{@code lastWqeReached}: a QP attached to an SRQ that enters ERR raises IBV_EVENT_QP_LAST_WQE_REACHED (IBA
 * o11-5.2.5; mlx5 MLX5_EVENT_TYPE_SRQ_LAST_WQE; rxe {@code flush_recv_queue} since the patch "RDMA/rxe: Send last
 * wqe reached event on qp cleanup", June 2023).</li>
 * </ul>
 * An rxe of a kernel older than 6.2 (the profiles with {@link ProviderRule#KERNEL_WITHOUT_FLUSH_ACCESS}, such as
 * {@code rxe-legacy}) predates both rxe patches and raises neither. Drivers whose event code was not read (siw, efa,
 * bnxt_re, ...) follow the IBA rules, as mlx5 does (assumed).
 *
 * <p>Immutable and thread safe.
 *
 * @param commEst                 IBV_EVENT_COMM_EST at the first message in RTR.
 * @param responderAccessError    IBV_EVENT_QP_ACCESS_ERR for an R_Key violation no receive carries.
 * @param responderInvalidRequest IBV_EVENT_QP_REQ_ERR for an invalid request no receive carries.
 * @param responderFatal          IBV_EVENT_QP_FATAL for a remote operation error no receive carries.
 * @param lastWqeReached          IBV_EVENT_QP_LAST_WQE_REACHED for a QP on an SRQ that enters ERR.
 * @param source                  where these rules were read.
 */
public record AsyncEventRules(boolean commEst, boolean responderAccessError, boolean responderInvalidRequest,
                              boolean responderFatal, boolean lastWqeReached, String source)
{
    /** The IBA rules, as mlx5 follows them. */
    public static final AsyncEventRules IBA = new AsyncEventRules(true, true, true, true, true,
        "IBA C9-222.1.1, o11-5.2.5, 11.6.3.1; drivers/infiniband/hw/mlx5/qp.c mlx5_ib_qp_event");

    /** rxe's rules (drivers/infiniband/sw/rxe/rxe_resp.c: see the class comment). */
    public static final AsyncEventRules RXE = new AsyncEventRules(false, true, false, false, true,
        "drivers/infiniband/sw/rxe/rxe_resp.c: flush_recv_queue, RESPST_ERR_RKEY_VIOLATION_EVENT");
    /** rxe's rules in a kernel older than 6.2: no QP events. */
    public static final AsyncEventRules RXE_BEFORE_6_2 = new AsyncEventRules(false, false, false, false, false,
        "drivers/infiniband/sw/rxe/rxe_resp.c before Linux 6.2: no QP events");

    /**
     * @param profile a device profile.
     * @return the rules its driver follows ({@link DriverVerbTraits#asyncEvents()}, or
     *         {@link DriverVerbTraits#asyncEventsOldKernel()} with {@link ProviderRule#KERNEL_WITHOUT_FLUSH_ACCESS}).
     */
    public static AsyncEventRules of(final DeviceProfile profile)
    {
        return profile.traits().verbs().asyncEventsOf(profile);
    }
}
