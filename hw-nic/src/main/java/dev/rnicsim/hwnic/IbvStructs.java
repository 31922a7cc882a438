package dev.rnicsim.hwnic;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.util.List;
import java.util.Locale;

/**
 * The C structs of {@code <infiniband/verbs.h>} (rdma-core, ABI of libibverbs.so.1) that the binding reads or
 * writes, declared once as layouts whose member names are the C member names, and the byte offsets the binding
 * uses, taken from those layouts. Members of an anonymous C union are grouped under a Java name starting with
 * {@code anon_}; the layout check drops that element to name the C member.
 *
 * <p>The layouts are those of LP64 Linux (x86_64 and aarch64): pointers, {@code size_t} and {@code uint64_t} of 8
 * bytes, C enums of 4. Only {@code pthread_mutex_t} differs between the two (40 and 48 bytes, glibc's
 * {@code __SIZEOF_PTHREAD_MUTEX_T}); it sits inside {@code struct ibv_context}, {@code ibv_cq} and {@code ibv_qp}
 * after every member the binding reads, except for {@code ibv_context.abi_compat}. The layout check
 * ({@code LayoutCheckTest}) compiles a C program against the installed headers and compares every size and offset
 * here with gcc's. The work-request and completion structs are in {@link WrStructs}; {@link #ALL} lists them too.
 *
 * <p>Immutable and thread safe.
 */
final class IbvStructs
{
    /** {@code sizeof(pthread_mutex_t)} of glibc on this machine's architecture. */
    static final long PTHREAD_MUTEX_BYTES = switch (System.getProperty("os.arch").toLowerCase(Locale.ROOT))
    {
        case "aarch64", "arm64" -> 48;
        default -> 40;
    };
    /** {@code sizeof(pthread_cond_t)} of glibc on LP64. */
    static final long PTHREAD_COND_BYTES = 48;
    /** {@code IBV_SYSFS_NAME_MAX}. */
    static final int IBV_SYSFS_NAME_MAX = 64;
    /** {@code IBV_SYSFS_PATH_MAX}. */
    static final int IBV_SYSFS_PATH_MAX = 256;

    private IbvStructs()
    {
    }

    static MemoryLayout u8(final String name)
    {
        return JAVA_BYTE.withName(name);
    }

    static MemoryLayout u16(final String name)
    {
        return JAVA_SHORT.withName(name);
    }

    static MemoryLayout u32(final String name)
    {
        return JAVA_INT.withName(name);
    }

    static MemoryLayout u64(final String name)
    {
        return JAVA_LONG.withName(name);
    }

    static MemoryLayout ptr(final String name)
    {
        return ADDRESS.withName(name);
    }

    private static MemoryLayout chars(final String name, final long count)
    {
        return sequenceLayout(count, JAVA_BYTE).withName(name);
    }

    /** An opaque glibc lock, 8-byte aligned as its union with {@code long} makes it. */
    private static MemoryLayout opaque(final String name, final long bytes)
    {
        return sequenceLayout(bytes / Long.BYTES, JAVA_LONG).withName(name);
    }

    static MemoryLayout pad(final long bytes)
    {
        return paddingLayout(bytes);
    }

    // ------------------------------------------------------------------ device and context

    /** {@code struct ibv_device}: one entry of ibv_get_device_list. */
    static final StructLayout IBV_DEVICE = structLayout(
        structLayout(ptr("_dummy1"), ptr("_dummy2")).withName("_ops"),
        u32("node_type"),
        u32("transport_type"),
        chars("name", IBV_SYSFS_NAME_MAX),
        chars("dev_name", IBV_SYSFS_NAME_MAX),
        chars("dev_path", IBV_SYSFS_PATH_MAX),
        chars("ibdev_path", IBV_SYSFS_PATH_MAX)).withName("ibv_device");

