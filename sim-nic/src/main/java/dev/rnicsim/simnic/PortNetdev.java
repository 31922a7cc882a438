package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;

/**
 * The network interface a device's Ethernet ports sit on (its Linux netdev): the MTU set with {@code ip link set
 * DEV mtu N} and the IPv4 address given to it. A RoCE or iWARP port's active MTU follows the MTU ({@link
 * PortMtuRule}) and its GID table the addresses ({@link GidTable}); an InfiniBand port ignores both. Defaults: MTU
 * 1500 (Ethernet's {@code ETH_DATA_LEN}, what a netdev starts with) and no IPv4 address, so a RoCE port lists only the
 * link-local GIDs.
 *
 * <p>Not thread safe: set while the device is being built or under the fabric's lock.
 */
public final class PortNetdev
{
    /** Ethernet's default MTU ({@code ETH_DATA_LEN}, include/uapi/linux/if_ether.h). */
    public static final int DEFAULT_MTU_BYTES = 1500;
    /** The smallest MTU an Ethernet netdev takes ({@code ETH_MIN_MTU}). */
    public static final int MIN_MTU_BYTES = 68;
    /** The largest MTU a netdev takes ({@code ETH_MAX_MTU}, 0xFFFF). */
    public static final int MAX_MTU_BYTES = 0xFFFF;

    private int mtuBytes = DEFAULT_MTU_BYTES;
    private byte[] ipv4;

    /**
     * @return the netdev's MTU in bytes.
     */
    public int mtuBytes()
    {
        return mtuBytes;
    }

    /**
     * {@code ip link set DEV mtu N}.
     *
     * @param bytes the MTU, {@link #MIN_MTU_BYTES} to {@link #MAX_MTU_BYTES}.
     * @return this.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL for an MTU outside that range (as {@code dev_set_mtu}
     *                                          refuses it); nothing changes.
     */
    public PortNetdev mtuBytes(final int bytes)
    {
        if (bytes < MIN_MTU_BYTES || bytes > MAX_MTU_BYTES)
        {
            throw Errors.invalid("netdev mtu", "an MTU of " + bytes + " bytes is outside " + MIN_MTU_BYTES + ".."
                + MAX_MTU_BYTES + " (ETH_MIN_MTU..ETH_MAX_MTU, dev_set_mtu); give 1500, or 9000 for jumbo frames");
        }
        this.mtuBytes = bytes;
        return this;
    }

    /**
     * @return the netdev's IPv4 address (4 bytes, a copy), or null when it has none.
     */
    public byte[] ipv4()
    {
        return ipv4 == null ? null : ipv4.clone();
    }

    /**
     * {@code ip addr add A.B.C.D dev DEV}, or removes the address.
     *
     * @param dotted the address in dotted-quad form, or null for none.
     * @return this.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL for text that is no IPv4 address; nothing changes.
     */
    public PortNetdev ipv4(final String dotted)
    {
        this.ipv4 = dotted == null ? null : parseIpv4(dotted);
        return this;
    }

    /**
     * @param dotted an IPv4 address such as {@code 192.168.1.10}.
     * @return its 4 bytes.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL for anything else.
     */
    static byte[] parseIpv4(final String dotted)
    {
        final String[] parts = dotted.split("\\.", -1);
        final byte[] out = new byte[4];
        boolean ok = parts.length == 4;
        for (int i = 0; ok && i < 4; i++)
        {
            ok = parts[i].matches("[0-9]{1,3}") && Integer.parseInt(parts[i]) <= 255;
            out[i] = ok ? (byte)Integer.parseInt(parts[i]) : 0;
        }
        if (!ok)
        {
            throw Errors.of("netdev address", Errno.EINVAL, "'" + dotted + "' is no IPv4 address; give four numbers "
                + "0..255 separated by dots, e.g. 192.168.1.10");
        }
        return out;
    }
}
