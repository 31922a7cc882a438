package dev.rnicsim.verbs;

/**
 * A memory window ({@code struct ibv_mw}, ibv_alloc_mw(3)): a key granting remote access to a range of an MR,
 * created unbound (it grants nothing) and given a range, rights and a new rkey by each bind.
 *
 * <p>Close deallocates it ({@code ibv_dealloc_mw}), unbinding it first and releasing its MR.
 */
public interface MemoryWindow extends AutoCloseable
{
    /**
     * @return the protection domain it was allocated in.
     */
    ProtectionDomain pd();

    /**
     * @return its type.
     */
    MwType type();

    /**
     * @return its current rkey: changed by every bind (the low 8 bits; the upper 24 are the window's index).
     */
    int rkey();

    /**
     * Writes the rkey field back, as an application writes {@code mw->rkey} after a bind whose completion failed:
     * ibv_bind_mw set the new key at post time, but the device still knows the window by the old one.
     *
     * @param rkey the key to show from now on (normally the one before the failed bind).
     */
    void setRkey(int rkey);

    /**
     * @return true once closed.
     */
    boolean isClosed();

    /**
     * {@code ibv_dealloc_mw}; idempotent.
     */
    @Override
    void close();
}