    /** {@code struct ibv_device_attr} (ibv_query_device(3)). */
    static final StructLayout IBV_DEVICE_ATTR = structLayout(
        chars("fw_ver", 64),
        u64("node_guid"),
        u64("sys_image_guid"),
        u64("max_mr_size"),
        u64("page_size_cap"),
        u32("vendor_id"),
        u32("vendor_part_id"),
        u32("hw_ver"),
        u32("max_qp"),
        u32("max_qp_wr"),
        u32("device_cap_flags"),
        u32("max_sge"),
        u32("max_sge_rd"),
        u32("max_cq"),
        u32("max_cqe"),
        u32("max_mr"),
        u32("max_pd"),
        u32("max_qp_rd_atom"),
        u32("max_ee_rd_atom"),
        u32("max_res_rd_atom"),
        u32("max_qp_init_rd_atom"),
        u32("max_ee_init_rd_atom"),
        u32("atomic_cap"),
        u32("max_ee"),
        u32("max_rdd"),
        u32("max_mw"),
        u32("max_raw_ipv6_qp"),
        u32("max_raw_ethy_qp"),
        u32("max_mcast_grp"),
        u32("max_mcast_qp_attach"),
        u32("max_total_mcast_qp_attach"),
        u32("max_ah"),
        u32("max_fmr"),
        u32("max_map_per_fmr"),
        u32("max_srq"),
        u32("max_srq_wr"),
        u32("max_srq_sge"),
        u16("max_pkeys"),
        u8("local_ca_ack_delay"),
        u8("phys_port_cnt"),
        pad(4)).withName("ibv_device_attr");

    /** {@code struct ibv_odp_caps}. */
    static final StructLayout IBV_ODP_CAPS = structLayout(
        u64("general_caps"),
        structLayout(u32("rc_odp_caps"), u32("uc_odp_caps"), u32("ud_odp_caps")).withName("per_transport_caps"),
        pad(4)).withName("ibv_odp_caps");

    /** {@code struct ibv_device_attr_ex} (ibv_query_device_ex(3)): its size is passed to the provider. */
    static final StructLayout IBV_DEVICE_ATTR_EX = structLayout(
        IBV_DEVICE_ATTR.withName("orig_attr"),
        u32("comp_mask"),
        pad(4),
        IBV_ODP_CAPS.withName("odp_caps"),
        u64("completion_timestamp_mask"),
        u64("hca_core_clock"),
        u64("device_cap_flags_ex"),
        structLayout(u32("max_tso"), u32("supported_qpts")).withName("tso_caps"),
        structLayout(u32("supported_qpts"), u32("max_rwq_indirection_tables"), u32("max_rwq_indirection_table_size"),
            pad(4), u64("rx_hash_fields_mask"), u8("rx_hash_function"), pad(7)).withName("rss_caps"),
        u32("max_wq_type_rq"),
        structLayout(u32("qp_rate_limit_min"), u32("qp_rate_limit_max"), u32("supported_qpts"))
            .withName("packet_pacing_caps"),
        u32("raw_packet_caps"),
        structLayout(u32("max_rndv_hdr_size"), u32("max_num_tags"), u32("flags"), u32("max_ops"), u32("max_sge"))
            .withName("tm_caps"),
        structLayout(u16("max_cq_count"), u16("max_cq_period")).withName("cq_mod_caps"),
        pad(4),
        u64("max_dm_size"),
        structLayout(u16("fetch_add"), u16("swap"), u16("compare_swap")).withName("pci_atomic_caps"),
        pad(2),
        u32("xrc_odp_caps"),
        u32("phys_port_cnt_ex")).withName("ibv_device_attr_ex");

    /** {@code struct ibv_query_device_ex_input}. */
    static final StructLayout IBV_QUERY_DEVICE_EX_INPUT = structLayout(u32("comp_mask"))
        .withName("ibv_query_device_ex_input");

