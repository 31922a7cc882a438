package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.PortAttributes;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The numeric fields of {@code ibv_query_device_ex} and of {@code ibv_query_port} (port 1) as script device fields,
 * by the names {@code ibv_devinfo -v} prints ({@code nic.max_mw}, {@code nic.rc_odp_caps}, {@code nic.gid_tbl_len}).
 * Stateless.
 */
final class DeviceFields
{
    private static final Map<String, Function<SimDevice, Long>> FIELDS = fields();

    private DeviceFields()
    {
    }

    private static Map<String, Function<SimDevice, Long>> fields()
    {
        final Map<String, Function<SimDevice, Long>> m = new LinkedHashMap<>();
        attr(m, "node_guid", DeviceAttributes::nodeGuid);
        attr(m, "sys_image_guid", DeviceAttributes::sysImageGuid);
        attr(m, "vendor_id", a -> (long)a.vendorId());
        attr(m, "vendor_part_id", a -> (long)a.vendorPartId());
        attr(m, "hw_ver", a -> (long)a.hwVer());
        attr(m, "phys_port_cnt", a -> (long)a.physPortCnt());
        attr(m, "max_mr_size", DeviceAttributes::maxMrSizeBytes);
        attr(m, "max_qp", a -> (long)a.maxQp());
        attr(m, "max_qp_wr", a -> (long)a.maxQpWr());
        attr(m, "device_cap_flags", DeviceAttributes::deviceCapFlags);
        attr(m, "max_sge", a -> (long)a.maxSge());
        attr(m, "max_sge_rd", a -> (long)a.maxSgeRd());
        attr(m, "max_cq", a -> (long)a.maxCq());
        attr(m, "max_cqe", a -> (long)a.maxCqe());
        attr(m, "max_pd", a -> (long)a.maxPd());
        attr(m, "max_qp_rd_atom", a -> (long)a.maxQpRdAtom());
        attr(m, "max_qp_init_rd_atom", a -> (long)a.maxQpInitRdAtom());
        attr(m, "max_res_rd_atom", a -> (long)a.maxResRdAtom());
        attr(m, "max_mw", a -> (long)a.maxMw());
        attr(m, "max_mcast_grp", a -> (long)a.maxMcastGrp());
        attr(m, "max_mcast_qp_attach", a -> (long)a.maxMcastQpAttach());
        attr(m, "max_total_mcast_qp_attach", a -> (long)a.maxTotalMcastQpAttach());
        attr(m, "max_ah", a -> (long)a.maxAh());
        attr(m, "atomic_cap", a -> (long)a.atomicCap().ordinal());
        attr(m, "max_srq", a -> (long)a.maxSrq());
        attr(m, "max_srq_wr", a -> (long)a.maxSrqWr());
        attr(m, "max_srq_sge", a -> (long)a.maxSrqSge());
        attr(m, "max_pkeys", a -> (long)a.maxPkeys());
        attr(m, "local_ca_ack_delay", a -> (long)a.localCaAckDelay());
        attr(m, "general_odp_caps", a -> (long)a.odpCaps().generalCaps());
        attr(m, "rc_odp_caps", a -> (long)a.odpCaps().rcOdpCaps());
        attr(m, "uc_odp_caps", a -> (long)a.odpCaps().ucOdpCaps());
        attr(m, "ud_odp_caps", a -> (long)a.odpCaps().udOdpCaps());
        attr(m, "xrc_odp_caps", a -> (long)a.odpCaps().xrcOdpCaps());
        m.put("max_dm_size", d -> d.profile().maxDmSizeBytes());
        port(m, "port_state", p -> (long)p.state());
        port(m, "max_mtu", p -> (long)p.maxMtu());
        port(m, "active_mtu", p -> (long)p.activeMtu());
        port(m, "gid_tbl_len", p -> (long)p.gidTblLen());
        port(m, "port_cap_flags", PortAttributes::portCapFlags);
        port(m, "max_msg_sz", PortAttributes::maxMsgSzBytes);
        port(m, "pkey_tbl_len", p -> (long)p.pkeyTblLen());
        port(m, "link_layer", p -> (long)p.linkLayer());
        return m;
    }

    private static void attr(final Map<String, Function<SimDevice, Long>> m, final String name,
        final Function<DeviceAttributes, Long> f)
    {
        m.put(name, d -> f.apply(d.attributes()));
    }

    private static void port(final Map<String, Function<SimDevice, Long>> m, final String name,
        final Function<PortAttributes, Long> f)
    {
        m.put(name, d -> f.apply(d.portAttributes()));
    }

    /**
     * @return the field's value, or null when there is no such field.
     */
    static Long value(final SimDevice d, final String field)
    {
        final Function<SimDevice, Long> f = FIELDS.get(field);
        return f == null ? null : f.apply(d);
    }

    /** @return the field names, in ibv_devinfo's order. */
    static java.util.Set<String> names()
    {
        return FIELDS.keySet();
    }
}
