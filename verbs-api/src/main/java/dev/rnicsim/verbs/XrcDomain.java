package dev.rnicsim.verbs;

/**
 * An XRC domain ({@code struct ibv_xrcd}, ibv_open_xrcd(3)): it groups the XRC SRQs and XRC_RECV QPs of a target so
 * that a message arriving on an XRC_RECV QP may go to any XRC SRQ of the same domain and to no other. The XRC SRQs and
 * XRC_RECV QPs created in it keep it busy.
 *
 * <p>Not thread safe on the simulator.
 */
public interface XrcDomain extends AutoCloseable
{
    /**
     * @return the context that opened it.
     */
    Context context();

    /**
     * @return true once closed.
     */
    boolean isClosed();

    /**
     * {@code ibv_close_xrcd}.
     *
     * @throws VerbsException EBUSY while an XRC SRQ or XRC_RECV QP of the domain lives (the kernel's
     *                        {@code ib_dealloc_xrcd_user} refuses a domain whose use count is not 0); nothing changes
     *                        then. Closing a closed domain does nothing.
     */
    @Override
    void close();
}