    /**
     * {@code struct ibv_context_ops}: the provider's function table. The inline verbs of verbs.h
     * ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq}, {@code ibv_alloc_mw},
     * {@code ibv_dealloc_mw}, {@code ibv_bind_mw}) are calls through these pointers; libibverbs exports no symbol
     * for them.
     */
    static final StructLayout IBV_CONTEXT_OPS = structLayout(
        ptr("_compat_query_device"),
        ptr("_compat_query_port"),
        ptr("_compat_alloc_pd"),
        ptr("_compat_dealloc_pd"),
        ptr("_compat_reg_mr"),
        ptr("_compat_rereg_mr"),
        ptr("_compat_dereg_mr"),
        ptr("alloc_mw"),
        ptr("bind_mw"),
        ptr("dealloc_mw"),
        ptr("_compat_create_cq"),
        ptr("poll_cq"),
        ptr("req_notify_cq"),
        ptr("_compat_cq_event"),
        ptr("_compat_resize_cq"),
        ptr("_compat_destroy_cq"),
        ptr("_compat_create_srq"),
        ptr("_compat_modify_srq"),
        ptr("_compat_query_srq"),
        ptr("_compat_destroy_srq"),
        ptr("post_srq_recv"),
        ptr("_compat_create_qp"),
        ptr("_compat_query_qp"),
        ptr("_compat_modify_qp"),
        ptr("_compat_destroy_qp"),
        ptr("post_send"),
        ptr("post_recv"),
        ptr("_compat_create_ah"),
        ptr("_compat_destroy_ah"),
        ptr("_compat_attach_mcast"),
        ptr("_compat_detach_mcast"),
        ptr("_compat_async_event")).withName("ibv_context_ops");

    /** {@code struct ibv_context}. */
    static final StructLayout IBV_CONTEXT = structLayout(
        ptr("device"),
        IBV_CONTEXT_OPS.withName("ops"),
        u32("cmd_fd"),
        u32("async_fd"),
        u32("num_comp_vectors"),
        pad(4),
        opaque("mutex", PTHREAD_MUTEX_BYTES),
        ptr("abi_compat")).withName("ibv_context");

    /**
     * {@code struct verbs_context}: the extended function table that precedes {@code struct ibv_context} when
     * {@code abi_compat == __VERBS_ABI_IS_EXTENDED}; {@code ibv_query_device_ex} and {@code ibv_advise_mr} are
     * inline calls through it ({@code verbs_get_ctx_op} in verbs.h).
     */
    static final StructLayout VERBS_CONTEXT = structLayout(
        ptr("query_port"),
        ptr("advise_mr"),
        ptr("alloc_null_mr"),
        ptr("read_counters"),
        ptr("attach_counters_point_flow"),
        ptr("create_counters"),
        ptr("destroy_counters"),
        ptr("reg_dm_mr"),
        ptr("alloc_dm"),
        ptr("free_dm"),
        ptr("modify_flow_action_esp"),
        ptr("destroy_flow_action"),
        ptr("create_flow_action_esp"),
        ptr("modify_qp_rate_limit"),
        ptr("alloc_parent_domain"),
        ptr("dealloc_td"),
        ptr("alloc_td"),
        ptr("modify_cq"),
        ptr("post_srq_ops"),
        ptr("destroy_rwq_ind_table"),
        ptr("create_rwq_ind_table"),
        ptr("destroy_wq"),
        ptr("modify_wq"),
        ptr("create_wq"),
        ptr("query_rt_values"),
        ptr("create_cq_ex"),
        ptr("priv"),
        ptr("query_device_ex"),
        ptr("ibv_destroy_flow"),
        ptr("ABI_placeholder2"),
        ptr("ibv_create_flow"),
        ptr("ABI_placeholder1"),
        ptr("open_qp"),
        ptr("create_qp_ex"),
        ptr("get_srq_num"),
        ptr("create_srq_ex"),
        ptr("open_xrcd"),
        ptr("close_xrcd"),
        u64("_ABI_placeholder3"),
        u64("sz"),
        IBV_CONTEXT.withName("context")).withName("verbs_context");

