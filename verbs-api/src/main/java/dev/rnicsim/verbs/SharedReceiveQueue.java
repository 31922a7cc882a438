package dev.rnicsim.verbs;

import java.util.List;

/**
 * A shared receive queue ({@code struct ibv_srq}, ibv_create_srq(3)): receive work requests that every QP created with
 * it takes its receives from, in the order they were posted. It belongs to a PD and keeps it busy; the QPs attached to
 * it keep it busy in turn.
 *
 * <p>Not thread safe on the simulator.
 */
public interface SharedReceiveQueue extends AutoCloseable
{
    /**
     * @return the PD it was created in.
     */
    ProtectionDomain pd();

    /**
     * {@code ibv_post_srq_recv}.
     *
     * @param wrs receive work requests.
     * @throws PostException at the first refused one: EINVAL for too many SGEs or a destroyed SRQ; ENOMEM when it
     *                       is full.
     */
    void postRecv(List<RecvWr> wrs);

    /**
     * {@code ibv_modify_srq} with IBV_SRQ_LIMIT: arms the limit event.
     *
     * @param srqLimit the new limit.
     * @throws VerbsException EINVAL when it exceeds max_wr.
     */
    void modifyLimit(int srqLimit);

    /**
     * {@code ibv_modify_srq} with IBV_SRQ_MAX_WR: the SRQ's new max_wr, its receives kept, where the device resizes
     * SRQs (IBV_DEVICE_SRQ_RESIZE in device_cap_flags).
     *
     * @param maxWr the new max_wr.
     * @throws VerbsException EINVAL where the device cannot resize or refuses the size; EOPNOTSUPP on a backend that
     *                        does not resize SRQs; nothing changes then.
     */
    default void resize(final int maxWr)
    {
        throw new VerbsException("ibv_modify_srq", Errno.EOPNOTSUPP.code(), "IBV_SRQ_MAX_WR: this backend does not "
            + "resize SRQs; create one with the max_wr you need; nothing changed");
    }

    /**
     * {@code ibv_query_srq}.
     *
     * @return its attributes now.
     */
    SrqAttr query();

    /**
     * @return receive work requests posted and not yet taken.
     */
    int receivesPosted();

    /**
     * {@code ibv_get_srq_num}: the number an XRC_SEND QP names to reach this SRQ ({@link SendWr#remoteSrqn}).
     *
     * @return the SRQ number.
     * @throws VerbsException EOPNOTSUPP where the provider has no {@code get_srq_num} (libibverbs' stand-in answers
     *                        so).
     */
    default int srqNum()
    {
        throw new VerbsException("ibv_get_srq_num", Errno.EOPNOTSUPP.code(), "this backend does not report SRQ "
            + "numbers (ibv_get_srq_num); use the simulated backend");
    }

    /**
     * @return the XRC domain of an XRC SRQ, null for a basic SRQ.
     */
    default XrcDomain xrcd()
    {
        return null;
    }

    /**
     * @return true once destroyed.
     */
    boolean isClosed();

    /**
     * {@code ibv_destroy_srq}.
     *
     * @throws VerbsException EBUSY while a QP created with it lives (the kernel's {@code ib_destroy_srq_user} checks
     *                        the SRQ's use count); nothing changes then.
     */
    @Override
    void close();
}
