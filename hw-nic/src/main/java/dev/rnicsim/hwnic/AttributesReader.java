package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.IbvStructs.IBV_DEVICE_ATTR_EX;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.OdpCaps;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * {@code struct ibv_device_attr_ex} to {@link DeviceAttributes}: the GUIDs from network order ({@code __be64}) to
 * the number ibv_devinfo prints, unsigned 8- and 16-bit counts widened, {@code device_cap_flags} as its 32 bits
 * (the extended bits of {@code device_cap_flags_ex} are not among verbs-api's), the ODP capabilities from the
 * extended part (all zero when only ibv_query_device answered).
 *
 * <p>Stateless and thread safe.
 */
final class AttributesReader
{
    private AttributesReader()
    {
    }

    private static long at(final String... path)
    {
        final String[] full = new String[path.length + 1];
        full[0] = "orig_attr";
        System.arraycopy(path, 0, full, 1, path.length);
        return IbvStructs.offset(IBV_DEVICE_ATTR_EX, full);
    }

    private static int i32(final MemorySegment a, final String field)
    {
        return a.get(JAVA_INT, at(field));
    }

    /**
     * @param a a filled {@code struct ibv_device_attr_ex}.
     * @return the attributes.
     */
    static DeviceAttributes read(final MemorySegment a)
    {
        final int atomic = i32(a, "atomic_cap");
        return DeviceAttributes.builder()
            .fwVer(Libc.cString(a, at("fw_ver"), 64))
            .nodeGuid(a.get(JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), at("node_guid")))
            .sysImageGuid(a.get(JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), at("sys_image_guid")))
            .vendorId(i32(a, "vendor_id"))
            .vendorPartId(i32(a, "vendor_part_id"))
            .hwVer(i32(a, "hw_ver"))
            .physPortCnt(Byte.toUnsignedInt(a.get(JAVA_BYTE, at("phys_port_cnt"))))
            .maxMrSizeBytes(a.get(JAVA_LONG, at("max_mr_size")))
            .pageSizeCap(a.get(JAVA_LONG, at("page_size_cap")))
            .maxQp(i32(a, "max_qp"))
            .maxQpWr(i32(a, "max_qp_wr"))
            .deviceCapFlags(Integer.toUnsignedLong(i32(a, "device_cap_flags")))
            .maxSge(i32(a, "max_sge"))
            .maxSgeRd(i32(a, "max_sge_rd"))
            .maxCq(i32(a, "max_cq"))
            .maxCqe(i32(a, "max_cqe"))
            .maxMr(i32(a, "max_mr"))
            .maxPd(i32(a, "max_pd"))
            .maxQpRdAtom(i32(a, "max_qp_rd_atom"))
            .maxQpInitRdAtom(i32(a, "max_qp_init_rd_atom"))
            .maxResRdAtom(i32(a, "max_res_rd_atom"))
            .maxMw(i32(a, "max_mw"))
            .atomicCap(atomic >= 0 && atomic <= 2 ? AtomicCap.of(atomic) : AtomicCap.NONE)
            .maxSrq(i32(a, "max_srq"))
            .maxSrqWr(i32(a, "max_srq_wr"))
            .maxSrqSge(i32(a, "max_srq_sge"))
            .maxMcastGrp(i32(a, "max_mcast_grp"))
            .maxMcastQpAttach(i32(a, "max_mcast_qp_attach"))
            .maxTotalMcastQpAttach(i32(a, "max_total_mcast_qp_attach"))
            .maxAh(i32(a, "max_ah"))
            .maxPkeys(Short.toUnsignedInt(a.get(JAVA_SHORT, at("max_pkeys"))))
            .localCaAckDelay(Byte.toUnsignedInt(a.get(JAVA_BYTE, at("local_ca_ack_delay"))))
            .odpCaps(new OdpCaps(
                (int)a.get(JAVA_LONG, IbvStructs.offset(IBV_DEVICE_ATTR_EX, "odp_caps", "general_caps")),
                a.get(JAVA_INT, IbvStructs.offset(IBV_DEVICE_ATTR_EX, "odp_caps", "per_transport_caps",
                    "rc_odp_caps")),
                a.get(JAVA_INT, IbvStructs.offset(IBV_DEVICE_ATTR_EX, "odp_caps", "per_transport_caps",
                    "uc_odp_caps")),
                a.get(JAVA_INT, IbvStructs.offset(IBV_DEVICE_ATTR_EX, "odp_caps", "per_transport_caps",
                    "ud_odp_caps")),
                a.get(JAVA_INT, IbvStructs.offset(IBV_DEVICE_ATTR_EX, "xrc_odp_caps"))))
            .build();
    }
}
