package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.PortAttributes;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import java.util.EnumSet;
import java.util.Set;

/**
 * The attributes of a simulated QP that {@code ibv_modify_qp} sets and only {@code ibv_query_qp} reads, and the checks
 * of their values and of {@code ibv_create_qp}'s type-specific input. Not thread safe.
 */
final class QpAttributes
{
    /** The rights a QP's qp_access_flags may hold. */
    /** The qp_access_flags rxe accepts ({@code RXE_ACCESS_SUPPORTED_QP}, which is {@code RXE_ACCESS_SUPPORTED_MR}:
     * every flag but ZERO_BASED and HUGETLB, ON_DEMAND included, as rdma-core's tests/test_odp.py gives it). */
    static final Set<Access> QP_ACCESS = EnumSet.complementOf(EnumSet.of(Access.ZERO_BASED, Access.HUGETLB));

    int pkeyIndex;
    int portNum;
    int qkey;
    AhAttr av;
    int pathMtu;
    int timeout;
    int rqPsn;
    int sqPsn;
    int maxRdAtomic;
    int maxDestRdAtomic;
    int destQpNum;
    /** {@code min_rnr_timer} as {@code ibv_query_qp} answers it ({@link QpAttrValues#minRnrTimerKept}). */
    int minRnrTimer;

    /** Back to what a new QP has (a transition to RESET). */
    void clear()
    {
        pkeyIndex = 0;
        portNum = 0;
        qkey = 0;
        av = null;
        pathMtu = 0;
        timeout = 0;
        rqPsn = 0;
        sqPsn = 0;
        maxRdAtomic = 0;
        maxDestRdAtomic = 0;
        destQpNum = 0;
        minRnrTimer = 0;
    }

    /**
     * The type-specific checks of {@code ibv_create_qp}: the SRQ must be a live SRQ of the same context (the kernel
     * looks the handle up in the caller's objects, {@code create_qp} in uverbs_cmd.c: EINVAL otherwise).
     */
    static void checkCreate(final String verb, final SimPd pd, final QpInitAttr attr)
    {
        if (attr.srq() != null && (!(attr.srq() instanceof SimSrq s) || s.isClosed()
            || s.pd().context() != pd.context()))
        {
            throw Errors.invalid(verb, "srq " + attr.srq() + " is not a live SRQ of this context (ibv_create_qp "
                + "looks the SRQ up among the caller's objects); create it with ibv_create_srq on the same context");
        }
    }

