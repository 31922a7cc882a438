package dev.rnicsim.simnic;

import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.GidType;
import dev.rnicsim.verbs.PortAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * A port's GID table as the kernel fills it. On an InfiniBand port: one GID, the subnet prefix fe80::/64 with the port
 * GUID ({@link #portGuid}: the node GUID on port 1, each further port its own). On a RoCE port the core's {@code roce_gid_mgmt} adds, for every IP address of the
 * netdev, one entry per RoCE type the port supports ({@code roce_gid_type_mask_support}: v1 when the driver sets
 * {@code RDMA_CORE_CAP_PROT_ROCE}, v2 when it sets {@code RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP}), the types of one
 * address next to each other, v1 first: first the IPv6 link-local address the netdev has from its MAC (fe80::/64 and
 * the modified EUI-64; here fe80:: and the node GUID, which rxe builds the same way from the MAC with {@code
 * addrconf_addr_eui48}), then the IPv4 address as an IPv4-mapped GID {@code ::ffff:a.b.c.d} when one is set. On an
 * iWARP port there is no GID cache: the driver answers one GID, the netdev's MAC in its first six bytes and zeros
 * after ({@code siw_query_gid}, {@code c4iw_query_gid}); sysfs has no type for it, so {@code ibv_query_gid_type}
 * reads it as IB/RoCE v1 (type IB here). The other entries up to {@code gid_tbl_len} are empty.
 *
 * <p>Stateless.
 */
public final class GidTable
{
    /** Which GIDs a driver's port lists (a profile property, {@link DeviceProfile#gidKinds()}). */
    public enum Kinds
    {
        /** An InfiniBand (or EFA) port: one GID, type IB. */
        INFINIBAND(List.of(GidType.IB)),
        /**
         * RoCE v1 and v2 for each address: mlx4 (ConnectX-3 Pro) and mlx5 on Ethernet ({@code mlx5_port_immutable}:
         * both when the device has RoCE v2), bnxt_re ({@code bnxt_re_get_port_immutable}: both unless the firmware
         * limits it), hns ({@code hns_roce_port_immutable}: v2 too with {@code HNS_ROCE_CAP_FLAG_ROCE_V1_V2}), qedr
         * ({@code qedr_roce_port_immutable}).
         */
        ROCE_V1_AND_V2(List.of(GidType.ROCE_V1, GidType.ROCE_V2)),
        /**
         * RoCE v2 only: rxe ({@code rxe_port_immutable}: {@code RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP}), irdma on a RoCE
         * port ({@code irdma_roce_port_immutable}), mana ({@code mana_ib_get_port_immutable}).
         */
        ROCE_V2(List.of(GidType.ROCE_V2)),
        /** An iWARP port: one GID from the MAC, no RoCE type (siw, cxgb4, erdma, irdma on an iWARP port). */
        IWARP(List.of(GidType.IB));

        private final List<GidType> types;

        Kinds(final List<GidType> types)
        {
            this.types = types;
        }

        /**
         * @return the RoCE types listed for each address, in table order.
         */
        public List<GidType> types()
        {
            return types;
        }

        /**
         * @return true for the RoCE kinds, whose table follows the netdev's addresses.
         */
        public boolean roce()
        {
            return this == ROCE_V1_AND_V2 || this == ROCE_V2;
        }
    }

    private GidTable()
    {
    }

    /**
     * @param device  the device.
     * @param portNum its port, from 1.
     * @return the port's valid entries in index order (they fill the table from index 0).
     */
    public static List<GidEntry> entries(final SimDevice device, final int portNum)
    {
        final Kinds kinds = device.profile().gidKinds();
        final List<GidEntry> out = new ArrayList<>(4);
        if (kinds == Kinds.IWARP)
        {
            out.add(new GidEntry(portNum, 0, macGid(device.nodeGuid()), GidType.IB));
            return out;
        }
        final List<byte[]> addresses = new ArrayList<>(2);
        addresses.add(linkLocal(portNum == 1 ? device.gid() : SimFabric.gidOf(portGuid(device, portNum))));
        final byte[] ipv4 = device.netdev().ipv4();
        if (kinds.roce() && ipv4 != null)
        {
            final byte[] mapped = new byte[16];
            mapped[10] = (byte)0xff;
            mapped[11] = (byte)0xff;
            System.arraycopy(ipv4, 0, mapped, 12, 4);
            addresses.add(mapped);
        }
        for (final byte[] gid : addresses)
        {
            for (final GidType t : kinds.types())
            {
                out.add(new GidEntry(portNum, out.size(), gid, t));
            }
        }
        return out;
    }

    /**
     * How many valid entries {@link #entries} lists for a port, without making them (ibv_modify_qp checks an address
     * vector's {@code sgid_index} against it on every transition to RTR): one on an iWARP port, else one entry per RoCE
     * type (or the one IB GID) for the link-local address and, on a RoCE port whose netdev has one, the IPv4 address.
     *
     * @param device  the device.
     * @param portNum its port, from 1.
     * @return the size of {@link #entries} for that port.
     */
    public static int validEntries(final SimDevice device, final int portNum)
    {
        final Kinds kinds = device.profile().gidKinds();
        if (kinds == Kinds.IWARP)
        {
            return 1;
        }
        final int addresses = kinds.roce() && device.netdev().hasIpv4() ? 2 : 1;
        return addresses * kinds.types().size();
    }

    /**
     * Each port of a device has its own port GUID, and so its own link-local GID: the subnet manager and the GRH tell
     * the ports apart by it (IBA 4.1.1: a port GUID per port; mlx4's two ports report the node GUID's next values,
     * {@code ibstat}'s "Port GUID"). The model's port 1 takes the node GUID itself (the fabric numbers its devices one
     * apart), and port p the node GUID plus (p − 1) · 2^20, which keeps every GUID of a fabric of fewer than 2^20
     * devices distinct.
     *
     * @param device  a device.
     * @param portNum its port, from 1.
     * @return the port's GUID.
     */
    public static long portGuid(final SimDevice device, final int portNum)
    {
        return device.nodeGuid() + ((long)(portNum - 1) << 20);
    }

    /**
     * The source GID the connection manager gives a connection that leaves from the port's link-local address: on a
     * RoCE port the entry of that address whose type is the port's default RoCE type, which is RoCE v2 when the port
     * supports it and else the first type it supports (kernel drivers/infiniband/core/cma.c {@code cma_add_one}:
     * {@code default_gid_type} per port is {@code CMA_PREFERRED_ROCE_GID_TYPE}, RoCE v2 since kernel commit
     * 63a5f483af0e "IB/cma: Set default gid type to RoCEv2" and its fix 3c7f67d1880d, when
     * {@code roce_gid_type_mask_support} has it; configfs {@code default_roce_mode} changes it; the route's source GID
     * is the netdev address's entry of that type, and {@code cma_route_gid_type} takes RoCE v2 for an IP route on a
     * port that has it). On an InfiniBand or iWARP port entry 0, the port's only GID.
     *
     * @param device  a device.
     * @param portNum its port, from 1.
     * @return the index of that entry in the port's GID table.
     */
    public static int connectionManagerSgidIndex(final SimDevice device, final int portNum)
    {
        final Kinds kinds = device.profile().gidKinds();
        if (!kinds.roce())
        {
            return 0;
        }
        final GidType preferred = kinds.types().contains(GidType.ROCE_V2) ? GidType.ROCE_V2 : kinds.types().getFirst();
        final List<GidEntry> table = entries(device, portNum);
        for (final GidEntry e : table)
        {
            if (e.gidType() == preferred && java.util.Arrays.equals(e.gid(), table.getFirst().gid()))
            {
                return e.gidIndex();
            }
        }
        return 0;
    }

    /**
     * @param device a device of the fabric.
     * @param gid    a GID in the eight-group text form of {@link SimDevice#gid()}.
     * @return true when a valid entry of one of the device's ports holds it (any type).
     */
    public static boolean holds(final SimDevice device, final String gid)
    {
        if (device.gid().equals(gid))
        {
            return true;
        }
        final int ports = device.profile().attributes().physPortCnt();
        for (int p = 1; p <= ports; p++)
        {
            for (final GidEntry e : entries(device, p))
            {
                if (text(e.gid()).equals(gid))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * @param raw 16 bytes of a GID.
     * @return the eight-group text form of {@link SimDevice#gid()}: {@code fe80:0000:...}.
     */
    public static String text(final byte[] raw)
    {
        final StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 16; i += 2)
        {
            if (i > 0)
            {
                sb.append(':');
            }
            sb.append(String.format("%02x%02x", raw[i], raw[i + 1]));
        }
        return sb.toString();
    }

    /**
     * @param linkLayer the port's link layer ({@link PortAttributes#linkLayer()}).
     * @param kinds     the driver's GID kinds.
     * @return the kinds a port of that link layer lists: an InfiniBand port lists IB GIDs whatever the driver.
     */
    static Kinds forLinkLayer(final int linkLayer, final Kinds kinds)
    {
        return linkLayer == PortAttributes.LINK_LAYER_INFINIBAND ? Kinds.INFINIBAND : kinds;
    }

    private static byte[] linkLocal(final String gid)
    {
        final byte[] out = new byte[16];
        final String[] groups = gid.split(":");
        for (int i = 0; i < 8; i++)
        {
            final int v = Integer.parseInt(groups[i], 16);
            out[2 * i] = (byte)(v >>> 8);
            out[2 * i + 1] = (byte)v;
        }
        return out;
    }

    /**
     * The netdev's MAC as the model derives it from the node GUID (the inverse of the modified EUI-64: the GUID's
     * first three and last three bytes, the universal/local bit flipped), in the first six bytes of a GID.
     */
    static byte[] macGid(final long nodeGuid)
    {
        final byte[] out = new byte[16];
        out[0] = (byte)((nodeGuid >>> 56) ^ 0x02);
        out[1] = (byte)(nodeGuid >>> 48);
        out[2] = (byte)(nodeGuid >>> 40);
        out[3] = (byte)(nodeGuid >>> 16);
        out[4] = (byte)(nodeGuid >>> 8);
        out[5] = (byte)nodeGuid;
        return out;
    }
}
