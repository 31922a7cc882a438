package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.QpType;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What a kernel driver's registration code does that no {@code ibv_devinfo} line shows: the key layout, the access
 * flags {@code reg_user_mr} accepts, the translation structure and its size limit, the fast-registration page-list
 * length, the RDMA READ/WRITE capability (EFA reports it per device through {@code efadv_query_device}), the
 * transport, and the errnos its code returns where drivers differ. Data, so that the registration path asks the
 * profile instead of testing driver names.
 *
 * <p>The translation structures:
 * <pre>
 *   MTT  one flat table of page addresses per MR, allocated from a device-wide pool (mlx4, mlx5, irdma's PBLE pool
 *        of the device, cxgb4's PBL pool, erdma's MTT)
 *   PBL  a page-buffer list walked by the device in levels: level 0 names one page directly, level 1 a page of
 *        pblEntriesPerPage addresses, level 2 a page of pointers to such pages (bnxt_re PBL_LVL_0..2,
 *        hns hop numbers, qedr's two-layered PBL)
 *   SOFTWARE  the CPU walks the page list (siw, rxe, rdmavt): no device table, no size limit but max_mr_size
 * </pre>
 *
 * <p>Immutable and thread safe.
 *
 * @param driver                the kernel driver ({@code mlx5}, {@code efa}, {@code siw}, ...), {@code generic} for
 *                              a device no rule recognised.
 * @param source                the kernel or provider file these traits are read from.
 * @param transport             the transport ibv_devinfo prints for the device (node type CA, RNIC or unspecified).
 * @param keyVariantBits        low bits of a key the driver varies (the rest is the table index): 8 for every
 *                              driver that builds {@code index << 8 | key}; rdmavt's lkey puts the index in the top
 *                              {@code lkey_table_size} bits (16 on hfi1), so 16.
 * @param acceptedAccess        the access flags the driver's {@code reg_user_mr} accepts; null for "every flag the
 *                              core accepts". RELAXED_ORDERING is optional ({@code IB_ACCESS_OPTIONAL}) and never
 *                              refused.
 * @param unsupportedAccessErrno what a flag outside {@code acceptedAccess} gets (EOPNOTSUPP on efa, EINVAL on mana).
 * @param translation           MTT, PBL or SOFTWARE.
 * @param pblLevels             PBL: the most levels (1 or 2; 0 otherwise).
 * @param pblEntriesPerPage     PBL: page addresses in one PBL page (512 for 4 KiB pages of 8-byte entries).
 * @param maxTranslationEntries most translation entries one MR may have (0: no per-MR limit but the table's).
 * @param translationOverflowErrno what an MR needing more entries gets.
 * @param maxFastRegPages       {@code max_fast_reg_page_list_len}: most pages of a fast-registration MR.
 * @param rdmaRead              the device serves RDMA READ (false on EFA without EFA_QUERY_DEVICE_CAPS_RDMA_READ).
 * @param rdmaWrite             the device serves RDMA WRITE (false on EFA without EFA_QUERY_DEVICE_CAPS_RDMA_WRITE).
 * @param hcaIdPrefix           the prefix of the device names the driver registers ({@code mlx5_}, {@code efa_}).
 * @param pinFailureErrno       the errno the driver returns whenever {@code ib_umem_get} fails, whatever that
 *                              failure's own errno (hns {@code mtr_alloc_bufs}: ENOMEM); null when the driver passes
 *                              the failure through, as most do.
 * @param qpTypes               the QP types the driver's {@code create_qp} accepts; null for every type the core
 *                              offers. EFA takes UD and its driver type SRD only (efa_verbs.c {@code efa_create_qp}
 *                              calls {@code efa_qp_validate_attr}, which refuses any other type with -EOPNOTSUPP;
 *                              rdma-core providers/efa/verbs.c {@code efa_check_qp_attr} too when send_ops_flags
 *                              are given), so {@code ibv_create_qp} of an RC or UC QP fails with EOPNOTSUPP.
 * @param noPageSizeErrno       what a registration gets when no page size of {@code page_size_cap} fits it
 *                              ({@code ib_umem_find_best_pgsz} returns 0): EINVAL for most drivers (mlx5's
 *                              {@code mlx5_umem_find_best_pgsz} callers), EOPNOTSUPP on irdma
 *                              ({@code irdma_alloc_iwmr}, called by {@code irdma_reg_user_mr} and
 *                              {@code irdma_rereg_mr_trans}).
 * @param verbs                 what its queue verbs do where drivers differ ({@link DriverVerbTraits}: the functions
 *                              SRQ and CQ refusals name, extended CQs, QP events, hw_counters, tag matching).
 * @param inlineLimit           the most {@code cap.max_inline_data} the driver's {@code create_qp} takes, and the check
 *                              that refuses more ({@link InlineDataLimits}); no attribute of {@code ibv_query_device}
 *                              reports it ({@link InlineLimit#ASSUMED} where the driver's figure was not read).
 */
public record DriverTraits(String driver, String source, Transport transport, int keyVariantBits,
                           Set<Access> acceptedAccess, Errno unsupportedAccessErrno, Translation translation,
                           int pblLevels, int pblEntriesPerPage, long maxTranslationEntries,
                           Errno translationOverflowErrno, int maxFastRegPages, boolean rdmaRead, boolean rdmaWrite,
                           String hcaIdPrefix, Errno pinFailureErrno, Set<QpType> qpTypes, Errno noPageSizeErrno,
                           DriverVerbTraits verbs, InlineLimit inlineLimit)
{
    /** Entries of one 4 KiB PBL page of 8-byte addresses (bnxt_re {@code MAX_PBL_LVL_1_PGS}, qedr
     * {@code MAX_PBES_ON_PAGE} at 4 KiB). */
    public static final int ENTRIES_PER_4K_PAGE = 512;
    /** {@code RXE_MAX_INLINE_DATA} of the current rxe (rxe_param.h: {@code RXE_MAX_WQE_SIZE} less the size of
     * {@code struct rxe_send_wqe}, 720 - 208), checked by {@code rxe_qp_chk_cap} ("invalid max inline data"). */
    public static final int RXE_MAX_INLINE_BYTES = 512;
    /** {@code IRDMA_MAX_INLINE_DATA_SIZE} of the E810's generation 2 ({@code uk_attrs.max_hw_inline}), checked by
     * {@code irdma_validate_qp_attrs} in the kernel and by libirdma's {@code irdma_ucreate_qp}. */
    public static final int IRDMA_MAX_INLINE_BYTES = 101;
    /** The fast-registration page-list length assumed where the driver's value was not looked up. */
    public static final int ASSUMED_FAST_REG_PAGES = 1 << 16;

    /** How the driver's device translates an MR's addresses. */
    public enum Transport
    {
        /** {@code IBV_TRANSPORT_IB}, node type CA: InfiniBand and RoCE devices. */
        INFINIBAND(0, "InfiniBand"),
        /** {@code IBV_TRANSPORT_IWARP}, node type RNIC: siw, cxgb4, irdma in iWARP mode. */
        IWARP(1, "iWARP"),
        /** {@code IBV_TRANSPORT_UNSPECIFIED}, node type UNSPECIFIED: efa, mana. */
        UNSPECIFIED(4, "unspecified");

        private final int code;
        private final String label;

        Transport(final int code, final String label)
        {
            this.code = code;
            this.label = label;
        }

        /** @return the value of {@code enum ibv_transport_type}. */
        public int code()
        {
            return code;
        }

        /** @return the line ibv_devinfo prints, e.g. {@code iWARP (1)}. */
        public String devinfo()
        {
            return label + " (" + code + ")";
        }

        /**
         * @param value what follows {@code transport:} in a dump.
         * @return the transport, or null for text that names none of these.
         */
        public static Transport parse(final String value)
        {
            for (final Transport t : values())
            {
                if (value.equals(t.devinfo()) || value.startsWith(t.label + " ") || value.equals(t.label))
                {
                    return t;
                }
            }
            return null;
        }
    }

    /** The translation structure (see the class comment). */
    public enum Translation
    {
        /** A flat MTT from a device-wide pool. */
        MTT,
        /** A page-buffer list in levels. */
        PBL,
        /** The CPU walks the page list. */
        SOFTWARE
    }

    /**
     * Traits of a driver whose queue verbs are those {@link DriverVerbTraits#of} gives its name, with the assumed
     * inline-data bound ({@link InlineLimit#ASSUMED}).
     *
     * @param driver                   see the record components.
     * @param source                   see the record components.
     * @param transport                see the record components.
     * @param keyVariantBits           see the record components.
     * @param acceptedAccess           see the record components.
     * @param unsupportedAccessErrno   see the record components.
     * @param translation              see the record components.
     * @param pblLevels                see the record components.
     * @param pblEntriesPerPage        see the record components.
     * @param maxTranslationEntries    see the record components.
     * @param translationOverflowErrno see the record components.
     * @param maxFastRegPages          see the record components.
     * @param rdmaRead                 see the record components.
     * @param rdmaWrite                see the record components.
     * @param hcaIdPrefix              see the record components.
     * @param pinFailureErrno          see the record components.
     * @param qpTypes                  see the record components.
     * @param noPageSizeErrno          see the record components.
     */
    public DriverTraits(final String driver, final String source, final Transport transport, final int keyVariantBits,
        final Set<Access> acceptedAccess, final Errno unsupportedAccessErrno, final Translation translation,
        final int pblLevels, final int pblEntriesPerPage, final long maxTranslationEntries,
        final Errno translationOverflowErrno, final int maxFastRegPages, final boolean rdmaRead,
        final boolean rdmaWrite, final String hcaIdPrefix, final Errno pinFailureErrno, final Set<QpType> qpTypes,
        final Errno noPageSizeErrno)
    {
        this(driver, source, transport, keyVariantBits, acceptedAccess, unsupportedAccessErrno, translation, pblLevels,
            pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno, maxFastRegPages, rdmaRead, rdmaWrite,
            hcaIdPrefix, pinFailureErrno, qpTypes, noPageSizeErrno, DriverVerbTraits.of(driver),
            InlineLimit.ASSUMED);
    }

    /**
     * Traits of a driver that answers EINVAL when no page size fits (see the record components).
     *
     * @param driver                   see the record components.
     * @param source                   see the record components.
     * @param transport                see the record components.
     * @param keyVariantBits           see the record components.
     * @param acceptedAccess           see the record components.
     * @param unsupportedAccessErrno   see the record components.
     * @param translation              see the record components.
     * @param pblLevels                see the record components.
     * @param pblEntriesPerPage        see the record components.
     * @param maxTranslationEntries    see the record components.
     * @param translationOverflowErrno see the record components.
     * @param maxFastRegPages          see the record components.
     * @param rdmaRead                 see the record components.
     * @param rdmaWrite                see the record components.
     * @param hcaIdPrefix              see the record components.
     * @param pinFailureErrno          see the record components.
     * @param qpTypes                  see the record components.
     */
    public DriverTraits(final String driver, final String source, final Transport transport, final int keyVariantBits,
        final Set<Access> acceptedAccess, final Errno unsupportedAccessErrno, final Translation translation,
        final int pblLevels, final int pblEntriesPerPage, final long maxTranslationEntries,
        final Errno translationOverflowErrno, final int maxFastRegPages, final boolean rdmaRead,
        final boolean rdmaWrite, final String hcaIdPrefix, final Errno pinFailureErrno, final Set<QpType> qpTypes)
    {
        this(driver, source, transport, keyVariantBits, acceptedAccess, unsupportedAccessErrno, translation, pblLevels,
            pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno, maxFastRegPages, rdmaRead, rdmaWrite,
            hcaIdPrefix, pinFailureErrno, qpTypes, Errno.EINVAL);
    }

    /**
     * Traits of a driver that accepts every QP type the core offers.
     *
     * @param driver                   see the record components.
     * @param source                   see the record components.
     * @param transport                see the record components.
     * @param keyVariantBits           see the record components.
     * @param acceptedAccess           see the record components.
     * @param unsupportedAccessErrno   see the record components.
     * @param translation              see the record components.
     * @param pblLevels                see the record components.
     * @param pblEntriesPerPage        see the record components.
     * @param maxTranslationEntries    see the record components.
     * @param translationOverflowErrno see the record components.
     * @param maxFastRegPages          see the record components.
     * @param rdmaRead                 see the record components.
     * @param rdmaWrite                see the record components.
     * @param hcaIdPrefix              see the record components.
     * @param pinFailureErrno          see the record components.
     */
    public DriverTraits(final String driver, final String source, final Transport transport, final int keyVariantBits,
        final Set<Access> acceptedAccess, final Errno unsupportedAccessErrno, final Translation translation,
        final int pblLevels, final int pblEntriesPerPage, final long maxTranslationEntries,
        final Errno translationOverflowErrno, final int maxFastRegPages, final boolean rdmaRead,
        final boolean rdmaWrite, final String hcaIdPrefix, final Errno pinFailureErrno)
    {
        this(driver, source, transport, keyVariantBits, acceptedAccess, unsupportedAccessErrno, translation, pblLevels,
            pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno, maxFastRegPages, rdmaRead, rdmaWrite,
            hcaIdPrefix, pinFailureErrno, null);
    }

    /**
     * @throws NullPointerException     when a reference other than {@code acceptedAccess}, {@code pinFailureErrno} or
     *                                  {@code qpTypes} is null.
     * @throws IllegalArgumentException for variant bits outside 1-16, PBL levels outside 0-3 or a fast-reg length
     *                                  below 1.
     */
    public DriverTraits
    {
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(unsupportedAccessErrno, "unsupportedAccessErrno");
        Objects.requireNonNull(translation, "translation");
        Objects.requireNonNull(translationOverflowErrno, "translationOverflowErrno");
        Objects.requireNonNull(hcaIdPrefix, "hcaIdPrefix");
        Objects.requireNonNull(noPageSizeErrno, "noPageSizeErrno");
        Objects.requireNonNull(verbs, "verbs");
        Objects.requireNonNull(inlineLimit, "inlineLimit");
        acceptedAccess = acceptedAccess == null ? null
            : java.util.Collections.unmodifiableSet(acceptedAccess.isEmpty() ? EnumSet.noneOf(Access.class)
                : EnumSet.copyOf(acceptedAccess));
        qpTypes = qpTypes == null ? null
            : java.util.Collections.unmodifiableSet(qpTypes.isEmpty() ? EnumSet.noneOf(QpType.class)
                : EnumSet.copyOf(qpTypes));
        if (keyVariantBits < 1 || keyVariantBits > 16)
        {
            throw new IllegalArgumentException("driver " + driver + ": keyVariantBits=" + keyVariantBits
                + " must be 1-16");
        }
        if (pblLevels < 0 || pblLevels > 3 || maxFastRegPages < 1 || maxTranslationEntries < 0)
        {
            throw new IllegalArgumentException("driver " + driver + ": pblLevels=" + pblLevels + " maxFastRegPages="
                + maxFastRegPages + " maxTranslationEntries=" + maxTranslationEntries + " out of range");
        }
    }

    /**
     * Traits of a driver with an MTT, 8 variant bits, every access flag accepted and RDMA READ and WRITE served.
     *
     * @param driver          the driver.
     * @param source          the file the traits come from.
     * @param transport       its transport.
     * @param hcaIdPrefix     the prefix of its device names.
     * @param maxFastRegPages {@code max_fast_reg_page_list_len}.
     * @return the traits.
     */
    public static DriverTraits mtt(final String driver, final String source, final Transport transport,
        final String hcaIdPrefix, final int maxFastRegPages)
    {
        return new DriverTraits(driver, source, transport, 8, null, Errno.EOPNOTSUPP, Translation.MTT, 0, 0, 0,
            Errno.ENOMEM, maxFastRegPages, true, true, hcaIdPrefix, null);
    }

    /**
     * The traits of the drivers whose built-in profiles predate per-driver traits (mlx4, mlx5, rxe, irdma), and of
     * a driver no rule knows (8 variant bits, all flags, an MTT).
     *
     * @param driver a driver name.
     * @return its traits.
     */
    public static DriverTraits of(final String driver)
    {
        return switch (driver)
        {
            case "mlx4" -> mtt("mlx4", "drivers/infiniband/hw/mlx4/mr.c", Transport.INFINIBAND, "mlx4_", 511);
            case "mlx5" -> mtt("mlx5", "drivers/infiniband/hw/mlx5/mr.c", Transport.INFINIBAND, "mlx5_",
                ASSUMED_FAST_REG_PAGES);
            case "rxe" -> new DriverTraits("rxe", "drivers/infiniband/sw/rxe/rxe_mr.c", Transport.INFINIBAND, 8, null,
                Errno.EOPNOTSUPP, Translation.SOFTWARE, 0, 0, 0, Errno.ENOMEM, ASSUMED_FAST_REG_PAGES, true, true,
                "rxe", null).withInlineLimit(new InlineLimit(RXE_MAX_INLINE_BYTES,
                    "rxe_qp_chk_cap: RXE_MAX_INLINE_DATA"));
            // irdma_validate_qp_attrs: on a RoCE port RC and UD (and the kernel's GSI), anything else EOPNOTSUPP
            case "irdma" -> mtt("irdma", "drivers/infiniband/hw/irdma/verbs.c", Transport.INFINIBAND, "irdma",
                ASSUMED_FAST_REG_PAGES).withNoPageSizeErrno(Errno.EOPNOTSUPP)
                .withQpTypes(java.util.EnumSet.of(QpType.RC, QpType.UD))
                .withInlineLimit(new InlineLimit(IRDMA_MAX_INLINE_BYTES,
                    "irdma_validate_qp_attrs: IRDMA_MAX_INLINE_DATA_SIZE"));
            default -> mtt(driver, "none: no rule recognises this device", Transport.INFINIBAND, driver,
                ASSUMED_FAST_REG_PAGES);
        };
    }

    /**
     * @param transportNow the transport.
     * @return a copy with it.
     */
    public DriverTraits withTransport(final Transport transportNow)
    {
        return new DriverTraits(driver, source, transportNow, keyVariantBits, acceptedAccess, unsupportedAccessErrno,
            translation, pblLevels, pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno,
            maxFastRegPages, rdmaRead, rdmaWrite, hcaIdPrefix, pinFailureErrno, qpTypes, noPageSizeErrno, verbs,
            inlineLimit);
    }

    /**
     * @param read  the device serves RDMA READ.
     * @param write the device serves RDMA WRITE.
     * @return a copy with these capabilities.
     */
    public DriverTraits withRdma(final boolean read, final boolean write)
    {
        return new DriverTraits(driver, source, transport, keyVariantBits, acceptedAccess, unsupportedAccessErrno,
            translation, pblLevels, pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno,
            maxFastRegPages, read, write, hcaIdPrefix, pinFailureErrno, qpTypes, noPageSizeErrno, verbs,
            inlineLimit);
    }

    /**
     * @param types the QP types the driver's {@code create_qp} accepts; null for every type.
     * @return a copy with them.
     */
    public DriverTraits withQpTypes(final Set<QpType> types)
    {
        return new DriverTraits(driver, source, transport, keyVariantBits, acceptedAccess, unsupportedAccessErrno,
            translation, pblLevels, pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno,
            maxFastRegPages, rdmaRead, rdmaWrite, hcaIdPrefix, pinFailureErrno, types, noPageSizeErrno, verbs,
            inlineLimit);
    }

    /**
     * @param errno what a registration gets when no page size of page_size_cap fits it.
     * @return a copy with it.
     */
    public DriverTraits withNoPageSizeErrno(final Errno errno)
    {
        return new DriverTraits(driver, source, transport, keyVariantBits, acceptedAccess, unsupportedAccessErrno,
            translation, pblLevels, pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno,
            maxFastRegPages, rdmaRead, rdmaWrite, hcaIdPrefix, pinFailureErrno, qpTypes, errno, verbs,
            inlineLimit);
    }

    /**
     * @param limit the most inline data the driver's create_qp takes, and its check.
     * @return a copy with it.
     */
    public DriverTraits withInlineLimit(final InlineLimit limit)
    {
        return new DriverTraits(driver, source, transport, keyVariantBits, acceptedAccess, unsupportedAccessErrno,
            translation, pblLevels, pblEntriesPerPage, maxTranslationEntries, translationOverflowErrno,
            maxFastRegPages, rdmaRead, rdmaWrite, hcaIdPrefix, pinFailureErrno, qpTypes, noPageSizeErrno, verbs,
            limit);
    }

    /**
     * @param type a QP type.
     * @return true when the driver's {@code create_qp} accepts it (see {@link #qpTypes()}).
     */
    public boolean acceptsQpType(final QpType type)
    {
        return qpTypes == null || qpTypes.contains(type);
    }

    /**
     * @return one line for people: key layout, accepted access, translation and its limit, fast-reg length, RDMA
     * READ/WRITE, source.
     */
    public String describe()
    {
        final StringBuilder sb = new StringBuilder(256);
        sb.append("key = index << ").append(keyVariantBits).append(" | ").append(keyVariantBits)
            .append("-bit variant; access ").append(acceptedAccess == null ? "any the core accepts"
                : acceptedAccess + " only (else " + unsupportedAccessErrno + ")")
            .append("; translation ").append(translation);
        if (translation == Translation.PBL && pblLevels > 0)
        {
            sb.append(' ').append(pblLevels).append(" level(s) of ").append(pblEntriesPerPage).append(" entries");
        }
        if (maxTranslationEntries > 0)
        {
            sb.append(", at most ").append(maxTranslationEntries).append(" entries an MR (else ")
                .append(translationOverflowErrno).append(')');
        }
        sb.append("; fast-reg up to ").append(maxFastRegPages).append(" pages; RDMA READ ")
            .append(rdmaRead ? "yes" : "no").append(", WRITE ").append(rdmaWrite ? "yes" : "no");
        if (qpTypes != null)
        {
            sb.append("; QP types ").append(qpTypes).append(" only (else EOPNOTSUPP)");
        }
        if (noPageSizeErrno != Errno.EINVAL)
        {
            sb.append("; no page size of page_size_cap fits: ").append(noPageSizeErrno);
        }
        sb.append("; source ").append(source);
        return sb.toString();
    }

    /**
     * @param flags the access flags of a registration.
     * @return the flags the driver refuses (empty when it takes them all); RELAXED_ORDERING is never refused.
     */
    public Set<Access> refused(final Set<Access> flags)
    {
        if (acceptedAccess == null)
        {
            return Set.of();
        }
        final Set<Access> out = EnumSet.noneOf(Access.class);
        for (final Access a : flags)
        {
            if (a != Access.RELAXED_ORDERING && !acceptedAccess.contains(a))
            {
                out.add(a);
            }
        }
        return out;
    }
}
