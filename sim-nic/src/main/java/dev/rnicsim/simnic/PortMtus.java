package dev.rnicsim.simnic;

/**
 * A port's MTUs as a device reported them ({@code ibv_devinfo -v}'s port section: {@code max_mtu}, {@code
 * active_mtu}), as {@code enum ibv_mtu}: 1 = 256 ... 5 = 4096 bytes. On an InfiniBand port they are the link's (the
 * subnet manager negotiates active_mtu, at most max_mtu); on an Ethernet port active_mtu follows the netdev's MTU by
 * the driver's rule ({@link PortMtuRule}), so a dump's active_mtu tells the netdev MTU it was taken on ({@link
 * DeviceProfile#netdevMtuBytes()}).
 *
 * @param maxMtu    max_mtu, 1..5.
 * @param activeMtu active_mtu, 1..max_mtu.
 * @param reported  true when a device reported them (a dump), false for a profile's own 4096.
 */
public record PortMtus(int maxMtu, int activeMtu, boolean reported)
{
    /** Both 4096: a profile without a dump's port section. */
    public static final PortMtus FULL = new PortMtus(5, 5, false);

    /**
     * @throws IllegalArgumentException when an MTU is no {@code enum ibv_mtu} value or active_mtu exceeds max_mtu.
     */
    public PortMtus
    {
        if (maxMtu < 1 || maxMtu > 5 || activeMtu < 1 || activeMtu > maxMtu)
        {
            throw new IllegalArgumentException("port MTUs max_mtu=" + maxMtu + " active_mtu=" + activeMtu + " must be "
                + "enum ibv_mtu values 1 (256) to 5 (4096), active_mtu at most max_mtu");
        }
    }
}
