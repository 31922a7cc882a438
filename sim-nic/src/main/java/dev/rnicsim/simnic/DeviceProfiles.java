package dev.rnicsim.simnic;

import dev.rnicsim.mtt.IndexPolicy;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.OdpCaps;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The built-in device profiles. Attributes come from real {@code ibv_devinfo -v} dumps (the test data under
 * {@code devinfo/}, each with its source line); what a dump lacks is listed in the profile's
 * {@link DeviceProfile#defaultedFields()}. Properties no dump shows (cache geometry, link rate) are assumptions,
 * marked as such here.
 *
 * <ul>
 * <li>{@code connectx3}: mlx4. MTT as a power-of-two buddy of 2^20 segments of 8 entries (the pre-3.4 default,
 * 32 GiB of 4 KiB pages: commit db5a7a65c058), generation-counted keys ({@code mlx4_bitmap_alloc}'s rotating top),
 * MEM_WINDOW set but max_mw 0, which mlx4 never sets: windows are allocated all the same
 * ({@link ProviderRule#WINDOWS_WITHOUT_MAX_MW}); its provider's {@code create_qp_ex} takes no send_ops_flags
 * ({@link ProviderRule#CREATE_QP_EX_WITHOUT_SEND_OPS}).</li>
 * <li>{@code connectx5}, {@code connectx7}: mlx5. Exact MTT allocation, max_mr 2^24, recycled keys (the mkey cache
 * re-issues the same key: {@code mlx5r_umr_revoke_mr}), ODP with implicit ODP.</li>
 * <li>{@code rxe}: soft-RoCE as current kernels build it (memory windows, ODP, FLUSH, ATOMIC_WRITE, rxe_param.h
 * limits). Random key byte ({@code rxe_get_next_key}), rkey 0 without remote rights.</li>
 * <li>{@code rxe-legacy}: soft-RoCE as an old kernel's {@code ibv_devinfo} dump shows it (no windows, no ODP).</li>
 * <li>{@code connectx4-forced-ro}: mlx5 ConnectX-4 in an older server whose root complex is on the kernel's
 * relaxed-ordering quirk list, with relaxed ordering forced on: the failure mode of turning it on without checking
 * (writes may overtake earlier writes, even strict ones).</li>
 * <li>{@code e810}: Intel irdma. page_size_cap 4 KiB | 2 MiB | 1 GiB only, no atomics, max_mr_size 32 TiB.</li>
 * <li>{@code generic}: a device no recognition rule knows ({@link DeviceRecognizer}): only 4 KiB pages, no memory
 * windows, no atomics, no ODP, no fast registration, 4096 MRs; a dump read as generic keeps its own values and
 * these fill only what it lacks.</li>
 * <li>The other mlx5 parts in {@link ConnectXProfiles}; siw, efa, bnxt_re, hns, qedr, erdma, mana, cxgb4, hfi1 and
 * irdma in iWARP mode in {@link DriverProfiles}.</li>
 * </ul>
 *
 * <p>Stateless and thread safe.
 */
public final class DeviceProfiles
{
    /** Translation-cache entries when nothing better is known: assumed (no published NIC translation-cache size
     * was found). */
    public static final int ASSUMED_CACHE_ENTRIES = 8192;
    /** Translation-cache associativity when nothing better is known: assumed. */
    public static final int ASSUMED_CACHE_WAYS = 8;

    private static final long MAX_U64 = -1L;

    /** The built-in profiles, made on the first look-up by name. */
    private static volatile Map<String, DeviceProfile> byName;

    private DeviceProfiles()
    {
    }

    /**
     * @return the built-in profiles by name, sorted.
     */
    public static Map<String, DeviceProfile> builtIn()
    {
        final Map<String, DeviceProfile> map = new TreeMap<>();
        for (final DeviceProfile p : List.of(connectx3(), connectx4ForcedRelaxedOrdering(), connectx5(), connectx7(),
            rxe(), rxeLegacy(), e810(), generic()))
        {
            map.put(p.name(), p);
        }
        for (final DeviceProfile p : ConnectXProfiles.all())
        {
            map.put(p.name(), p);
        }
        for (final DeviceProfile p : DriverProfiles.all())
        {
            map.put(p.name(), p);
        }
        return map;
    }

    /**
     * @param name a built-in profile name.
     * @return the profile.
     * @throws IllegalArgumentException naming the built-in profiles when there is none of that name.
     */
    public static DeviceProfile byName(final String name)
    {
        Map<String, DeviceProfile> all = byName;
        if (all == null)
        {
            // Profiles are immutable records: built once, shared by every device made by name.
            all = Map.copyOf(builtIn());
            byName = all;
        }
        final DeviceProfile p = all.get(name);
        if (p == null)
        {
            throw new IllegalArgumentException("no built-in profile '" + name + "'; built-in: "
                + builtIn().keySet());
        }
        return p;
    }

    /**
     * @return ConnectX-3 (mlx4), from devinfo/connectx3-mlx4.txt.
     */
    public static DeviceProfile connectx3()
    {
        final DeviceAttributes a = DeviceAttributes.builder().fwVer("2.33.5100").vendorId(0x02c9).vendorPartId(4099)
            .hwVer(0).physPortCnt(2).maxMrSizeBytes(MAX_U64).pageSizeCap(0xfffffe00L).maxQp(131000).maxQpWr(16351)
            .deviceCapFlags(0x057e9c66L).maxSge(32).maxSgeRd(30).maxCq(65408).maxCqe(4194303).maxMr(524032)
            .maxPd(32764).maxQpRdAtom(16).maxQpInitRdAtom(128).maxResRdAtom(2096000).maxMw(0)
            .atomicCap(AtomicCap.HCA).maxSrq(65472).maxPkeys(128).localCaAckDelay(15).odpCaps(OdpCaps.NONE)
            .maxSrqWr(16383).maxSrqSge(31).nodeGuid(0x0002c90300000001L).sysImageGuid(0x0002c90300000001L)
            .maxMcastGrp(8192).maxMcastQpAttach(248).maxTotalMcastQpAttach(2031616).maxAh(Integer.MAX_VALUE).build();
        return new DeviceProfile("connectx3", "mlx4", a, MttConfig.buddy(20, 3), VariantPolicy.GENERATION,
            IndexPolicy.LOWEST_FREE, ASSUMED_CACHE_ENTRIES, ASSUMED_CACHE_WAYS,
            Set.of(ProviderRule.SEND_QUEUE_FREED_AT_POLL,
                ProviderRule.VENDOR_ERR_CQE_SYNDROME, ProviderRule.BLOCK_MULTICAST_LOOPBACK,
                ProviderRule.RESET_CLEANS_CQ, ProviderRule.RECV_ON_SRQ_QP_ENOMEM,
                ProviderRule.CREATE_QP_EX_WITHOUT_SEND_OPS, ProviderRule.WINDOWS_WITHOUT_MAX_MW,
                ProviderRule.SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE,
                ProviderRule.RD_ATOMIC_ZERO_KEPT_AS_ONE,
                ProviderRule.CUR_QP_STATE_CHECKED_BY_FIRMWARE, ProviderRule.CQ_RESIZE_CHECKS_ROUNDED_SIZE,
                ProviderRule.QP_CAPS_FROM_MLX4_WQE_SIZES), false,
            56.0, 3,
            List.of("node_guid", "sys_image_guid", "xrc_odp_caps"));
    }

    /**
     * @return ConnectX-5 (mlx5), from devinfo/connectx5-mlx5.txt; the fields after max_pd, missing from the dump,
     * are taken from the ConnectX-6 Lx dump of the same driver.
     */
    public static DeviceProfile connectx5()
    {
        final DeviceAttributes a = mlx5Base().fwVer("16.23.1000").vendorPartId(4119).maxQp(262144)
            .deviceCapFlags(0xe97e1c36L).maxSge(30).maxSgeRd(30).maxPd(16777216).nodeGuid(0x98039b0300000001L)
            .sysImageGuid(0x98039b0300000001L).build();
        return new DeviceProfile("connectx5", "mlx5", a, MttConfig.exact(1L << 31), VariantPolicy.RECYCLED,
            IndexPolicy.CYCLIC, ASSUMED_CACHE_ENTRIES, ASSUMED_CACHE_WAYS,
            Set.of(ProviderRule.ATOMICS_NEED_QP_ATOMIC_ACCESS,
            ProviderRule.INLINE_OVERFLOW_ENOMEM,
            ProviderRule.SEND_QUEUE_FREED_AT_POLL, ProviderRule.REREG_TRANSLATION_NEW_KEY,
            ProviderRule.MW_BIND_CHECKED_AT_POST, ProviderRule.INVALIDATION_CHECKS_OWNER,
            ProviderRule.DMABUF_DYNAMIC, ProviderRule.NULL_MR, ProviderRule.DEVICE_MEMORY, ProviderRule.SEND_OPS_MLX5,
            ProviderRule.UD_OPCODES_UNCHECKED_AT_POST, ProviderRule.SEND_SGE_OVERFLOW_ENOMEM,
            ProviderRule.VENDOR_ERR_CQE_SYNDROME, ProviderRule.SRQ_NUM_OF_ANY_SRQ, ProviderRule.QP_DATA_IN_ORDER,
            ProviderRule.BLOCK_MULTICAST_LOOPBACK, ProviderRule.SRQ_OF_ZERO_WR,
            ProviderRule.RESET_CLEANS_CQ, ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV,
            ProviderRule.TAG_MATCHING, ProviderRule.RECV_ON_SRQ_QP_ENOMEM,
            ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS, ProviderRule.UC_OPCODES_UNCHECKED_AT_POST,
            ProviderRule.NUM_SGE_COMPARED_SIGNED,
                ProviderRule.SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE,
                ProviderRule.RD_ATOMIC_ZERO_KEPT_AS_ONE,
                ProviderRule.CUR_QP_STATE_CHECKED_BY_FIRMWARE, ProviderRule.SRQ_QP_RECV_SGE_UNCHECKED,
                ProviderRule.QP_CAPS_FROM_MLX5_WQE_SIZES), true, 100.0, 5,
            List.of("node_guid", "sys_image_guid", "max_qp_rd_atom", "max_qp_init_rd_atom", "max_res_rd_atom",
                "atomic_cap", "max_mw", "max_mcast_grp", "max_mcast_qp_attach", "max_total_mcast_qp_attach", "max_ah",
                "max_srq",
                "max_srq_wr", "max_srq_sge", "max_pkeys", "local_ca_ack_delay",
                "general_odp_caps", "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps"));
    }

    /**
     * @return ConnectX-7 (mlx5). No dump of this part was found: the ConnectX-6 Lx dump's attributes with a 400 Gbit/s
     * link (assumed).
     */
    public static DeviceProfile connectx7()
    {
        final DeviceAttributes a = mlx5Base().fwVer("28.0.0").vendorPartId(4129).maxQp(131072)
            .deviceCapFlags(0x25321c36L).maxSge(30).maxSgeRd(30).maxPd(8388608).nodeGuid(0xa088c20300000001L)
            .sysImageGuid(0xa088c20300000001L).build();
        return new DeviceProfile("connectx7", "mlx5", a, MttConfig.exact(1L << 31), VariantPolicy.RECYCLED,
            IndexPolicy.CYCLIC, ASSUMED_CACHE_ENTRIES * 2, ASSUMED_CACHE_WAYS, Set.of(ProviderRule.ATOMICS_NEED_QP_ATOMIC_ACCESS,
            ProviderRule.INLINE_OVERFLOW_ENOMEM,
            ProviderRule.SEND_QUEUE_FREED_AT_POLL, ProviderRule.REREG_TRANSLATION_NEW_KEY,
            ProviderRule.MW_BIND_CHECKED_AT_POST, ProviderRule.INVALIDATION_CHECKS_OWNER,
            ProviderRule.DMABUF_DYNAMIC, ProviderRule.NULL_MR, ProviderRule.DEVICE_MEMORY,
            ProviderRule.RELAXED_ORDERING_READ, ProviderRule.SEND_OPS_MLX5,
            ProviderRule.UD_OPCODES_UNCHECKED_AT_POST, ProviderRule.SEND_SGE_OVERFLOW_ENOMEM,
            ProviderRule.VENDOR_ERR_CQE_SYNDROME, ProviderRule.SRQ_NUM_OF_ANY_SRQ, ProviderRule.QP_DATA_IN_ORDER,
            ProviderRule.BLOCK_MULTICAST_LOOPBACK, ProviderRule.SRQ_OF_ZERO_WR,
            ProviderRule.RESET_CLEANS_CQ, ProviderRule.QUEUE_ALLOC_TYPE_FROM_ENV,
            ProviderRule.TAG_MATCHING, ProviderRule.RECV_ON_SRQ_QP_ENOMEM,
            ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS, ProviderRule.UC_OPCODES_UNCHECKED_AT_POST,
            ProviderRule.NUM_SGE_COMPARED_SIGNED,
                ProviderRule.SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE,
                ProviderRule.RD_ATOMIC_ZERO_KEPT_AS_ONE,
                ProviderRule.CUR_QP_STATE_CHECKED_BY_FIRMWARE, ProviderRule.SRQ_QP_RECV_SGE_UNCHECKED,
                ProviderRule.QP_CAPS_FROM_MLX5_WQE_SIZES), true, 400.0, 7,
            List.of("fw_ver", "vendor_part_id", "node_guid", "sys_image_guid", "max_sge", "max_sge_rd",
                "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps"));
    }

    /**
     * @return ConnectX-4 (mlx5, vendor_part_id 4115, firmware 12.18.1000 as in devinfo/connectx4-mlx5.txt; the fields
     * that partial dump lacks are the ConnectX-5 profile's) in a server whose PCIe root complex does not keep ordering
     * for relaxed-ordering writes (Intel Xeon E5 v3/v4 root ports are on the kernel's
     * {@code quirk_relaxedordering_disable} list, so {@code pcie_relaxed_ordering_enabled} is false there), with
     * relaxed ordering forced on anyway ({@link ProviderRule#RELAXED_ORDERING_UNSAFE_PLATFORM}); 100 Gbit/s link.
     */
    public static DeviceProfile connectx4ForcedRelaxedOrdering()
    {
        final DeviceProfile base = connectx5();
        final DeviceAttributes a = mlx5Base().fwVer("12.18.1000").vendorPartId(4115).maxQp(262144)
            .deviceCapFlags(0xe97e1c36L).maxSge(30).maxSgeRd(30).maxPd(16777216).nodeGuid(0x248a070300000001L)
            .sysImageGuid(0x248a070300000001L).build();
        final java.util.Set<ProviderRule> rules = ConnectXProfiles.connectx4Rules();
        rules.add(ProviderRule.RELAXED_ORDERING_UNSAFE_PLATFORM);
        return new DeviceProfile("connectx4-forced-ro", "mlx5", a, base.mtt(), base.variantPolicy(),
            base.indexPolicy(), base.cacheEntries(), base.cacheWays(), rules, true, 100.0, 4,
            List.of("node_guid", "sys_image_guid", "max_qp_rd_atom", "max_qp_init_rd_atom", "max_res_rd_atom",
                "atomic_cap", "max_mw", "max_mcast_grp", "max_mcast_qp_attach", "max_total_mcast_qp_attach", "max_ah",
                "max_srq",
                "max_srq_wr", "max_srq_sge", "max_pkeys", "local_ca_ack_delay",
                "max_cq", "max_cqe", "max_mr",
                "max_pd", "general_odp_caps", "rc_odp_caps", "uc_odp_caps", "ud_odp_caps", "xrc_odp_caps"));
    }

    /**
     * Soft-RoCE as current kernels (6.15 and later) build it: the limits of {@code rxe_param.h} (DEFAULT_MAX_VALUE
     * 2^20; {@code RXE_MAX_MR} = {@code RXE_MAX_MR_INDEX - RXE_MIN_MR_INDEX} = 2^19 - 1, windows from the disjoint
     * index range above it, {@code RXE_MAX_MW} = 2^19 - 1; max_cqe {@code (1 << RXE_MAX_LOG_CQE) - 1}),
     * {@code RXE_VENDOR_ID} 0xFFFFFF (IBTA A3.3.1), {@code RXE_DEVICE_CAP_FLAGS} with MEM_WINDOW, MEM_WINDOW_TYPE_2B,
     * FLUSH_GLOBAL, FLUSH_PERSISTENT and ATOMIC_WRITE, ODP without implicit ODP ({@code rxe_init_device_param}: RC
     * SEND, RECV, WRITE, READ, ATOMIC, SRQ_RECV, FLUSH, ATOMIC_WRITE; UD SEND, RECV, SRQ_RECV), and the driver's MR
     * access mask {@code RXE_ACCESS_SUPPORTED_MR} (no ZERO_BASED, no HUGETLB: EOPNOTSUPP), FLUSH_PERSISTENT only on
     * persistent memory ({@code rxe_mr_fill_pages_from_sgt}), the responder's length check of RDMA WRITE and READ
     * ({@code rxe_resp_check_length}) and the copy errors of {@code rxe_mr.c} ({@code mr_check_range}: -EINVAL, so a
     * gather SGE outside its MR is IBV_WC_LOC_QP_OP_ERR). No dump of such a kernel
     * was found: every field is from the code, node GUID assumed.
     *
     * @return the current-kernel rxe profile, {@code rxe}.
     */
    public static DeviceProfile rxe()
    {
        final int rxeMaxMr = (1 << 19) - 1;
        final long caps = DeviceCap.BAD_PKEY_CNTR.bit() | DeviceCap.BAD_QKEY_CNTR.bit() | DeviceCap.AUTO_PATH_MIG.bit()
            | DeviceCap.CHANGE_PHY_PORT.bit() | DeviceCap.UD_AV_PORT_ENFORCE.bit() | DeviceCap.PORT_ACTIVE_EVENT.bit()
            | DeviceCap.SYS_IMAGE_GUID.bit() | DeviceCap.RC_RNR_NAK_GEN.bit() | DeviceCap.SRQ_RESIZE.bit()
            | DeviceCap.MEM_MGT_EXTENSIONS.bit() | DeviceCap.MEM_WINDOW.bit() | DeviceCap.MEM_WINDOW_TYPE_2B.bit()
            | DeviceCap.FLUSH_GLOBAL.bit() | DeviceCap.FLUSH_PERSISTENT.bit() | DeviceCap.ATOMIC_WRITE.bit();
        final int rc = OdpCaps.SEND | OdpCaps.RECV | OdpCaps.WRITE | OdpCaps.READ | OdpCaps.ATOMIC | OdpCaps.SRQ_RECV
            | OdpCaps.FLUSH | OdpCaps.ATOMIC_WRITE;
        final DeviceAttributes a = DeviceAttributes.builder().fwVer("0.0.0").vendorId(0xFFFFFF).vendorPartId(0)
            .hwVer(0).physPortCnt(1).maxMrSizeBytes(MAX_U64).pageSizeCap(0xfffff000L).maxQp((1 << 20) - 16)
            .maxQpWr(1 << 20).deviceCapFlags(caps).maxSge(32).maxSgeRd(32).maxCq(1 << 20).maxCqe((1 << 15) - 1)
            .maxMr(rxeMaxMr).maxPd(1 << 20).maxQpRdAtom(128).maxQpInitRdAtom(128).maxResRdAtom(0x3f000)
            .maxMw(rxeMaxMr).atomicCap(AtomicCap.HCA).maxSrq((1 << 20) - 0x20001).maxPkeys(64).localCaAckDelay(15)
            .maxSrqWr(1 << 20).maxSrqSge(27) // RXE_MAX_SRQ_WR = DEFAULT_MAX_VALUE, RXE_MAX_SRQ_SGE
            // RXE_MAX_MCAST_GRP, RXE_MAX_MCAST_QP_ATTACH, RXE_MAX_TOT_MCAST_QP_ATTACH, RXE_MAX_AH = DEFAULT_MAX_VALUE
            .maxMcastGrp(8192).maxMcastQpAttach(56).maxTotalMcastQpAttach(0x70000).maxAh(1 << 20)
            .odpCaps(new OdpCaps(OdpCaps.SUPPORT, rc, 0, OdpCaps.SEND | OdpCaps.RECV | OdpCaps.SRQ_RECV, 0))
            .nodeGuid(0x0200000000000002L).sysImageGuid(0x0200000000000002L).build();
        return new DeviceProfile("rxe", "rxe", a, MttConfig.exact(1L << 31), VariantPolicy.RANDOM, IndexPolicy.CYCLIC,
            ASSUMED_CACHE_ENTRIES, ASSUMED_CACHE_WAYS,
            Set.of(ProviderRule.RKEY_ONLY_WITH_REMOTE_ACCESS, ProviderRule.ATOMIC_ALIGNMENT_AT_POST,
                ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR, ProviderRule.REREG_TRANSLATION_UNSUPPORTED,
                ProviderRule.MR_ACCESS_WITHOUT_ZERO_BASED_OR_HUGETLB, ProviderRule.RESPONDER_HOLDS_KEY_REFERENCE,
                ProviderRule.RECEIVE_OVERFLOW_AS_INVALID_REQUEST,
                ProviderRule.FLUSH_PERSISTENT_NEEDS_PMEM, ProviderRule.MESSAGE_LENGTH_CHECKED_BY_RESPONDER,
                ProviderRule.GATHER_RANGE_ERRORS_AS_QP_OP_ERR, ProviderRule.SEND_OPS_RXE,
                ProviderRule.REREG_MR_UNSUPPORTED, ProviderRule.QP_ACCESS_FLAGS_CHECKED,
                ProviderRule.QP_TIMEOUT_CHECKED, ProviderRule.QP_RETRY_FIELDS_KEPT_WHOLE,
                ProviderRule.DEST_RD_ATOMIC_UNCHECKED, ProviderRule.OPCODES_CHECKED_BY_RXE_REQUESTER,
                ProviderRule.SRQ_QP_RECV_CAPS_UNCHECKED, ProviderRule.QP_CAPS_FROM_RXE_QUEUES,
                ProviderRule.SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE,
                ProviderRule.DEST_QPN_KEPT_WHOLE, ProviderRule.RETRANSMIT_TIMER_IN_JIFFIES,
                ProviderRule.RESET_KEEPS_QP_ATTRS, ProviderRule.USER_MR_IN_BASE_PAGES), false,
            10.0, 0x5eed,
            List.of("fw_ver", "node_guid", "sys_image_guid"));
    }

    /**
     * @return soft-RoCE (rxe) of an older kernel, from devinfo/rxe.txt, as that dump shows it: vendor_id 0, no memory
     * windows (max_mw 0, no MEM_WINDOW flag), no ODP, RXE_MAX_MR 2^18; named {@code rxe-legacy}. Its requester does
     * not check a user QP's message length either (its port's max_msg_sz of 8 MiB is not enforced); the responder's
     * 2^31 check is modelled as the current kernel's (assumed). Its kernel predates the FLUSH access flags (no
     * windows, no ODP in rxe: before Linux 5.13), so they are EINVAL.
     */
    public static DeviceProfile rxeLegacy()
    {
        final DeviceAttributes a = DeviceAttributes.builder().fwVer("0.0.0").vendorId(0).vendorPartId(0).hwVer(0)
            .physPortCnt(1).maxMrSizeBytes(MAX_U64).pageSizeCap(0xfffff000L).maxQp(65536).maxQpWr(16384)
            .deviceCapFlags(0x00203c76L).maxSge(32).maxSgeRd(32).maxCq(16384).maxCqe(32767).maxMr(262144)
            .maxPd(32764).maxQpRdAtom(128).maxQpInitRdAtom(128).maxResRdAtom(258048).maxMw(0)
            .atomicCap(AtomicCap.HCA).maxSrq(960).maxPkeys(64).localCaAckDelay(15).odpCaps(OdpCaps.NONE)
            .maxSrqWr(16384).maxSrqSge(27).nodeGuid(0x0200000000000001L).sysImageGuid(0x0200000000000001L)
            .maxMcastGrp(8192).maxMcastQpAttach(56).maxTotalMcastQpAttach(0x70000).maxAh(100).build();
        return new DeviceProfile("rxe-legacy", "rxe", a, MttConfig.exact(1L << 31), VariantPolicy.RANDOM,
            IndexPolicy.CYCLIC, ASSUMED_CACHE_ENTRIES, ASSUMED_CACHE_WAYS,
            Set.of(ProviderRule.RKEY_ONLY_WITH_REMOTE_ACCESS, ProviderRule.ATOMIC_ALIGNMENT_AT_POST,
                ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR, ProviderRule.REREG_TRANSLATION_UNSUPPORTED,
                ProviderRule.RESPONDER_HOLDS_KEY_REFERENCE, ProviderRule.MESSAGE_LENGTH_CHECKED_BY_RESPONDER,
                ProviderRule.RECEIVE_OVERFLOW_AS_INVALID_REQUEST, ProviderRule.KERNEL_WITHOUT_FLUSH_ACCESS,
                ProviderRule.SEND_OPS_RXE, ProviderRule.REREG_MR_UNSUPPORTED, ProviderRule.QP_TIMEOUT_CHECKED,
                ProviderRule.QP_RETRY_FIELDS_KEPT_WHOLE, ProviderRule.DEST_RD_ATOMIC_UNCHECKED,
                ProviderRule.OPCODES_CHECKED_BY_RXE_REQUESTER,
                ProviderRule.SRQ_QP_RECV_CAPS_UNCHECKED, ProviderRule.QP_CAPS_FROM_RXE_QUEUES,
                ProviderRule.SRQ_WR_ROUNDED_TO_POW2_MINUS_ONE,
                ProviderRule.DEST_QPN_KEPT_WHOLE, ProviderRule.RETRANSMIT_TIMER_IN_JIFFIES,
                ProviderRule.RESET_KEEPS_QP_ATTRS, ProviderRule.USER_MR_IN_BASE_PAGES), false,
            10.0,
            0x5eed,
            List.of("fw_ver", "node_guid", "sys_image_guid", "xrc_odp_caps"),
            // the older rxe's fixed RXE_MAX_INLINE_DATA = 400 (ofiwg/libfabric issue 4719: "invalid max inline
            // data = 512 > 400")
            DriverTraits.of("rxe").withInlineLimit(new InlineLimit(400, "rxe_qp_chk_cap: RXE_MAX_INLINE_DATA")));
    }

    /**
     * @return Intel E810 (irdma), from devinfo/irdma-e810.txt. rdma-core 44's libirdma has no {@code rereg_mr}
     * ({@link ProviderRule#REREG_MR_UNSUPPORTED}), although the kernel's {@code irdma_rereg_user_mr} has one, and no
     * {@code create_qp_ex} ({@link ProviderRule#CREATE_QP_EX_UNSUPPORTED}).
     */
    public static DeviceProfile e810()
    {
        final DeviceAttributes a = DeviceAttributes.builder().fwVer("1.74").vendorId(0x8086).vendorPartId(5522)
            .hwVer(2).physPortCnt(1).maxMrSizeBytes(0x200000000000L).pageSizeCap(0x40201000L).maxQp(4092)
            .maxQpWr(8127).deviceCapFlags(0x01221000L).maxSge(6).maxSgeRd(6).maxCq(8189).maxCqe(1048574)
            .maxMr(4194301).maxPd(262141).maxQpRdAtom(8).maxQpInitRdAtom(8).maxResRdAtom(0).maxMw(0)
            .atomicCap(AtomicCap.NONE).maxSrq(0).maxPkeys(1).localCaAckDelay(0).odpCaps(OdpCaps.NONE)
            .nodeGuid(0x6cfe540000000001L).sysImageGuid(0x6cfe540000000001L).maxMcastGrp(4096).maxMcastQpAttach(8)
            .maxTotalMcastQpAttach(32768).maxAh(131072).build();
        return new DeviceProfile("e810", "irdma", a, MttConfig.exact(1L << 31), VariantPolicy.GENERATION,
            IndexPolicy.CYCLIC, ASSUMED_CACHE_ENTRIES, ASSUMED_CACHE_WAYS, Set.of(ProviderRule.REREG_MR_UNSUPPORTED,
                ProviderRule.SEND_QUEUE_FREED_AT_POLL,
                ProviderRule.CREATE_QP_EX_UNSUPPORTED, ProviderRule.QP_CAPS_FROM_IRDMA_QUANTA,
                ProviderRule.CQE_AS_ASKED), false, 100.0, 810,
            List.of("node_guid", "sys_image_guid"));
    }

    /** The name of the profile of a device no rule recognises. */
    public static final String GENERIC = "generic";

    /**
     * @return the profile a dump no recognition rule knows starts from: nothing a device must prove is assumed
     * (4 KiB pages only, no memory windows, atomics, ODP or fast registration, 4096 MRs, 4 GiB max_mr_size), every
     * field listed as defaulted.
     */
    public static DeviceProfile generic()
    {
        final DeviceAttributes a = DeviceAttributes.builder().fwVer("").vendorId(0xffff).vendorPartId(0).hwVer(0)
            .physPortCnt(1).maxMrSizeBytes(1L << 32).pageSizeCap(0x1000L).maxQp(1024).maxQpWr(1024)
            .deviceCapFlags(0).maxSge(1).maxSgeRd(1).maxCq(1024).maxCqe(1024).maxMr(4096).maxPd(1024)
            .maxQpRdAtom(0).maxQpInitRdAtom(0).maxResRdAtom(0).maxMw(0).atomicCap(AtomicCap.NONE).maxSrq(0)
            .maxPkeys(1).localCaAckDelay(0).odpCaps(OdpCaps.NONE).nodeGuid(0x0000000000000001L)
            .sysImageGuid(0x0000000000000001L).build();
        return new DeviceProfile(GENERIC, GENERIC, a, MttConfig.exact(1L << 31), VariantPolicy.GENERATION,
            IndexPolicy.CYCLIC, ASSUMED_CACHE_ENTRIES, ASSUMED_CACHE_WAYS, Set.of(), false, 10.0, 0x6e6e,
            DevinfoReader.FIELDS);
    }

    /** The mlx5 fields common to the ConnectX-5/-6 Lx dumps (max_cq, max_cqe, max_mr, atomics, ODP). */
    static DeviceAttributes.Builder mlx5Base()
    {
        return DeviceAttributes.builder().vendorId(0x02c9).hwVer(0).physPortCnt(1).maxMrSizeBytes(MAX_U64)
            .pageSizeCap(0xfffffffffffff000L).maxQpWr(32768).maxCq(16777216).maxCqe(4194303).maxMr(16777216)
            .maxQpRdAtom(16).maxQpInitRdAtom(16).maxResRdAtom(2097152).maxMw(16777216).atomicCap(AtomicCap.HCA)
            .maxSrq(8388608).maxSrqWr(32767).maxSrqSge(31).maxPkeys(128).localCaAckDelay(16)
            // mlx5_ib_query_device: 1 << log_max_mcg, max_qp_mcg, their product, max_ah INT_MAX (ConnectX-6 Lx dump)
            .maxMcastGrp(2097152).maxMcastQpAttach(240).maxTotalMcastQpAttach(503316480).maxAh(Integer.MAX_VALUE)
            // general ODP + implicit (ConnectX-6 Lx dump); per transport as the mlx5 dump of ucx issue 9976.
            .odpCaps(new OdpCaps(OdpCaps.SUPPORT | OdpCaps.SUPPORT_IMPLICIT,
                OdpCaps.SEND | OdpCaps.RECV | OdpCaps.WRITE | OdpCaps.READ | OdpCaps.SRQ_RECV, 0, OdpCaps.SEND,
                OdpCaps.SEND | OdpCaps.WRITE | OdpCaps.READ | OdpCaps.SRQ_RECV));
    }
}