    /** {@code struct ibv_port_attr} (ibv_query_port(3)). */
    static final StructLayout IBV_PORT_ATTR = structLayout(
        u32("state"),
        u32("max_mtu"),
        u32("active_mtu"),
        u32("gid_tbl_len"),
        u32("port_cap_flags"),
        u32("max_msg_sz"),
        u32("bad_pkey_cntr"),
        u32("qkey_viol_cntr"),
        u16("pkey_tbl_len"),
        u16("lid"),
        u16("sm_lid"),
        u8("lmc"),
        u8("max_vl_num"),
        u8("sm_sl"),
        u8("subnet_timeout"),
        u8("init_type_reply"),
        u8("active_width"),
        u8("active_speed"),
        u8("phys_state"),
        u8("link_layer"),
        u8("flags"),
        u16("port_cap_flags2"),
        pad(2)).withName("ibv_port_attr");

    /** {@code union ibv_gid}. */
    static final UnionLayout IBV_GID = unionLayout(
        chars("raw", 16),
        structLayout(u64("subnet_prefix"), u64("interface_id")).withName("global")).withName("ibv_gid");

    // ------------------------------------------------------------------ PD, MR, MW, CQ, QP

    /** {@code struct ibv_pd}. */
    static final StructLayout IBV_PD = structLayout(
        ptr("context"),
        u32("handle"),
        pad(4)).withName("ibv_pd");

    /** {@code struct ibv_mr}. */
    static final StructLayout IBV_MR = structLayout(
        ptr("context"),
        ptr("pd"),
        ptr("addr"),
        u64("length"),
        u32("handle"),
        u32("lkey"),
        u32("rkey"),
        pad(4)).withName("ibv_mr");

    /** {@code struct ibv_mw}. */
    static final StructLayout IBV_MW = structLayout(
        ptr("context"),
        ptr("pd"),
        u32("rkey"),
        u32("handle"),
        u32("type"),
        pad(4)).withName("ibv_mw");

    /** {@code struct ibv_cq}. */
    static final StructLayout IBV_CQ = structLayout(
        ptr("context"),
        ptr("channel"),
        ptr("cq_context"),
        u32("handle"),
        u32("cqe"),
        opaque("mutex", PTHREAD_MUTEX_BYTES),
        opaque("cond", PTHREAD_COND_BYTES),
        u32("comp_events_completed"),
        u32("async_events_completed")).withName("ibv_cq");

    /** {@code struct ibv_qp}. */
    static final StructLayout IBV_QP = structLayout(
        ptr("context"),
        ptr("qp_context"),
        ptr("pd"),
        ptr("send_cq"),
        ptr("recv_cq"),
        ptr("srq"),
        u32("handle"),
        u32("qp_num"),
        u32("state"),
        u32("qp_type"),
        opaque("mutex", PTHREAD_MUTEX_BYTES),
        opaque("cond", PTHREAD_COND_BYTES),
        u32("events_completed"),
        pad(4)).withName("ibv_qp");

    /** {@code struct ibv_qp_cap}. */
    static final StructLayout IBV_QP_CAP = structLayout(
        u32("max_send_wr"),
        u32("max_recv_wr"),
        u32("max_send_sge"),
        u32("max_recv_sge"),
        u32("max_inline_data")).withName("ibv_qp_cap");

    /** {@code struct ibv_qp_init_attr}. */
    static final StructLayout IBV_QP_INIT_ATTR = structLayout(
        ptr("qp_context"),
        ptr("send_cq"),
        ptr("recv_cq"),
        ptr("srq"),
        IBV_QP_CAP.withName("cap"),
        u32("qp_type"),
        u32("sq_sig_all"),
        pad(4)).withName("ibv_qp_init_attr");

    /** {@code struct ibv_global_route}. */
    static final StructLayout IBV_GLOBAL_ROUTE = structLayout(
        IBV_GID.withName("dgid"),
        u32("flow_label"),
        u8("sgid_index"),
        u8("hop_limit"),
        u8("traffic_class"),
        pad(1)).withName("ibv_global_route");