    /**
     * The value checks of {@code ibv_modify_qp} after the state table (rxe {@code rxe_qp_chk_attr}, uverbs
     * {@code modify_qp}, mlx5 {@code mlx5_ib_modify_qp}): each attribute in the mask must fit the device's limits;
     * what the narrow fields take is {@link QpAttrValues}. {@code max_rd_atomic} is checked against
     * {@code max_qp_init_rd_atom} and {@code max_dest_rd_atomic} against {@code max_qp_rd_atom} (mlx5 {@code
     * validate_rd_atomic}: {@code log_max_ra_res_qp} and {@code log_max_ra_req_qp}, which {@code mlx5_ib_query_device}
     * reports as those two; mlx4 likewise); rxe checks only {@code max_rd_atomic} (against {@code max_qp_rd_atom}, the
     * same number on rxe) and takes any {@code max_dest_rd_atomic} ({@link ProviderRule#DEST_RD_ATOMIC_UNCHECKED}).
     *
     * @param bits the mask as {@link QpTransitions#bits}.
     * @return why the values are refused (EINVAL), or null.
     */
    static String valueRefusal(final SimDevice device, final QpAttr a, final Set<QpAttrMask> mask, final long bits)
    {
        final DeviceAttributes d = device.profile().attributes();
        // The port's attributes are made per call: only for the two checks that read them.
        final PortAttributes port = has(bits, QpAttrMask.PKEY_INDEX) || has(bits, QpAttrMask.PATH_MTU)
            ? device.portAttributes() : null;
        if (has(bits, QpAttrMask.PORT) && (a.portNum() < 1 || a.portNum() > d.physPortCnt()))
        {
            return "port_num=" + a.portNum() + " is not a port of " + device.name() + " (1.." + d.physPortCnt()
                + "; uverbs modify_qp, rdma_is_port_valid)";
        }
        if (has(bits, QpAttrMask.PKEY_INDEX) && (a.pkeyIndex() < 0 || a.pkeyIndex() >= port.pkeyTblLen()))
        {
            return "pkey_index=" + a.pkeyIndex() + " is outside the P_Key table of " + port.pkeyTblLen()
                + " entries (rxe_qp_chk_attr)";
        }
        if (has(bits, QpAttrMask.ACCESS_FLAGS) && device.profile().follows(ProviderRule.QP_ACCESS_FLAGS_CHECKED)
            && (a.qpAccessFlags().contains(Access.ZERO_BASED) || a.qpAccessFlags().contains(Access.HUGETLB)))
        {
            for (final Access x : a.qpAccessFlags())
            {
                if (!QP_ACCESS.contains(x))
                {
                    return "qp_access_flags " + a.qpAccessFlags() + ": " + x + " is not a QP access flag of "
                        + device.profile().driver() + " (rxe_qp_chk_attr: RXE_ACCESS_SUPPORTED_QP has every flag but "
                        + "ZERO_BASED and HUGETLB)";
                }
            }
        }
        if (has(bits, QpAttrMask.AV))
        {
            if (a.ahAttr() == null)
            {
                return "IBV_QP_AV without an address vector";
            }
            final String ah = ahRefusal(device, a.ahAttr());
            if (ah != null)
            {
                return ah;
            }
        }
        // siw and erdma report a max_mtu from the netdev but check no path_mtu (iWARP): the link's 4096 bounds it
        final int maxMtu = port == null ? 0 : device.profile().portMtuRule() == PortMtuRule.NETDEV_MAX_TOO
            ? PortAttributes.MTU_4096 : port.maxMtu();
        if (has(bits, QpAttrMask.PATH_MTU) && (a.pathMtu() < 1 || a.pathMtu() > maxMtu))
        {
            return "path_mtu=" + a.pathMtu() + " is not an IB MTU up to the port's max_mtu " + maxMtu + " ("
                + QpAttr.mtuBytes(maxMtu) + " bytes; enum ibv_mtu 1..5; rxe_qp_chk_attr)";
        }
        if (has(bits, QpAttrMask.PATH_MTU) && a.pathMtu() > port.activeMtu()
            && device.profile().pathMtuAboveActiveRefused())
        {
            return "path_mtu=" + a.pathMtu() + " (" + QpAttr.mtuBytes(a.pathMtu()) + " bytes) is above the port's "
                + "active_mtu " + port.activeMtu() + " (" + QpAttr.mtuBytes(port.activeMtu()) + " bytes, from the "
                + "netdev's MTU of " + device.netdev().mtuBytes() + " bytes: iboe_get_mtu), which "
                + device.profile().driver() + " refuses (check_mtu_validate); give path_mtu up to active_mtu, or "
                + "raise the netdev's MTU";
        }
        if (has(bits, QpAttrMask.MAX_QP_RD_ATOMIC) && a.maxRdAtomic() > d.maxQpInitRdAtom())
        {
            return "max_rd_atomic=" + a.maxRdAtomic() + " > max_qp_init_rd_atom=" + d.maxQpInitRdAtom()
                + " of " + device.name() + " (rxe_qp_chk_attr, mlx5_ib_modify_qp); the READs and atomics a QP keeps "
                + "outstanding are bounded by its own device as well as by the peer's responder resources: ask for at "
                + "most the smaller of this device's max_qp_init_rd_atom and the peer's max_dest_rd_atomic, not the "
                + "peer's number alone";
        }
        if (has(bits, QpAttrMask.MAX_DEST_RD_ATOMIC) && a.maxDestRdAtomic() > d.maxQpRdAtom()
            && !device.profile().follows(ProviderRule.DEST_RD_ATOMIC_UNCHECKED))
        {
            return "max_dest_rd_atomic=" + a.maxDestRdAtomic() + " > max_qp_rd_atom=" + d.maxQpRdAtom() + " of "
                + device.name() + " (mlx5_ib_modify_qp)";
        }
        return QpAttrValues.refusal(device.profile(), a, mask);
    }

