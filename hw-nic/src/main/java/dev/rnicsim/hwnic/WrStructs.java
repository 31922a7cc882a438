package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.IbvStructs.offset;
import static dev.rnicsim.hwnic.IbvStructs.pad;
import static dev.rnicsim.hwnic.IbvStructs.ptr;
import static dev.rnicsim.hwnic.IbvStructs.u16;
import static dev.rnicsim.hwnic.IbvStructs.u32;
import static dev.rnicsim.hwnic.IbvStructs.u64;
import static dev.rnicsim.hwnic.IbvStructs.u8;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;

import java.lang.foreign.StructLayout;

/**
 * The work-request and completion structs of {@code <infiniband/verbs.h>} (rdma-core 44, LP64) as java.lang.foreign
 * layouts, member names as in C, and the offsets the binding uses: {@code struct ibv_sge}, {@code ibv_mw_bind_info},
 * {@code ibv_mw_bind}, {@code ibv_send_wr}, {@code ibv_recv_wr} and {@code ibv_wc} (ibv_post_send(3),
 * ibv_post_recv(3), ibv_bind_mw(3), ibv_poll_cq(3)). The device, context and object structs are in
 * {@link IbvStructs}, whose {@link IbvStructs#ALL} lists these too for the layout check.
 *
 * <p>Immutable.
 */
final class WrStructs
{
    private WrStructs()
    {
    }

    /** {@code struct ibv_sge}. */
    static final StructLayout IBV_SGE = structLayout(
        u64("addr"),
        u32("length"),
        u32("lkey")).withName("ibv_sge");

    /** {@code struct ibv_mw_bind_info}. */
    static final StructLayout IBV_MW_BIND_INFO = structLayout(
        ptr("mr"),
        u64("addr"),
        u64("length"),
        u32("mw_access_flags"),
        pad(4)).withName("ibv_mw_bind_info");

    /** {@code struct ibv_mw_bind} (ibv_bind_mw(3)). */
    static final StructLayout IBV_MW_BIND = structLayout(
        u64("wr_id"),
        u32("send_flags"),
        pad(4),
        IBV_MW_BIND_INFO.withName("bind_info")).withName("ibv_mw_bind");

    /** {@code struct ibv_send_wr} (ibv_post_send(3)). */
    static final StructLayout IBV_SEND_WR = structLayout(
        u64("wr_id"),
        ptr("next"),
        ptr("sg_list"),
        u32("num_sge"),
        u32("opcode"),
        u32("send_flags"),
        unionLayout(u32("imm_data"), u32("invalidate_rkey")).withName("anon_imm"),
        unionLayout(
            structLayout(u64("remote_addr"), u32("rkey"), pad(4)).withName("rdma"),
            structLayout(u64("remote_addr"), u64("compare_add"), u64("swap"), u32("rkey"), pad(4)).withName("atomic"),
            structLayout(ptr("ah"), u32("remote_qpn"), u32("remote_qkey")).withName("ud")).withName("wr"),
        unionLayout(structLayout(u32("remote_srqn")).withName("xrc")).withName("qp_type"),
        pad(4),
        unionLayout(
            structLayout(ptr("mw"), u32("rkey"), pad(4), IBV_MW_BIND_INFO.withName("bind_info")).withName("bind_mw"),
            structLayout(ptr("hdr"), u16("hdr_sz"), u16("mss"), pad(4)).withName("tso")).withName("anon_bind"))
        .withName("ibv_send_wr");

    /** {@code struct ibv_recv_wr} (ibv_post_recv(3)). */
    static final StructLayout IBV_RECV_WR = structLayout(
        u64("wr_id"),
        ptr("next"),
        ptr("sg_list"),
        u32("num_sge"),
        pad(4)).withName("ibv_recv_wr");

    /** {@code struct ibv_wc} (ibv_poll_cq(3)). */
    static final StructLayout IBV_WC = structLayout(
        u64("wr_id"),
        u32("status"),
        u32("opcode"),
        u32("vendor_err"),
        u32("byte_len"),
        unionLayout(u32("imm_data"), u32("invalidated_rkey")).withName("anon_imm"),
        u32("qp_num"),
        u32("src_qp"),
        u32("wc_flags"),
        u16("pkey_index"),
        u16("slid"),
        u8("sl"),
        u8("dlid_path_bits"),
        pad(2)).withName("ibv_wc");


    // ------------------------------------------------------------------ offsets the binding uses