    /** {@code struct ibv_ah_attr}. */
    static final StructLayout IBV_AH_ATTR = structLayout(
        IBV_GLOBAL_ROUTE.withName("grh"),
        u16("dlid"),
        u8("sl"),
        u8("src_path_bits"),
        u8("static_rate"),
        u8("is_global"),
        u8("port_num"),
        pad(1)).withName("ibv_ah_attr");

    /** {@code struct ibv_qp_attr} (ibv_modify_qp(3)). */
    static final StructLayout IBV_QP_ATTR = structLayout(
        u32("qp_state"),
        u32("cur_qp_state"),
        u32("path_mtu"),
        u32("path_mig_state"),
        u32("qkey"),
        u32("rq_psn"),
        u32("sq_psn"),
        u32("dest_qp_num"),
        u32("qp_access_flags"),
        IBV_QP_CAP.withName("cap"),
        IBV_AH_ATTR.withName("ah_attr"),
        IBV_AH_ATTR.withName("alt_ah_attr"),
        u16("pkey_index"),
        u16("alt_pkey_index"),
        u8("en_sqd_async_notify"),
        u8("sq_draining"),
        u8("max_rd_atomic"),
        u8("max_dest_rd_atomic"),
        u8("min_rnr_timer"),
        u8("port_num"),
        u8("timeout"),
        u8("retry_cnt"),
        u8("rnr_retry"),
        u8("alt_port_num"),
        u8("alt_timeout"),
        pad(1),
        u32("rate_limit"),
        pad(4)).withName("ibv_qp_attr");

    /** Every struct above and those of {@link WrStructs}, with its C type, for the layout check. */
    static final List<CType> ALL = List.of(
        new CType("struct ibv_device", IBV_DEVICE),
        new CType("struct ibv_device_attr", IBV_DEVICE_ATTR),
        new CType("struct ibv_odp_caps", IBV_ODP_CAPS),
        new CType("struct ibv_device_attr_ex", IBV_DEVICE_ATTR_EX),
        new CType("struct ibv_query_device_ex_input", IBV_QUERY_DEVICE_EX_INPUT),
        new CType("struct ibv_context_ops", IBV_CONTEXT_OPS),
        new CType("struct ibv_context", IBV_CONTEXT),
        new CType("struct verbs_context", VERBS_CONTEXT),
        new CType("struct ibv_port_attr", IBV_PORT_ATTR),
        new CType("union ibv_gid", IBV_GID),
        new CType("struct ibv_pd", IBV_PD),
        new CType("struct ibv_mr", IBV_MR),
        new CType("struct ibv_mw", IBV_MW),
        new CType("struct ibv_cq", IBV_CQ),
        new CType("struct ibv_qp", IBV_QP),
        new CType("struct ibv_qp_cap", IBV_QP_CAP),
        new CType("struct ibv_qp_init_attr", IBV_QP_INIT_ATTR),
        new CType("struct ibv_global_route", IBV_GLOBAL_ROUTE),
        new CType("struct ibv_ah_attr", IBV_AH_ATTR),
        new CType("struct ibv_qp_attr", IBV_QP_ATTR),
        new CType("struct ibv_sge", WrStructs.IBV_SGE),
        new CType("struct ibv_mw_bind_info", WrStructs.IBV_MW_BIND_INFO),
        new CType("struct ibv_mw_bind", WrStructs.IBV_MW_BIND),
        new CType("struct ibv_send_wr", WrStructs.IBV_SEND_WR),
        new CType("struct ibv_recv_wr", WrStructs.IBV_RECV_WR),
        new CType("struct ibv_wc", WrStructs.IBV_WC));

    /**
     * A C type and its Java layout.
     *
     * @param cName  the C type, e.g. {@code struct ibv_mr}.
     * @param layout the layout.
     */
    record CType(String cName, GroupLayout layout)
    {
    }

