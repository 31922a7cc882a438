package dev.rnicsim.simnic;

import dev.rnicsim.mtt.IndexPolicy;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.simnic.DriverTraits.Translation;
import dev.rnicsim.simnic.DriverTraits.Transport;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.OdpCaps;
import dev.rnicsim.verbs.QpType;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Built-in profiles of the drivers other than mlx4, mlx5 and rxe: siw, efa (three device generations), bnxt_re,
 * hns, qedr, erdma, mana, cxgb4, hfi1 and irdma in iWARP mode. Each fact names the kernel file it was read from;
 * a value no public source gave is listed in the profile's {@link DeviceProfile#defaultedFields()} with the word
 * "assumed" in its Javadoc here. None of these parts has ODP (only mlx5 implements {@code ib_umem_odp}), so every
 * profile here reports {@link OdpCaps#NONE}.
 *
 * <p>Stateless and thread safe.
 */
public final class DriverProfiles
{
    private static final long MAX_U64 = -1L;
    private static final long MEM_MGT = DeviceCap.MEM_MGT_EXTENSIONS.bit();
    private static final long XRC = DeviceCap.XRC.bit();
    private static final long MW_1_2B = DeviceCap.MEM_WINDOW.bit() | DeviceCap.MEM_WINDOW_TYPE_2B.bit();
    private static final long BASIC_IB = DeviceCap.SYS_IMAGE_GUID.bit() | DeviceCap.RC_RNR_NAK_GEN.bit()
        | DeviceCap.PORT_ACTIVE_EVENT.bit();
    private static final int ENTRIES = DriverTraits.ENTRIES_PER_4K_PAGE;
    /** qedr's shared receive queues ({@code QED_RDMA_MAX_SRQS} in qed_rdma.h). */
    private static final int QED_RDMA_MAX_SRQS = 32 * 1024;
    /** Entries of qedr's largest PBL page, 64 KiB ({@code MAX_FW_PBL_PAGE_SIZE} / 8). */
    private static final int QEDR_PBES_ON_64K_PAGE = 8192;
    /** cxgb4's shared receive queues on a T6: {@code tp_srq = 128} of the RDMA function (PF4) in the firmware's T6
     * configuration file (FreeBSD sys/dev/cxgbe/firmware/t6fw_cfg.txt), taken as the SRQ range the firmware gives
     * ({@code FW_PARAMS_PARAM_PFVF_SRQ_START}..{@code _END}); assumed, as no dump shows cxgb4's max_srq. */
    private static final int CXGB4_T6_SRQS = 128;

    /** {@code SIW_MAX_INLINE}: the inline data takes the place of SGEs 1 to 5 of a WQE ({@code sizeof(struct siw_sge)}
     * 16 x ({@code SIW_MAX_SGE} 6 - 1)), checked by {@code siw_create_qp}. */
    static final int SIW_MAX_INLINE_BYTES = 80;
    /** {@code ROCE_REQ_MAX_INLINE_DATA_SIZE} (qedr on RoCE, {@code qed_rdma_init_devinfo}), checked by {@code
     * qedr_check_qp_attrs} ("unsupported inline data size"). */
    static final int QEDR_MAX_INLINE_BYTES = 256;
    /** EFA's {@code inline_buf_size}: the device reports it (efa_com {@code get_device_attr}'s queue attributes; newer
     * kernels {@code inline_buf_size_ex}), the kernel hands it to libefa in {@code efa_alloc_ucontext}'s response and
     * {@code efadv_query_device} answers it; {@code efa_qp_validate_cap} (efa_verbs.c) refuses a QP asking more inline
     * data with EINVAL. 32 bytes is the value of UCX's EFA device fixture (efadv_device_attr of a device with RDMA
     * read; devinfo/efa.txt, a plain {@code ibv_devinfo}, shows none); assumed for every generation. */
    static final int EFA_INLINE_BUF_BYTES = 32;
    /** The attributes no profile here has a public value for; each profile lists them as defaulted. */
    private static final List<String> UNPUBLISHED = List.of("node_guid", "sys_image_guid", "max_qp_rd_atom",
        "max_res_rd_atom", "max_qp_init_rd_atom", "max_srq", "local_ca_ack_delay");

    private DriverProfiles()
    {
    }

    /**
     * @return every profile of this class.
     */
    public static List<DeviceProfile> all()
    {
        return List.of(siw(), efaGen1(), efa(), efaGen3(), bnxtRe(), hns(), qedr(), erdma(), mana(), cxgb4(), hfi1(),
            e810Iwarp());
    }

    private static DeviceAttributes.Builder base(final String fw, final int vendor, final int part)
    {
        return DeviceAttributes.builder().fwVer(fw).vendorId(vendor).vendorPartId(part).hwVer(0).physPortCnt(1)
            .maxQpRdAtom(16).maxQpInitRdAtom(16).maxResRdAtom(0).maxSrq(0).maxPkeys(1).localCaAckDelay(0)
            .odpCaps(OdpCaps.NONE).nodeGuid(((long) vendor << 40) | 1).sysImageGuid(((long) vendor << 40) | 1);
    }

    private static List<String> defaulted(final String... more)
    {
        final List<String> out = new java.util.ArrayList<>(UNPUBLISHED);
        out.addAll(List.of(more));
        return out;
    }

    private static DeviceProfile profile(final String name, final DeviceAttributes a, final VariantPolicy keys,
        final IndexPolicy index, final Set<ProviderRule> rules, final double linkGbps, final DriverTraits traits,
        final List<String> defaulted)
    {
        return new DeviceProfile(name, traits.driver(), a, MttConfig.exact(1L << 31), keys, index,
            DeviceProfiles.ASSUMED_CACHE_ENTRIES, DeviceProfiles.ASSUMED_CACHE_WAYS, rules, false, linkGbps,
            name.hashCode(), defaulted, traits);
    }

    /**
     * Soft-iWARP (drivers/infiniband/sw/siw). siw.h: vendor id 0x626d74 ("bmt"), max_qp 102400, max_qp_wr 32768,
     * max_mr 1024000 ({@code SIW_MAX_MR}), max_mw 0, max_sge_rd 1 ("iwarp limitation"),
     * {@code max_fast_reg_page_list_len} 256 ({@code SIW_MAX_SGE_PBL}). siw_verbs.c {@code siw_query_device}:
     * atomic_cap 0, device_cap_flags only MEM_MGT_EXTENSIONS (no memory windows), max_mr_size ~0, page_size_cap one
     * page. siw_mem.c {@code siw_mr_add_mem}: {@code stag = id << 8} with the index from
     * {@code xa_alloc_cyclic} over 1..0xffffff from a random start: the key byte of a registered MR is always 0, and
     * lkey == rkey. The CPU walks the page list (no device table). siw_main.c {@code siw_device_create}: each new
     * device takes {@code vendor_part_id = dev_id++} from a counter starting at 1, so the first siw device is part 1.
     * siw_verbs.c {@code siw_create_qp}: any QP type but RC is EOPNOTSUPP ("only RC QP's supported"). Shared
     * receive queues (libsiw {@code siw_create_srq}): max_srq {@code SIW_MAX_SRQ} (102400), max_srq_wr
     * {@code SIW_MAX_SRQ_WR} ({@code SIW_MAX_QP_WR * 10}, 327680: deeper than a QP's), max_srq_sge
     * {@code SIW_MAX_SGE} (6); {@code siw_create_srq} answers EINVAL above them.
     *
     * @return the profile.
     */
    public static DeviceProfile siw()
    {
        final DeviceAttributes a = base("0.0.0", 0x626d74, 1).maxMrSizeBytes(MAX_U64).pageSizeCap(0x1000L)
            .maxQp(102400).maxQpWr(32768).deviceCapFlags(MEM_MGT).maxSge(6).maxSgeRd(1).maxCq(102400)
            .maxCqe(3276800).maxMr(1024000).maxPd(102400).maxQpRdAtom(128).maxQpInitRdAtom(128).maxMw(0)
            .atomicCap(AtomicCap.NONE).maxSrq(102400).maxSrqWr(327680).maxSrqSge(6).build();
        final DriverTraits t = new DriverTraits("siw", "drivers/infiniband/sw/siw/siw_mem.c", Transport.IWARP, 8,
            null, Errno.EOPNOTSUPP, Translation.SOFTWARE, 0, 0, 0, Errno.ENOMEM, 256, true, true, "siw", null)
            .withQpTypes(Set.of(QpType.RC)).withInlineLimit(new InlineLimit(SIW_MAX_INLINE_BYTES,
                "siw_create_qp: SIW_MAX_INLINE"));
        return profile("siw", a, VariantPolicy.FIXED, IndexPolicy.CYCLIC, Set.of(ProviderRule.REREG_MR_UNSUPPORTED,
            ProviderRule.CREATE_QP_EX_UNSUPPORTED, ProviderRule.CQE_ROUNDED_TO_POW2,
            ProviderRule.SRQ_LIMIT_CHECKED_AT_CREATE, ProviderRule.ATOMIC_OPCODES_NOT_IN_PROVIDER),
            25.0, t,
            defaulted("fw_ver", "max_sge"));
    }

    /** EFA's attributes common to its generations: efa_verbs.c {@code efa_query_device} reports no cap flags, no
     * atomics, max_pkeys 1; page_size_cap and max_mr_size from the device (the values of the public fixture,
     * DEVICES.md: 0xfffff000, 96 GiB, max_mr 262144). */
    private static DeviceAttributes.Builder efaBase(final int part)
    {
        return base("0.0.0.0", 0x1d0f, part).hwVer(part).maxMrSizeBytes(96L << 30).pageSizeCap(0xfffff000L)
            .maxQp(256).maxQpWr(4096).deviceCapFlags(0).maxSge(2).maxSgeRd(1).maxCq(512).maxCqe(32768)
            .maxMr(262144).maxPd(256).maxQpRdAtom(0).maxQpInitRdAtom(0).maxMw(0).atomicCap(AtomicCap.NONE)
            .maxAh(256); // efa_query_device: the device's max_ah (assumed: no public figure); no multicast
    }

    /**
     * EFA traits. efa_verbs.c {@code efa_reg_mr}: the accepted access flags are LOCAL_WRITE, REMOTE_READ only with
     * the RDMA_READ device cap and REMOTE_WRITE only with RDMA_WRITE; anything else (after dropping the optional
     * flags) is EOPNOTSUPP; no page size of page_size_cap fits: EOPNOTSUPP; lkey and rkey are what the device's
     * REG_MR admin command returns. The page list goes to the device inline (up to 4 entries) or as a chain of
     * 4 KiB chunks, bounded only by the device's max_mr_pages: more pages are refused by the device with ENOMEM
     * ({@link ProviderRule#MR_SIZE_IN_DEVICE_PAGES}). QPs: {@code efa_create_qp} takes UD and the driver
     * type SRD only ({@code efa_qp_validate_attr}: -EOPNOTSUPP for any other type); SRD is not modelled, so UD is
     * the one type listed. Inline data: {@code efa_qp_validate_cap} refuses a {@code cap.max_inline_data} above the
     * device's {@code inline_buf_size} with EINVAL ({@link #EFA_INLINE_BUF_BYTES}).
     */
    private static DriverTraits efaTraits(final boolean read, final boolean write)
    {
        final Set<Access> accepted = EnumSet.of(Access.LOCAL_WRITE);
        if (read)
        {
            accepted.add(Access.REMOTE_READ);
        }
        if (write)
        {
            accepted.add(Access.REMOTE_WRITE);
        }
        return new DriverTraits("efa", "drivers/infiniband/hw/efa/efa_verbs.c", Transport.UNSPECIFIED, 8, accepted,
            Errno.EOPNOTSUPP, Translation.PBL, 0, ENTRIES, (96L << 30) >>> 12, Errno.ENOMEM, 1, read, write, "efa_",
            null, EnumSet.of(QpType.UD)).withInlineLimit(new InlineLimit(EFA_INLINE_BUF_BYTES,
                "efa_qp_validate_cap: the device's inline_buf_size"));
    }

    /**
     * First-generation EFA (PCI device 0xefa0, the part of devinfo/efa.txt): no RDMA READ and no RDMA WRITE, so an
     * MR takes LOCAL_WRITE alone (EFA_QUERY_DEVICE_CAPS_RDMA_READ absent; which instance types lack it is a device
     * property, assumed here by generation).
     *
     * @return the profile.
     */
    public static DeviceProfile efaGen1()
    {
        return profile("efa-gen1", efaBase(0xefa0).build(), VariantPolicy.RECYCLED, IndexPolicy.CYCLIC,
            Set.of(ProviderRule.DMABUF_PINNED, ProviderRule.REREG_MR_UNSUPPORTED,
                ProviderRule.MR_SIZE_IN_DEVICE_PAGES, ProviderRule.CQE_ROUNDED_TO_POW2,
                ProviderRule.CQE_ROUNDED_COUNT_CHECKED), 100.0, efaTraits(false, false),
            defaulted("max_qp", "max_qp_wr", "max_sge", "max_cq", "max_cqe", "max_pd", "max_ah"));
    }

    /**
     * Second-generation EFA (0xefa1): RDMA READ (EFA_QUERY_DEVICE_CAPS_RDMA_READ), no RDMA WRITE. dma-buf MRs are
     * pinned ({@code efa_reg_user_mr_dmabuf}, {@code ib_umem_dmabuf_get_pinned}).
     *
     * @return the profile.
     */
    public static DeviceProfile efa()
    {
        return profile("efa", efaBase(0xefa1).build(), VariantPolicy.RECYCLED, IndexPolicy.CYCLIC,
            Set.of(ProviderRule.DMABUF_PINNED, ProviderRule.REREG_MR_UNSUPPORTED,
                ProviderRule.MR_SIZE_IN_DEVICE_PAGES, ProviderRule.CQE_ROUNDED_TO_POW2,
                ProviderRule.CQE_ROUNDED_COUNT_CHECKED), 100.0, efaTraits(true, false),
            defaulted("max_qp", "max_qp_wr", "max_sge", "max_cq", "max_cqe", "max_pd", "max_ah"));
    }

    /**
     * Third-generation EFA (0xefa2): RDMA READ and RDMA WRITE (EFA_QUERY_DEVICE_CAPS_RDMA_WRITE, added to
     * {@code efa_reg_mr}'s accepted flags as REMOTE_WRITE).
     *
     * @return the profile.
     */
    public static DeviceProfile efaGen3()
    {
        return profile("efa-gen3", efaBase(0xefa2).build(), VariantPolicy.RECYCLED, IndexPolicy.CYCLIC,
            Set.of(ProviderRule.DMABUF_PINNED, ProviderRule.REREG_MR_UNSUPPORTED,
                ProviderRule.MR_SIZE_IN_DEVICE_PAGES, ProviderRule.CQE_ROUNDED_TO_POW2,
                ProviderRule.CQE_ROUNDED_COUNT_CHECKED), 200.0, efaTraits(true, true),
            defaulted("max_qp", "max_qp_wr", "max_sge", "max_cq", "max_cqe", "max_pd", "max_ah"));
    }

    /**
     * Broadcom NetXtreme-E (bnxt_re, BCM57508). bnxt_re.h: page_size_cap 0x7FFFF000 (4 KiB to 1 GiB),
     * max_mr_size 2^39, 64K MRs ({@code BNXT_RE_MAX_MRW_COUNT}). qplib_res.h: a PBL of levels 0, 1 and 2 with
     * 512 entries a page ({@code MAX_PBL_LVL_1_PGS}), so at most 512 * 512 entries an MR (qplib_sp.c
     * {@code bnxt_qplib_reg_mr}: "pages requested exceeded max"). ib_verbs.c {@code __bnxt_re_user_reg_mr}: no page
     * size fits: EINVAL; any failure of {@code bnxt_qplib_reg_mr} is returned as EIO; {@code bnxt_re_alloc_mr}: more
     * than 512 pages ({@code MAX_PBL_LVL_1_PGS}):
     * EINVAL; {@code bnxt_re_reg_user_mr_dmabuf} pins the dma-buf. Keys are the firmware's xid (the layout is not in
     * the driver: modelled as index and 8 key bits, assumed). Shared receive queues (libbnxt_re creates them with
     * {@code ibv_cmd_create_srq}): the firmware reports max_srq, and the driver sizes its SRQ context table to at most
     * {@code BNXT_RE_MAX_SRQC_COUNT} (64K, bnxt_re.h), taken as max_srq as max_qp is the QP table's 64K (assumed).
     * QP types: {@code bnxt_re_init_qp_type} maps RC, UD (and the kernel's GSI, raw Ethertype) through
     * {@code __from_ib_qp_type} and refuses any other type with EOPNOTSUPP ("QP type 0x%x not supported"), so a UC
     * QP is refused.
     *
     * @return the profile.
     */
    public static DeviceProfile bnxtRe()
    {
        final DeviceAttributes a = base("218.0.169.0", 0x14e4, 0x1750).maxMrSizeBytes(1L << 39)
            .pageSizeCap(0x7ffff000L).maxQp(65536).maxQpWr(65535)
            .deviceCapFlags(BASIC_IB | DeviceCap.CURR_QP_STATE_MOD.bit() | DeviceCap.SHUTDOWN_PORT.bit()
                | DeviceCap.RESIZE_MAX_WR.bit() | DeviceCap.N_NOTIFY_CQ.bit() | MW_1_2B | MEM_MGT)
            .maxSge(6).maxSgeRd(6).maxCq(65536).maxCqe(16777215).maxMr(65536).maxPd(65536).maxMw(65536)
            .atomicCap(AtomicCap.NONE).maxSrq(64 * 1024)
            .maxAh(65536).build(); // bnxt_re_query_device: the firmware's max_ah (assumed max_qp), no multicast
        final DriverTraits t = new DriverTraits("bnxt_re", "drivers/infiniband/hw/bnxt_re/ib_verbs.c",
            Transport.INFINIBAND, 8, null, Errno.EOPNOTSUPP, Translation.PBL, 2, ENTRIES, (long) ENTRIES * ENTRIES,
            Errno.EIO, ENTRIES, true, true, "bnxt_re", null).withQpTypes(EnumSet.of(QpType.RC, QpType.UD));
        return profile("bnxt_re", a, VariantPolicy.GENERATION, IndexPolicy.CYCLIC, Set.of(ProviderRule.DMABUF_PINNED,
            ProviderRule.REREG_MR_UNSUPPORTED, ProviderRule.CREATE_QP_EX_UNSUPPORTED,
            ProviderRule.DMABUF_MR_NOT_IN_PROVIDER, ProviderRule.MR_SIZE_ABOVE_MAX_ENOMEM,
            ProviderRule.CQE_POW2_OF_COUNT_PLUS_ONE), 100.0, t, defaulted("fw_ver", "max_qp", "max_qp_wr", "max_sge", "max_sge_rd", "max_cq", "max_cqe",
                "max_pd", "atomic_cap", "max_ah"));
    }

    /**
     * Huawei HNS RoCE (hns, Kunpeng 920 on-board 0xa222). hns_roce_mr.c: {@code alloc_mr_key} takes the lowest free
     * index ({@code ida_alloc_range}) and {@code hw_index_to_key} rotates it left by 8, so the key byte is 0 and a
     * freed index gives back the very same key at once; a failed {@code ib_umem_get} is returned as ENOMEM
     * whatever its own errno ({@code mtr_alloc_bufs}); rereg rewrites the MPT in place and keeps the key (the provider has
     * {@code hns_roce_u_rereg_mr}); {@code ibv_modify_qp} to RESET cleans the QP's completions from its CQs
     * ({@link ProviderRule#RESET_CLEANS_CQ}); its {@code ibv_wr_*} table is libhns's ({@link ProviderRule#SEND_OPS_HNS}).
     * hns_roce_device.h: fast registration up to 512 pages ({@code HNS_ROCE_FRMR_MAX_PA}, more: EINVAL).
     * hns_roce_hw_v2.h: page_size_cap 0xFFFF000, 4 KiB to 128 MiB ({@code HNS_ROCE_V2_PAGE_SIZE_SUPPORTED}). The
     * MTR is a multi-hop PBL (2 hops, 512 entries a 4 KiB base-address page assumed). Memory windows type 1 and
     * 2B; atomics; shared receive queues, max_srq {@code HNS_ROCE_V2_MAX_SRQ} (0x100000, hns_roce_hw_v2.h; libhns
     * creates them with {@code ibv_cmd_create_srq_ex}). QP types: hns_roce_qp.c {@code check_qp_type} takes RC (and
     * the kernel's GSI), XRC only with HNS_ROCE_CAP_FLAG_XRC (HIP09 on; not this HIP08 part) and UD from user space
     * only on a revision after HIP08 ({@code PCI_REVISION_ID_HIP08}); anything else is EOPNOTSUPP ("not support QP
     * type"), so on this Kunpeng 920 an application's UC and UD QPs are refused.
     *
     * @return the profile.
     */
    public static DeviceProfile hns()
    {
        final DeviceAttributes a = base("1.0.0", 0x19e5, 0xa222).maxMrSizeBytes(MAX_U64).pageSizeCap(0xffff000L)
            .maxQp(131072).maxQpWr(32768).deviceCapFlags(BASIC_IB | MW_1_2B | MEM_MGT).maxSge(64).maxSgeRd(64)
            .maxCq(131072).maxCqe(4194304).maxMr(131072).maxPd(131072).maxMw(131072).atomicCap(AtomicCap.HCA)
            .maxSrq(0x100000).maxAh(131072).build(); // max_ah assumed max_qp (no public figure); no multicast
        final DriverTraits t = new DriverTraits("hns", "drivers/infiniband/hw/hns/hns_roce_mr.c",
            Transport.INFINIBAND, 8, null, Errno.EOPNOTSUPP, Translation.PBL, 2, ENTRIES, (long) ENTRIES * ENTRIES,
            Errno.ENOMEM, 512, true, true, "hns_", Errno.ENOMEM).withQpTypes(EnumSet.of(QpType.RC));
        return profile("hns", a, VariantPolicy.FIXED, IndexPolicy.LOWEST_FREE, Set.of(ProviderRule.RESET_CLEANS_CQ,
            ProviderRule.SEND_OPS_HNS, ProviderRule.CQE_AT_LEAST_64, ProviderRule.CQ_HOLDS_ONE_MORE_THAN_REPORTED),
            100.0, t,
            defaulted("fw_ver", "max_qp", "max_qp_wr", "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_pd",
                "max_ah"));
    }

    /**
     * Marvell/QLogic FastLinQ (qedr, QL41000 0x8070). qed_rdma.c {@code qed_rdma_init_devinfo}: max_mw 0, the
     * largest MR reported as (PAGE_SIZE/8)^2 pages ({@code max_mr_mw_fmr_pbl}), so max_mr_size 1 TiB. verbs.c
     * {@code qedr_reg_user_mr}: lkey = itid &lt;&lt; 8 | key with the key 0 ("Index only, 18 bit long"), and the
     * rkey is set only when REMOTE_READ, REMOTE_WRITE or REMOTE_ATOMIC is asked (0 otherwise);
     * {@code qedr_prepare_pbl_tbl}: a two-layered PBL whose pages grow from 4 KiB to 64 KiB
     * ({@code MAX_FW_PBL_PAGE_SIZE}, 8192 entries), more than 8192 x 8192 pages is EINVAL. Shared receive queues:
     * max_srq {@code QED_RDMA_MAX_SRQS} (32K, qed_rdma.h; libqedr creates them with {@code ibv_cmd_create_srq}).
     * XRC: {@code qedr_query_device} sets IB_DEVICE_XRC on a RoCE port ({@code !rdma_protocol_iwarp}, since the XRC
     * support of Linux 5.9), and rdma-core 44's libqedr opens XRC domains and XRC SRQs ({@code ibv_cmd_open_xrcd},
     * {@code ibv_cmd_create_srq_ex}). QP types: verbs.c {@code qedr_check_qp_attrs} takes RC, XRC_INI and XRC_TGT
     * (and the kernel's GSI) and refuses any other type with EOPNOTSUPP ("unsupported qp type"): no UC or UD QP.
     *
     * @return the profile.
     */
    public static DeviceProfile qedr()
    {
        final DeviceAttributes a = base("8.42.2.0", 0x1077, 0x8070).maxMrSizeBytes(1L << 40)
            .pageSizeCap(0xfffff000L).maxQp(8192).maxQpWr(32767).deviceCapFlags(BASIC_IB | MEM_MGT | XRC).maxSge(4)
            .maxSgeRd(4).maxCq(16384).maxCqe(8388607).maxMr(131072).maxPd(65536).maxMw(0)
            .atomicCap(AtomicCap.HCA).maxSrq(QED_RDMA_MAX_SRQS)
            .maxQpRdAtom(32).maxQpInitRdAtom(32) // the ibv_devinfo -v of a qedr0 in UCX #5148
            .maxAh(8192).build(); // qed_rdma_init_devinfo: max_ah = num_qps (max_qp); no multicast
        final DriverTraits t = new DriverTraits("qedr", "drivers/infiniband/hw/qedr/verbs.c", Transport.INFINIBAND,
            8, null, Errno.EOPNOTSUPP, Translation.PBL, 2, QEDR_PBES_ON_64K_PAGE,
            (long) QEDR_PBES_ON_64K_PAGE * QEDR_PBES_ON_64K_PAGE, Errno.EINVAL, ENTRIES, true, true, "qedr", null)
            .withQpTypes(EnumSet.of(QpType.RC, QpType.XRC_SEND, QpType.XRC_RECV))
            .withInlineLimit(new InlineLimit(QEDR_MAX_INLINE_BYTES,
                "qedr_check_qp_attrs: ROCE_REQ_MAX_INLINE_DATA_SIZE"));
        return profile("qedr", a, VariantPolicy.FIXED, IndexPolicy.CYCLIC,
            Set.of(ProviderRule.RKEY_ONLY_WITH_REMOTE_ACCESS, ProviderRule.REREG_MR_UNSUPPORTED,
                ProviderRule.CQE_PAGES_OF_32_BYTE_ENTRIES), 25.0, t,
            defaulted("fw_ver", "max_qp", "max_qp_wr",
                "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_pd"));
    }

    /**
     * Alibaba Elastic RDMA (erdma, 0x107f), an iWARP device. erdma_hw.h: page_size_cap 0x7FFFF000.
     * erdma_verbs.c {@code erdma_create_stag}: stag = index &lt;&lt; 8, "we always let key field be zero"; the index
     * from a bitmap searched from the last one handed out. The MTT is inline for a few entries, else an indirect
     * table ({@code ERDMA_MR_MTT_0LEVEL}/{@code 1LEVEL}). QP types: erdma_verbs.c {@code erdma_qp_validate_attr}
     * takes RC only on an iWARP device (UD came with its RoCEv2 mode) and refuses any other type with EOPNOTSUPP.
     *
     * @return the profile.
     */
    public static DeviceProfile erdma()
    {
        final DeviceAttributes a = base("0.2.0", 0x1ded, 0x107f).maxMrSizeBytes(MAX_U64).pageSizeCap(0x7ffff000L)
            .maxQp(8192).maxQpWr(4096).deviceCapFlags(MEM_MGT).maxSge(6).maxSgeRd(1).maxCq(16384).maxCqe(1048576)
            .maxMr(65536).maxPd(65536).maxMw(0).atomicCap(AtomicCap.NONE).build();
        final DriverTraits t = DriverTraits.mtt("erdma", "drivers/infiniband/hw/erdma/erdma_verbs.c",
            Transport.IWARP, "erdma_", DriverTraits.ASSUMED_FAST_REG_PAGES).withQpTypes(EnumSet.of(QpType.RC));
        return profile("erdma", a, VariantPolicy.FIXED, IndexPolicy.CYCLIC, Set.of(ProviderRule.REREG_MR_UNSUPPORTED,
            ProviderRule.CREATE_QP_EX_UNSUPPORTED),
            25.0, t,
            defaulted("fw_ver", "max_qp", "max_qp_wr", "max_sge", "max_cq", "max_cqe", "max_mr", "max_pd",
                "atomic_cap"));
    }

    /**
     * Microsoft Azure Network Adapter (mana, 0x00ba). mana_ib.h: page_size_cap 4 KiB to 2 MiB ({@code PAGE_SZ_BM}),
     * no limit on an MR's size ({@code MANA_IB_MAX_MR_SIZE} U64_MAX). mr.c {@code mana_ib_reg_user_mr}: access outside
     * LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC and ZERO_BASED ({@code VALID_MR_FLAGS}) is EINVAL (not
     * EOPNOTSUPP); lkey and rkey are the two values the adapter's CREATE_MR answer holds. No memory windows, no fast
     * registration. rdma-core 44's libmana makes no CQ of its own ({@link ProviderRule#CQ_NEEDS_PARENT_DOMAIN_ALLOCATORS}).
     *
     * @return the profile.
     */
    public static DeviceProfile mana()
    {
        final DeviceAttributes a = base("0.1.0", 0x1414, 0x00ba).maxMrSizeBytes(MAX_U64).pageSizeCap(0x3ff000L)
            .maxQp(1024).maxQpWr(8191).deviceCapFlags(0).maxSge(30).maxSgeRd(30).maxCq(1024).maxCqe(65536)
            .maxMr(65536).maxPd(65536).maxMw(0).atomicCap(AtomicCap.NONE)
            .maxAh(Integer.MAX_VALUE).build(); // mana_ib_query_device: max_ah INT_MAX; no multicast
        final DriverTraits t = new DriverTraits("mana", "drivers/infiniband/hw/mana/mr.c", Transport.INFINIBAND, 8,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC,
                Access.ZERO_BASED), Errno.EINVAL, Translation.MTT, 0, 0, 0, Errno.ENOMEM, 1, true, true, "mana_", null);
        return profile("mana", a, VariantPolicy.RECYCLED, IndexPolicy.CYCLIC, Set.of(ProviderRule.REREG_MR_UNSUPPORTED,
            ProviderRule.CQ_NEEDS_PARENT_DOMAIN_ALLOCATORS),
            100.0, t,
            defaulted("fw_ver", "max_qp", "max_qp_wr", "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_mr",
                "max_pd"));
    }

    /**
     * Chelsio T6 (iw_cxgb4, 0x6408 as in devinfo/cxgb4.txt), iWARP. t4.h: page_size_cap 0xffff000 (4 KiB to
     * 128 MiB), max_mr_size ~0. mem.c {@code write_tpt_entry}: stag = index &lt;&lt; 8 | (a device-wide counter
     * incremented on every allocation &amp; 0xff); a page size above T6's largest: EINVAL. Memory windows type 1
     * and 2B; no atomics (iWARP): libcxgb4's {@code c4iw_post_send} answers an atomic EINVAL ({@link
     * ProviderRule#ATOMIC_OPCODES_NOT_IN_PROVIDER}). Shared receive queues (libcxgb4 creates them with
     * {@code ibv_cmd_create_srq}):
     * provider.c {@code c4iw_query_device} reports max_srq as the adapter firmware's SRQ range ({@code
     * lldi.vr->srq.size}, from {@code FW_PARAMS_PARAM_PFVF_SRQ_START}..{@code _END}), max_srq_wr as {@code t4_max_qp_depth} =
     * {@code t4_max_rq_size} = 8192 - 1 status entry (64-byte egress status page, assumed) - 1 = 8190, and
     * max_srq_sge as {@code T4_MAX_RECV_SGE} (4). No dump gives the range; the firmware's T6 configuration file
     * (FreeBSD sys/dev/cxgbe/firmware/t6fw_cfg.txt) gives the RDMA function PF4 {@code tp_srq = 128}, read here as
     * 128 SRQs ({@link #CXGB4_T6_SRQS}, assumed: the file does not say what unit it counts).
     * {@code c4iw_create_srq} answers E2BIG above the limits ({@link ProviderRule#SRQ_SIZE_E2BIG}). QP types:
     * qp.c {@code c4iw_create_qp} refuses any type but RC with EOPNOTSUPP (iWARP has no UC or UD).
     *
     * @return the profile.
     */
    public static DeviceProfile cxgb4()
    {
        final DeviceAttributes a = base("1.23.4.0", 0x1425, 25608).physPortCnt(2).maxMrSizeBytes(MAX_U64)
            .pageSizeCap(0xffff000L).maxQp(65536).maxQpWr(65535).deviceCapFlags(MW_1_2B | MEM_MGT).maxSge(4)
            .maxSgeRd(1).maxCq(65536).maxCqe(65535).maxMr(32768).maxPd(65536).maxMw(32768)
            .atomicCap(AtomicCap.NONE).maxSrq(CXGB4_T6_SRQS).maxSrqWr(8190).maxSrqSge(4).build();
        final DriverTraits t = DriverTraits.mtt("cxgb4", "drivers/infiniband/hw/cxgb4/mem.c", Transport.IWARP,
            "cxgb4_", 128).withQpTypes(EnumSet.of(QpType.RC));
        return profile("cxgb4", a, VariantPolicy.DEVICE_COUNTER, IndexPolicy.CYCLIC,
            Set.of(ProviderRule.REREG_MR_UNSUPPORTED, ProviderRule.CREATE_QP_EX_UNSUPPORTED,
                ProviderRule.SRQ_SIZE_E2BIG, ProviderRule.READ_SINK_NEEDS_REMOTE_WRITE,
                ProviderRule.CQE_MULTIPLE_OF_16_LESS_TWO, ProviderRule.ATOMIC_OPCODES_NOT_IN_PROVIDER), 100.0, t,
            defaulted("max_qp", "max_qp_wr", "max_sge", "max_cq", "max_cqe", "max_mr", "max_pd", "max_mw"));
    }

    /**
     * Cornelis Omni-Path HFI 100 (hfi1 over rdmavt, 0x24f0 as in devinfo/hfi1.txt). rdmavt mr.c
     * {@code rvt_alloc_lkey}: lkey = index &lt;&lt; (32 - lkey_table_size) | (generation &lt;&lt; 8), the index
     * searched from the last one handed out, the generation a device-wide counter advanced on every allocation;
     * hfi1's lkey table has 2^16 entries ({@code hfi1_lkey_table_size} 16), so the index is the top 16 bits and max_mr
     * 65536. The CPU walks the segment list (no device table). No memory windows, no ODP. Shared receive queues:
     * max_srq 1024 (hfi1 verbs.c, module parameter {@code max_srqs}, default {@code hfi1_max_srqs}).
     *
     * @return the profile.
     */
    public static DeviceProfile hfi1()
    {
        final DeviceAttributes a = base("1.27.0", 0x1175, 9456).hwVer(0x10).maxMrSizeBytes(MAX_U64)
            .pageSizeCap(0x1000L).maxQp(16384).maxQpWr(16383)
            .deviceCapFlags(BASIC_IB | DeviceCap.BAD_PKEY_CNTR.bit() | DeviceCap.BAD_QKEY_CNTR.bit()
                | DeviceCap.SHUTDOWN_PORT.bit() | DeviceCap.SRQ_RESIZE.bit() | MEM_MGT)
            .maxSge(96).maxSgeRd(96).maxCq(131071).maxCqe(3145727).maxMr(65536).maxPd(65535).maxMw(0)
            .atomicCap(AtomicCap.GLOB).maxPkeys(16).maxSrq(1024)
            // hfi1_fill_device_attr: hfi1_max_ahs 0xFFFF, hfi1_max_mcast_grps 16384, hfi1_max_mcast_qp_attached 16
            .maxAh(0xFFFF).maxMcastGrp(16384).maxMcastQpAttach(16).maxTotalMcastQpAttach(16384 * 16).build();
        final DriverTraits t = new DriverTraits("hfi1", "drivers/infiniband/sw/rdmavt/mr.c", Transport.INFINIBAND,
            16, null, Errno.EOPNOTSUPP, Translation.SOFTWARE, 0, 0, 0, Errno.ENOMEM,
            DriverTraits.ASSUMED_FAST_REG_PAGES, true, true, "hfi1_", null);
        return profile("hfi1", a, VariantPolicy.DEVICE_COUNTER, IndexPolicy.CYCLIC,
            Set.of(ProviderRule.REREG_MR_UNSUPPORTED, ProviderRule.CREATE_QP_EX_UNSUPPORTED), 100.0, t,
            defaulted("max_qp", "max_qp_wr", "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_pd", "max_pkeys",
                "atomic_cap"));
    }

    /**
     * Intel E810 in iWARP mode (irdma with the port set to iWARP): the attributes of devinfo/irdma-e810.txt,
     * transport iWARP. irdma verbs.c {@code irdma_create_stag}: a random consumer key byte and a random start
     * index for the round-robin search, so the key byte of a reused index is random. QP types: {@code
     * irdma_validate_qp_attrs} takes RC only when the port is not RoCE (EOPNOTSUPP for UC and UD).
     *
     * @return the profile.
     */
    public static DeviceProfile e810Iwarp()
    {
        final DeviceProfile roce = DeviceProfiles.e810();
        // irdma_query_device reports max_ah and the multicast limits only under rdma_protocol_roce: 0 on iWARP.
        final DeviceAttributes a = roce.attributes().toBuilder().maxAh(0).maxMcastGrp(0).maxMcastQpAttach(0)
            .maxTotalMcastQpAttach(0).build();
        return new DeviceProfile("e810-iwarp", "irdma", a, roce.mtt(), VariantPolicy.RANDOM,
            IndexPolicy.CYCLIC, roce.cacheEntries(), roce.cacheWays(), roce.providerRules(), false, 100.0, 811,
            roce.defaultedFields(), roce.traits().withTransport(Transport.IWARP).withQpTypes(EnumSet.of(QpType.RC)));
    }
}