    static final long SGE_ADDR = offset(IBV_SGE, "addr");
    static final long SGE_LENGTH = offset(IBV_SGE, "length");
    static final long SGE_LKEY = offset(IBV_SGE, "lkey");

    static final long BIND_INFO_MR = offset(IBV_MW_BIND_INFO, "mr");
    static final long BIND_INFO_ADDR = offset(IBV_MW_BIND_INFO, "addr");
    static final long BIND_INFO_LENGTH = offset(IBV_MW_BIND_INFO, "length");
    static final long BIND_INFO_ACCESS = offset(IBV_MW_BIND_INFO, "mw_access_flags");
    static final long MW_BIND_WR_ID = offset(IBV_MW_BIND, "wr_id");
    static final long MW_BIND_SEND_FLAGS = offset(IBV_MW_BIND, "send_flags");
    static final long MW_BIND_BIND_INFO = offset(IBV_MW_BIND, "bind_info");

    static final long SEND_WR_WR_ID = offset(IBV_SEND_WR, "wr_id");
    static final long SEND_WR_NEXT = offset(IBV_SEND_WR, "next");
    static final long SEND_WR_SG_LIST = offset(IBV_SEND_WR, "sg_list");
    static final long SEND_WR_NUM_SGE = offset(IBV_SEND_WR, "num_sge");
    static final long SEND_WR_OPCODE = offset(IBV_SEND_WR, "opcode");
    static final long SEND_WR_XRC_REMOTE_SRQN = offset(IBV_SEND_WR, "qp_type", "xrc", "remote_srqn");
    static final long SEND_WR_SEND_FLAGS = offset(IBV_SEND_WR, "send_flags");
    static final long SEND_WR_IMM_DATA = offset(IBV_SEND_WR, "anon_imm", "imm_data");
    static final long SEND_WR_INVALIDATE_RKEY = offset(IBV_SEND_WR, "anon_imm", "invalidate_rkey");
    static final long SEND_WR_RDMA_REMOTE_ADDR = offset(IBV_SEND_WR, "wr", "rdma", "remote_addr");
    static final long SEND_WR_RDMA_RKEY = offset(IBV_SEND_WR, "wr", "rdma", "rkey");
    static final long SEND_WR_ATOMIC_REMOTE_ADDR = offset(IBV_SEND_WR, "wr", "atomic", "remote_addr");
    static final long SEND_WR_ATOMIC_COMPARE_ADD = offset(IBV_SEND_WR, "wr", "atomic", "compare_add");
    static final long SEND_WR_ATOMIC_SWAP = offset(IBV_SEND_WR, "wr", "atomic", "swap");
    static final long SEND_WR_ATOMIC_RKEY = offset(IBV_SEND_WR, "wr", "atomic", "rkey");
    static final long SEND_WR_BIND_MW_MW = offset(IBV_SEND_WR, "anon_bind", "bind_mw", "mw");
    static final long SEND_WR_BIND_MW_RKEY = offset(IBV_SEND_WR, "anon_bind", "bind_mw", "rkey");
    static final long SEND_WR_BIND_MW_BIND_INFO = offset(IBV_SEND_WR, "anon_bind", "bind_mw", "bind_info");

    static final long RECV_WR_WR_ID = offset(IBV_RECV_WR, "wr_id");
    static final long RECV_WR_NEXT = offset(IBV_RECV_WR, "next");
    static final long RECV_WR_SG_LIST = offset(IBV_RECV_WR, "sg_list");
    static final long RECV_WR_NUM_SGE = offset(IBV_RECV_WR, "num_sge");

    static final long WC_WR_ID = offset(IBV_WC, "wr_id");
    static final long WC_STATUS = offset(IBV_WC, "status");
    static final long WC_OPCODE = offset(IBV_WC, "opcode");
    static final long WC_VENDOR_ERR = offset(IBV_WC, "vendor_err");
    static final long WC_BYTE_LEN = offset(IBV_WC, "byte_len");
    static final long WC_IMM_DATA = offset(IBV_WC, "anon_imm", "imm_data");
    static final long WC_QP_NUM = offset(IBV_WC, "qp_num");
    static final long WC_WC_FLAGS = offset(IBV_WC, "wc_flags");
    static final long WC_SRC_QP = offset(IBV_WC, "src_qp");
    static final long WC_PKEY_INDEX = offset(IBV_WC, "pkey_index");
    static final long WC_SLID = offset(IBV_WC, "slid");
    static final long WC_SL = offset(IBV_WC, "sl");
    static final long WC_DLID_PATH_BITS = offset(IBV_WC, "dlid_path_bits");
}