    /**
     * @param layout a struct layout.
     * @param path   member names, outermost first.
     * @return the member's byte offset.
     */
    static long offset(final GroupLayout layout, final String... path)
    {
        final PathElement[] elements = new PathElement[path.length];
        for (int i = 0; i < path.length; i++)
        {
            elements[i] = PathElement.groupElement(path[i]);
        }
        return layout.byteOffset(elements);
    }

    // ------------------------------------------------------------------ offsets the binding uses

    static final long DEVICE_NAME = offset(IBV_DEVICE, "name");
    static final long DEVICE_DEV_NAME = offset(IBV_DEVICE, "dev_name");
    static final long DEVICE_IBDEV_PATH = offset(IBV_DEVICE, "ibdev_path");
    static final long DEVICE_TRANSPORT_TYPE = offset(IBV_DEVICE, "transport_type");

    static final long CONTEXT_OPS_ALLOC_MW = offset(IBV_CONTEXT, "ops", "alloc_mw");
    static final long CONTEXT_OPS_BIND_MW = offset(IBV_CONTEXT, "ops", "bind_mw");
    static final long CONTEXT_OPS_DEALLOC_MW = offset(IBV_CONTEXT, "ops", "dealloc_mw");
    static final long CONTEXT_OPS_POLL_CQ = offset(IBV_CONTEXT, "ops", "poll_cq");
    static final long CONTEXT_OPS_POST_SEND = offset(IBV_CONTEXT, "ops", "post_send");
    static final long CONTEXT_OPS_POST_RECV = offset(IBV_CONTEXT, "ops", "post_recv");
    static final long CONTEXT_ABI_COMPAT = offset(IBV_CONTEXT, "abi_compat");
    /** Offset of {@code struct ibv_context} inside {@code struct verbs_context}: the extended table is below it. */
    static final long VERBS_CONTEXT_CONTEXT = offset(VERBS_CONTEXT, "context");
    static final long VERBS_CONTEXT_SZ = offset(VERBS_CONTEXT, "sz");
    static final long VERBS_CONTEXT_QUERY_DEVICE_EX = offset(VERBS_CONTEXT, "query_device_ex");
    static final long VERBS_CONTEXT_ADVISE_MR = offset(VERBS_CONTEXT, "advise_mr");

    static final long PORT_ATTR_STATE = offset(IBV_PORT_ATTR, "state");
    static final long PORT_ATTR_ACTIVE_MTU = offset(IBV_PORT_ATTR, "active_mtu");
    static final long PORT_ATTR_MAX_MTU = offset(IBV_PORT_ATTR, "max_mtu");
    static final long PORT_ATTR_GID_TBL_LEN = offset(IBV_PORT_ATTR, "gid_tbl_len");
    static final long PORT_ATTR_PORT_CAP_FLAGS = offset(IBV_PORT_ATTR, "port_cap_flags");
    static final long PORT_ATTR_MAX_MSG_SZ = offset(IBV_PORT_ATTR, "max_msg_sz");
    static final long PORT_ATTR_PKEY_TBL_LEN = offset(IBV_PORT_ATTR, "pkey_tbl_len");
    static final long PORT_ATTR_LID = offset(IBV_PORT_ATTR, "lid");
    static final long PORT_ATTR_LINK_LAYER = offset(IBV_PORT_ATTR, "link_layer");

    static final long MR_ADDR = offset(IBV_MR, "addr");
    static final long MR_LENGTH = offset(IBV_MR, "length");
    static final long MR_PD = offset(IBV_MR, "pd");
    static final long MR_LKEY = offset(IBV_MR, "lkey");
    static final long MR_RKEY = offset(IBV_MR, "rkey");

    static final long MW_PD = offset(IBV_MW, "pd");
    static final long MW_RKEY = offset(IBV_MW, "rkey");
    static final long MW_TYPE = offset(IBV_MW, "type");

    static final long CQ_CQE = offset(IBV_CQ, "cqe");

    static final long QP_QP_NUM = offset(IBV_QP, "qp_num");

