package dev.rnicsim.verbs;

/**
 * An RDMA device a provider offers ({@code struct ibv_device}).
 *
 * <p>Thread safety is the provider's; the simulator's devices are single-threaded.
 */
public interface Device
{
    /**
     * @return the name including the provider's scheme, e.g. {@code sim:connectx5} or {@code rdma:mlx5_0}.
     */
    String name();

    /**
     * @return {@code transport_type} of {@code struct ibv_device}: IWARP for an iWARP device (node type RNIC), IB for
     *         InfiniBand and RoCE, UNSPECIFIED for efa and mana.
     */
    TransportType transportType();

    /**
     * Opens the device for the calling process ({@code ibv_open_device}).
     *
     * @return a new context; close it to release everything it owns.
     * @throws VerbsException ENODEV when the device is gone; EACCES when the device files cannot be opened.
     */
    Context open();
}