    private static boolean has(final long bits, final QpAttrMask m)
    {
        return (bits & 1L << m.ordinal()) != 0;
    }

    /**
     * The checks of an address vector ({@code ibv_create_ah}, IBV_QP_AV): a port of the device, and on RoCE a GID
     * (the global route header is mandatory there: rxe {@code rxe_ah_chk_attr} and the core's
     * {@code rdma_check_ah_attr} refuse an Ethernet address without IB_AH_GRH). An iWARP port is Ethernet too but
     * not RoCE: {@code rdma_ah_find_type} gives its address vectors RDMA_AH_ATTR_TYPE_UNDEFINED, which
     * {@code rdma_check_ah_attr} lets through without a GRH (the driver ignores the address: the iWARP connection
     * manager's TCP stream decides the peer).
     *
     * @return why it is refused (EINVAL), or null.
     */
    static String ahRefusal(final SimDevice device, final AhAttr ah)
    {
        final DeviceAttributes d = device.profile().attributes();
        if (ah.portNum() < 1 || ah.portNum() > d.physPortCnt())
        {
            return "ah_attr.port_num=" + ah.portNum() + " is not a port of " + device.name() + " (1.."
                + d.physPortCnt() + ")";
        }
        if (!ah.isGlobal() && device.portAttributes().linkLayer() == PortAttributes.LINK_LAYER_ETHERNET
            && device.profile().traits().transport() != DriverTraits.Transport.IWARP)
        {
            return "an address vector without a GID on an Ethernet (RoCE) port: is_global is mandatory there "
                + "(rdma_check_ah_attr); give the destination GID";
        }
        if (ah.isGlobal() && (ah.sgidIndex() < 0 || ah.sgidIndex() >= device.portAttributes().gidTblLen()))
        {
            return "sgid_index=" + ah.sgidIndex() + " is outside the GID table of "
                + device.portAttributes().gidTblLen() + " entries";
        }
        return null;
    }

    /**
     * An address vector with a GRH whose {@code sgid_index} is inside the GID table but names an empty entry (past the
     * entries {@link GidTable} fills: on a RoCE port without an IPv4 address, index 1 of rxe's table): the kernel
     * takes the source GID's attributes from the table ({@code rdma_fill_sgid_attr}, {@code rdma_get_gid_attr}), which
     * answers ENODATA for an entry that is not valid.
     *
     * @return the port's valid entries when the index names an empty one (refused: ENODATA), or -1.
     */
    static int emptySgidValidEntries(final SimDevice device, final AhAttr ah)
    {
        if (!ah.isGlobal() || ah.portNum() < 1 || ah.portNum() > device.profile().attributes().physPortCnt())
        {
            return -1;
        }
        final int valid = GidTable.validEntries(device, ah.portNum());
        return ah.sgidIndex() < valid ? -1 : valid;
    }

    /** @return why the netdev adds no entry: its missing IPv4 address on a RoCE port, else "". */
    static String noIpv4Note(final SimDevice device)
    {
        return device.profile().gidKinds().roce() && device.netdev().ipv4() == null
            ? "; the netdev has no IPv4 address, so no ::ffff:a.b.c.d entries" : "";
    }

    /** @return true for the types whose QPs have a remote QP (connected service). */
    static boolean connected(final QpType type)
    {
        return type == QpType.RC || type == QpType.UC || type == QpType.XRC_SEND || type == QpType.XRC_RECV;
    }
}