    static final long QP_INIT_SEND_CQ = offset(IBV_QP_INIT_ATTR, "send_cq");
    static final long QP_INIT_RECV_CQ = offset(IBV_QP_INIT_ATTR, "recv_cq");
    static final long QP_INIT_MAX_SEND_WR = offset(IBV_QP_INIT_ATTR, "cap", "max_send_wr");
    static final long QP_INIT_MAX_RECV_WR = offset(IBV_QP_INIT_ATTR, "cap", "max_recv_wr");
    static final long QP_INIT_MAX_SEND_SGE = offset(IBV_QP_INIT_ATTR, "cap", "max_send_sge");
    static final long QP_INIT_MAX_RECV_SGE = offset(IBV_QP_INIT_ATTR, "cap", "max_recv_sge");
    static final long QP_INIT_MAX_INLINE_DATA = offset(IBV_QP_INIT_ATTR, "cap", "max_inline_data");
    static final long QP_INIT_QP_TYPE = offset(IBV_QP_INIT_ATTR, "qp_type");
    static final long QP_INIT_SQ_SIG_ALL = offset(IBV_QP_INIT_ATTR, "sq_sig_all");

    static final long QP_ATTR_QP_STATE = offset(IBV_QP_ATTR, "qp_state");
    static final long QP_ATTR_PATH_MTU = offset(IBV_QP_ATTR, "path_mtu");
    static final long QP_ATTR_RQ_PSN = offset(IBV_QP_ATTR, "rq_psn");
    static final long QP_ATTR_SQ_PSN = offset(IBV_QP_ATTR, "sq_psn");
    static final long QP_ATTR_DEST_QP_NUM = offset(IBV_QP_ATTR, "dest_qp_num");
    static final long QP_ATTR_QP_ACCESS_FLAGS = offset(IBV_QP_ATTR, "qp_access_flags");
    static final long QP_ATTR_AH_DGID = offset(IBV_QP_ATTR, "ah_attr", "grh", "dgid");
    static final long QP_ATTR_AH_SGID_INDEX = offset(IBV_QP_ATTR, "ah_attr", "grh", "sgid_index");
    static final long QP_ATTR_AH_HOP_LIMIT = offset(IBV_QP_ATTR, "ah_attr", "grh", "hop_limit");
    static final long QP_ATTR_AH_DLID = offset(IBV_QP_ATTR, "ah_attr", "dlid");
    static final long QP_ATTR_AH_IS_GLOBAL = offset(IBV_QP_ATTR, "ah_attr", "is_global");
    static final long QP_ATTR_AH_PORT_NUM = offset(IBV_QP_ATTR, "ah_attr", "port_num");
    static final long QP_ATTR_PKEY_INDEX = offset(IBV_QP_ATTR, "pkey_index");
    static final long QP_ATTR_MAX_RD_ATOMIC = offset(IBV_QP_ATTR, "max_rd_atomic");
    static final long QP_ATTR_MAX_DEST_RD_ATOMIC = offset(IBV_QP_ATTR, "max_dest_rd_atomic");
    static final long QP_ATTR_MIN_RNR_TIMER = offset(IBV_QP_ATTR, "min_rnr_timer");
    static final long QP_ATTR_PORT_NUM = offset(IBV_QP_ATTR, "port_num");
    static final long QP_ATTR_TIMEOUT = offset(IBV_QP_ATTR, "timeout");
    static final long QP_ATTR_RETRY_CNT = offset(IBV_QP_ATTR, "retry_cnt");
    static final long QP_ATTR_RNR_RETRY = offset(IBV_QP_ATTR, "rnr_retry");
    static final long QP_ATTR_CUR_QP_STATE = offset(IBV_QP_ATTR, "cur_qp_state");
    static final long QP_ATTR_QKEY = offset(IBV_QP_ATTR, "qkey");
    static final long QP_ATTR_SQ_DRAINING = offset(IBV_QP_ATTR, "sq_draining");

}
