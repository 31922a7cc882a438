package dev.rnicsim.verbs;

import java.util.List;

/**
 * A completion queue ({@code struct ibv_cq}).
 *
 * <p>Not thread safe on the simulator.
 */
public interface CompletionQueue extends AutoCloseable
{
    /**
     * @return the context that created it.
     */
    Context context();

    /**
     * @return its capacity in entries (at least what was asked for).
     */
    int cqe();

    /**
     * {@code ibv_poll_cq}: takes up to {@code maxEntries} completions, oldest first.
     *
     * @param maxEntries most completions to return; 0 or less polls nothing, as in C.
     * @return the completions, possibly none.
     * @throws VerbsException EINVAL when the CQ is closed.
     */
    List<WorkCompletion> poll(int maxEntries);

    /**
     * {@code ibv_resize_cq}: gives the CQ room for at least {@code cqe} completions, keeping those not yet polled.
     * The device rounds as at creation ({@link #cqe()} then reports what it granted); a size the CQ already has
     * changes nothing.
     *
     * @param cqe the least number of entries wanted.
     * @throws VerbsException EINVAL when {@code cqe} is below 1, above the device's max_cqe or below the completions
     *                        waiting to be polled; EOPNOTSUPP where the provider cannot resize a CQ. A refused
     *                        resize leaves the CQ as it was.
     */
    void resize(int cqe);

    /**
     * @return true once closed.
     */
    boolean isClosed();

    /**
     * {@code ibv_destroy_cq}. Idempotent.
     *
     * @throws VerbsException EBUSY when a QP still uses it.
     */
    @Override
    void close();
}
