package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;

/**
 * The network interface a device's Ethernet ports sit on (its Linux netdev): the MTU set with {@code ip link set
 * DEV mtu N} and the IPv4 address given to it. A RoCE or iWARP port's active MTU follows the MTU ({@link
 * PortMtuRule}) and its GID table the addresses ({@link GidTable}); an InfiniBand port ignores both. Defaults: MTU
 * 1500 (Ethernet's {@code ETH_DATA_LEN}, what a netdev starts with) and no IPv4 address, so a RoCE port lists only the
 * link-local GIDs.
 *
 * <p>The simulator's front ends (a script's {@code device} line, {@code rnicsim exec}) refuse the two settings on a
 * port that sits on no Ethernet netdev ({@link #refusalOffEthernet}); the Java API keeps them there and the port
 * ignores them. A netdev of a device on a fabric refuses an IPv4 address another device of that fabric holds.
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

    /** The device whose netdev this is (its fabric's other addresses are checked), or null for a free one. */
    private final SimDevice owner;
    private int mtuBytes = DEFAULT_MTU_BYTES;
    private byte[] ipv4;

    /** A netdev of no device, to check settings before the device exists. */
    public PortNetdev()
    {
        this(null);
    }

    PortNetdev(final SimDevice owner)
    {
        this.owner = owner;
    }

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
        checkMtu(bytes);
        this.mtuBytes = bytes;
        return this;
    }

    /**
     * What {@code dev_set_mtu} checks of a new MTU ({@code dev_validate_mtu}: the netdev's min_mtu and max_mtu, for
     * Ethernet {@code ETH_MIN_MTU} 68 and at most {@code ETH_MAX_MTU}). An MTU below IPv6's 1280 ({@code
     * IPV6_MIN_MTU}) is taken: the netdev then drops its IPv6 addresses ({@code addrconf_notify}), but the RoCE
     * port's default GIDs, made from the MAC ({@code ib_cache_gid_set_default_gid}), stay.
     *
     * @param bytes an MTU as given (a script's number may be wider than an int).
     * @throws dev.rnicsim.verbs.VerbsException EINVAL outside {@link #MIN_MTU_BYTES}..{@link #MAX_MTU_BYTES}.
     */
    public static void checkMtu(final long bytes)
    {
        checkMtu(bytes, "PortNetdev.mtuBytes");
    }

    /**
     * {@link #checkMtu(long)} for a setting a user wrote: the refusal starts with it.
     *
     * @param bytes  an MTU as given.
     * @param option the setting as the user wrote it ({@code netdev_mtu=1}, {@code --netdev-mtu}).
     * @throws dev.rnicsim.verbs.VerbsException EINVAL outside {@link #MIN_MTU_BYTES}..{@link #MAX_MTU_BYTES}.
     */
    public static void checkMtu(final long bytes, final String option)
    {
        if (bytes < MIN_MTU_BYTES || bytes > MAX_MTU_BYTES)
        {
            throw Errors.invalid(option, "an MTU of " + bytes + " bytes is outside " + MIN_MTU_BYTES + ".."
                + MAX_MTU_BYTES + " (ETH_MIN_MTU..ETH_MAX_MTU, dev_set_mtu); give 1500, or 9000 for jumbo frames");
        }
    }

    /**
     * @param profile the device's profile.
     * @param option  the option as the user wrote it ({@code netdev_mtu=}, {@code --ipv4}).
     * @return why the option means nothing on the profile's port (an InfiniBand or EFA port has no Ethernet netdev:
     *         its MTU is the link's and its GID table holds no IP address, {@code roce_gid_mgmt} fills RoCE ports
     *         only), or null on an Ethernet (RoCE or iWARP) port.
     */
    public static String refusalOffEthernet(final DeviceProfile profile, final String option)
    {
        final int linkLayer = profile.linkLayer();
        if (linkLayer == dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET)
        {
            return null;
        }
        return option + ": " + profile.name() + " (" + profile.driver() + ") has an "
            + (linkLayer == dev.rnicsim.verbs.PortAttributes.LINK_LAYER_INFINIBAND ? "InfiniBand" : "unspecified (EFA)")
            + " link layer: its port sits on no Ethernet netdev, so its active_mtu is the link's ("
            + dev.rnicsim.verbs.QpAttr.mtuBytes(profile.portAttributes().activeMtu()) + " bytes) and its GID table "
            + "holds no IP address (roce_gid_mgmt fills RoCE ports only); give the option to a RoCE or iWARP profile "
            + "(connectx6dx, connectx4lx, rxe, bnxt_re, siw, ...) or leave it out";
    }

    /**
     * @return the netdev's IPv4 address (4 bytes, a copy), or null when it has none.
     */
    public byte[] ipv4()
    {
        return ipv4 == null ? null : ipv4.clone();
    }

    /**
     * @return whether the netdev has an IPv4 address ({@link #ipv4} is not null), without copying it.
     */
    public boolean hasIpv4()
    {
        return ipv4 != null;
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
        final byte[] parsed = dotted == null ? null : parseIpv4(dotted);
        if (parsed != null && owner != null)
        {
            checkFree(owner.fabric(), parsed, owner);
        }
        this.ipv4 = parsed;
        return this;
    }

    /**
     * Two devices of one fabric with one IPv4 address would hold one RoCE GID ({@code ::ffff:a.b.c.d}), and a packet
     * to it would have no single destination (on a real network the address conflict that ARP's duplicate address
     * detection, RFC 5227, reports); the model refuses the second.
     *
     * @param fabric the fabric.
     * @param dotted the address, in dotted-quad form.
     * @param self   the device the address is for, or null for a device not made yet.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL when another device of the fabric has that address.
     */
    public static void checkFree(final SimFabric fabric, final String dotted, final SimDevice self)
    {
        checkFree(fabric, parseIpv4(dotted), self);
    }

    private static void checkFree(final SimFabric fabric, final byte[] address, final SimDevice self)
    {
        for (final SimDevice d : fabric.devices())
        {
            if (d != self && java.util.Arrays.equals(d.netdev().ipv4, address))
            {
                final String dotted = dotted(address);
                throw Errors.invalid("netdev address", dotted + " is already the IPv4 address of " + d.name()
                    + "'s netdev on this fabric: two ports with one address hold one RoCE GID (::ffff:" + dotted
                    + ") and a packet to it has no single destination (an address conflict, RFC 5227); give each "
                    + "device its own address");
            }
        }
    }

    private static String dotted(final byte[] address)
    {
        return (address[0] & 0xff) + "." + (address[1] & 0xff) + "." + (address[2] & 0xff) + "." + (address[3] & 0xff);
    }

    /**
     * An address as {@code inet_pton(AF_INET)} reads it (four decimal numbers 0..255, no leading zero, which {@code
     * inet_aton} would read as octal), and one a single host's netdev can hold: not in 0.0.0.0/8 ("this network",
     * RFC 1122; {@code inet_insert_ifa} drops 0.0.0.0), 127.0.0.0/8 (loopback, routed through {@code lo}, so a RoCE
     * v2 packet to it never reaches the port), 224.0.0.0/4 (multicast groups: {@code ibv_init_ah_from_wc} refuses a
     * class D address, {@code set_ah_attr_by_ipv4}) nor 240.0.0.0/4 (reserved, with the broadcast 255.255.255.255).
     *
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
            ok = parts[i].matches("0|[1-9][0-9]{0,2}") && Integer.parseInt(parts[i]) <= 255;
            out[i] = ok ? (byte)Integer.parseInt(parts[i]) : 0;
        }
        if (!ok)
        {
            throw Errors.of("netdev address", Errno.EINVAL, "'" + dotted + "' is no IPv4 address (inet_pton); give "
                + "four numbers 0..255 without leading zeros separated by dots, e.g. 192.168.1.10");
        }
        final int first = out[0] & 0xff;
        final String kind = first == 0 ? "in 0.0.0.0/8, 'this network' (RFC 1122), no host's address"
            : first == 127 ? "a loopback address (127.0.0.0/8), routed through lo and never to the port"
            : first >= 224 && first < 240 ? "a multicast group (224.0.0.0/4), no host's address (ibv_init_ah_from_wc "
                + "refuses class D, set_ah_attr_by_ipv4)"
            : first >= 240 ? "reserved (240.0.0.0/4, with the broadcast 255.255.255.255), no host's address" : null;
        if (kind != null)
        {
            throw Errors.of("netdev address", Errno.EINVAL, "'" + dotted + "' is " + kind + ", not a host's "
                + "unicast address (RFC 1122, host_requirements); give the unicast address of the port's own network, "
                + "e.g. 192.168.1.10");
        }
        return out;
    }

    /**
     * @param profile the profile of the device this netdev belongs to.
     * @return what {@code ibv_query_port} reports for the device's ports: the profile's, with the MTUs this netdev
     *         decides ({@link PortMtuRule}).
     */
    dev.rnicsim.verbs.PortAttributes portAttributes(final DeviceProfile profile)
    {
        final int mtu = mtuBytes();
        final PortAtMtu made = portAtMtu;
        if (made != null && made.netdevMtuBytes == mtu && made.profile == profile)
        {
            return made.attributes;
        }
        final dev.rnicsim.verbs.PortAttributes p = profile.portAttributes();
        final PortMtuRule rule = profile.portMtuRule();
        final int linkMax = profile.linkMaxMtu();
        final dev.rnicsim.verbs.PortAttributes a = !rule.followsNetdev() ? p : new dev.rnicsim.verbs.PortAttributes(
            p.state(), rule.maxMtu(mtu, linkMax), rule.activeMtu(mtu, linkMax), p.gidTblLen(),
            p.portCapFlags(), p.maxMsgSzBytes(), p.pkeyTblLen(), p.linkLayer());
        portAtMtu = new PortAtMtu(mtu, profile, a);
        return a;
    }

    /**
     * The port's attributes as last made, with the MTU and the (immutable) profile they were made for: they change only
     * with them, and ibv_modify_qp's checks and the one-call transitions read them on every call.
     */
    private record PortAtMtu(int netdevMtuBytes, DeviceProfile profile, dev.rnicsim.verbs.PortAttributes attributes)
    {
    }

    private volatile PortAtMtu portAtMtu;
}
