package dev.rnicsim.verbs;

/**
 * An address handle ({@code struct ibv_ah}, ibv_create_ah(3)): the path to a remote port that a UD send work request
 * names. It belongs to a PD and keeps it busy until destroyed.
 *
 * <p>Not thread safe on the simulator.
 */
public interface AddressHandle extends AutoCloseable
{
    /**
     * @return the PD it was created in.
     */
    ProtectionDomain pd();

    /**
     * @return the address vector it was created with.
     */
    AhAttr attr();

    /**
     * @return true once destroyed.
     */
    boolean isClosed();

    /**
     * {@code ibv_destroy_ah}. Idempotent.
     */
    @Override
    void close();
}
