package dev.rnicsim.verbs;

import java.util.Objects;

/**
 * Device attributes as {@code ibv_query_device} and {@code ibv_query_device_ex} return them
 * ({@code struct ibv_device_attr}, {@code struct ibv_device_attr_ex}; ibv_query_device(3)), with the fields that
 * matter for memory registration, queue sizing and atomics. Counts are numbers of objects; sizes are in bytes.
 *
 * @param fwVer firmware version text ({@code fw_ver}).
 * @param nodeGuid node GUID.
 * @param sysImageGuid system image GUID.
 * @param vendorId IEEE vendor id ({@code vendor_id}).
 * @param vendorPartId vendor part id ({@code vendor_part_id}).
 * @param hwVer hardware version.
 * @param physPortCnt number of physical ports.
 * @param maxMrSizeBytes largest registrable block in bytes ({@code max_mr_size}), read as unsigned: -1 is 2^64-1.
 * @param pageSizeCap bit mask of the page sizes the device's translation supports ({@code page_size_cap}): bit n set
 *     means 2^n bytes.
 * @param maxQp maximum number of QPs ({@code max_qp}).
 * @param maxQpWr maximum outstanding work requests per queue ({@code max_qp_wr}).
 * @param deviceCapFlags {@code device_cap_flags} (see {@link DeviceCap}).
 * @param maxSge maximum SGEs per send or receive work request ({@code max_sge}).
 * @param maxSgeRd maximum SGEs per RDMA READ ({@code max_sge_rd}).
 * @param maxCq maximum number of CQs.
 * @param maxCqe maximum entries per CQ ({@code max_cqe}).
 * @param maxMr maximum number of MRs ({@code max_mr}).
 * @param maxPd maximum number of PDs.
 * @param maxQpRdAtom outstanding READs and atomics a QP may receive ({@code max_qp_rd_atom}).
 * @param maxQpInitRdAtom outstanding READs and atomics a QP may issue ({@code max_qp_init_rd_atom}).
 * @param maxResRdAtom total READ/atomic responder resources ({@code max_res_rd_atom}).
 * @param maxMw maximum number of memory windows ({@code max_mw}).
 * @param atomicCap atomic support ({@code atomic_cap}).
 * @param maxSrq maximum number of SRQs.
 * @param maxPkeys P_Key table size.
 * @param localCaAckDelay local CA ACK delay (IBA exponent).
 * @param odpCaps on-demand-paging capabilities ({@code ibv_query_device_ex}).
 * @param maxSrqWr receive work requests an SRQ may hold ({@code max_srq_wr}); drivers report their own figure,
 *     not max_qp_wr (mlx5 {@code (1 << log_max_srq_sz) - 1}, mlx4 {@code max_srq_wqes - 1}, siw
 *     {@code SIW_MAX_SRQ_WR}).
 * @param maxSrqSge SGEs per SRQ receive work request ({@code max_srq_sge}).
 * @param maxMcastGrp multicast groups the device can hold ({@code max_mcast_grp}; 0 without multicast).
 * @param maxMcastQpAttach QPs one multicast group may have attached ({@code max_mcast_qp_attach}).
 * @param maxTotalMcastQpAttach QP attachments over all groups ({@code max_total_mcast_qp_attach}; mlx4, mlx5 and
 *     hfi1 report max_mcast_grp times max_mcast_qp_attach, irdma max_qp times its 8 groups per QP).
 * @param maxAh address handles the device can hold ({@code max_ah}; mlx4, mlx5 and mana report INT_MAX, rxe its
 *     {@code RXE_MAX_AH}).
 */
public record DeviceAttributes(String fwVer, long nodeGuid, long sysImageGuid, int vendorId, int vendorPartId,
    int hwVer, int physPortCnt, long maxMrSizeBytes, long pageSizeCap, int maxQp, int maxQpWr, long deviceCapFlags,
    int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom, int maxQpInitRdAtom,
    int maxResRdAtom, int maxMw, AtomicCap atomicCap, int maxSrq, int maxPkeys, int localCaAckDelay, OdpCaps odpCaps,
    int maxSrqWr, int maxSrqSge, int maxMcastGrp, int maxMcastQpAttach, int maxTotalMcastQpAttach, int maxAh)
{
    /**
     * Attributes without multicast or address-handle limits (all four 0, as a device without UD reports them).
     */
    public DeviceAttributes(final String fwVer, final long nodeGuid, final long sysImageGuid, final int vendorId,
        final int vendorPartId, final int hwVer, final int physPortCnt, final long maxMrSizeBytes,
        final long pageSizeCap, final int maxQp, final int maxQpWr, final long deviceCapFlags, final int maxSge,
        final int maxSgeRd, final int maxCq, final int maxCqe, final int maxMr, final int maxPd, final int maxQpRdAtom,
        final int maxQpInitRdAtom, final int maxResRdAtom, final int maxMw, final AtomicCap atomicCap,
        final int maxSrq, final int maxPkeys, final int localCaAckDelay, final OdpCaps odpCaps, final int maxSrqWr,
        final int maxSrqSge)
    {
        this(fwVer, nodeGuid, sysImageGuid, vendorId, vendorPartId, hwVer, physPortCnt, maxMrSizeBytes, pageSizeCap,
            maxQp, maxQpWr, deviceCapFlags, maxSge, maxSgeRd, maxCq, maxCqe, maxMr, maxPd, maxQpRdAtom,
            maxQpInitRdAtom, maxResRdAtom, maxMw, atomicCap, maxSrq, maxPkeys, localCaAckDelay, odpCaps, maxSrqWr,
            maxSrqSge, 0, 0, 0, 0);
    }

    /**
     * Attributes without separate SRQ limits: max_srq_wr and max_srq_sge are taken as max_qp_wr and max_sge (assumed,
     * for a device that reports no figures of its own).
     */
    public DeviceAttributes(final String fwVer, final long nodeGuid, final long sysImageGuid, final int vendorId,
        final int vendorPartId, final int hwVer, final int physPortCnt, final long maxMrSizeBytes,
        final long pageSizeCap, final int maxQp, final int maxQpWr, final long deviceCapFlags, final int maxSge,
        final int maxSgeRd, final int maxCq, final int maxCqe, final int maxMr, final int maxPd, final int maxQpRdAtom,
        final int maxQpInitRdAtom, final int maxResRdAtom, final int maxMw, final AtomicCap atomicCap,
        final int maxSrq, final int maxPkeys, final int localCaAckDelay, final OdpCaps odpCaps)
    {
        this(fwVer, nodeGuid, sysImageGuid, vendorId, vendorPartId, hwVer, physPortCnt, maxMrSizeBytes, pageSizeCap,
            maxQp, maxQpWr, deviceCapFlags, maxSge, maxSgeRd, maxCq, maxCqe, maxMr, maxPd, maxQpRdAtom,
            maxQpInitRdAtom, maxResRdAtom, maxMw, atomicCap, maxSrq, maxPkeys, localCaAckDelay, odpCaps, maxQpWr,
            maxSge, 0, 0, 0, 0);
    }

    /**
     * @throws NullPointerException when {@code fwVer}, {@code atomicCap} or {@code odpCaps} is null.
     */
    public DeviceAttributes
    {
        Objects.requireNonNull(fwVer, "fwVer");
        Objects.requireNonNull(atomicCap, "atomicCap");
        Objects.requireNonNull(odpCaps, "odpCaps");
    }

    /**
     * {@code phys_port_cnt_ex} of {@code ibv_query_device_ex} (the kernel's {@code ib_uverbs_query_device_ex}
     * copies the device's u32 port count there, and {@code copy_query_dev_fields} that count capped at 255 into the
     * u8 {@code phys_port_cnt}). The model's devices have fewer than 256 ports, where the two are equal.
     *
     * @return the full port count.
     */
    public int physPortCntEx()
    {
        return physPortCnt;
    }

    /**
     * @param cap a capability flag.
     * @return true when {@code device_cap_flags} has it.
     */
    public boolean has(final DeviceCap cap)
    {
        return (deviceCapFlags & cap.bit()) != 0;
    }

    /**
     * @param pageSizeBytes a power of two.
     * @return true when {@code page_size_cap} allows that page size.
     */
    public boolean supportsPageSize(final long pageSizeBytes)
    {
        return Long.bitCount(pageSizeBytes) == 1 && (pageSizeCap & pageSizeBytes) != 0;
    }

    /**
     * @return a builder holding these attributes, to change some of them.
     */
    public Builder toBuilder()
    {
        final Builder b = new Builder();
        b.fwVer = fwVer;
        b.nodeGuid = nodeGuid;
        b.sysImageGuid = sysImageGuid;
        b.vendorId = vendorId;
        b.vendorPartId = vendorPartId;
        b.hwVer = hwVer;
        b.physPortCnt = physPortCnt;
        b.maxMrSizeBytes = maxMrSizeBytes;
        b.pageSizeCap = pageSizeCap;
        b.maxQp = maxQp;
        b.maxQpWr = maxQpWr;
        b.deviceCapFlags = deviceCapFlags;
        b.maxSge = maxSge;
        b.maxSgeRd = maxSgeRd;
        b.maxCq = maxCq;
        b.maxCqe = maxCqe;
        b.maxMr = maxMr;
        b.maxPd = maxPd;
        b.maxQpRdAtom = maxQpRdAtom;
        b.maxQpInitRdAtom = maxQpInitRdAtom;
        b.maxResRdAtom = maxResRdAtom;
        b.maxMw = maxMw;
        b.atomicCap = atomicCap;
        b.maxSrq = maxSrq;
        b.maxPkeys = maxPkeys;
        b.localCaAckDelay = localCaAckDelay;
        b.odpCaps = odpCaps;
        b.maxSrqWr = maxSrqWr;
        b.maxSrqSge = maxSrqSge;
        b.maxMcastGrp = maxMcastGrp;
        b.maxMcastQpAttach = maxMcastQpAttach;
        b.maxTotalMcastQpAttach = maxTotalMcastQpAttach;
        b.maxAh = maxAh;
        return b;
    }

    /**
     * @return a builder with every count 0, an empty firmware version, no atomics and no ODP.
     */
    public static Builder builder()
    {
        return new Builder();
    }

    /**
     * Collects attributes; fields not set keep the values of {@link #builder()} or {@link #toBuilder()}.
     * Not thread safe.
     */
    public static final class Builder
    {
        private String fwVer = "";
        private long nodeGuid;
        private long sysImageGuid;
        private int vendorId;
        private int vendorPartId;
        private int hwVer;
        private int physPortCnt;
        private long maxMrSizeBytes;
        private long pageSizeCap;
        private int maxQp;
        private int maxQpWr;
        private long deviceCapFlags;
        private int maxSge;
        private int maxSgeRd;
        private int maxCq;
        private int maxCqe;
        private int maxMr;
        private int maxPd;
        private int maxQpRdAtom;
        private int maxQpInitRdAtom;
        private int maxResRdAtom;
        private int maxMw;
        private AtomicCap atomicCap = AtomicCap.NONE;
        private int maxSrq;
        /** Null until set: then max_qp_wr. */
        private Integer maxSrqWr;
        /** Null until set: then max_sge. */
        private Integer maxSrqSge;
        private int maxPkeys;
        private int localCaAckDelay;
        private OdpCaps odpCaps = OdpCaps.NONE;
        private int maxMcastGrp;
        private int maxMcastQpAttach;
        private int maxTotalMcastQpAttach;
        private int maxAh;

        private Builder()
        {
        }

        /**
         * @param value Firmware version text ({@code fw_ver}).
         * @return this builder.
         */
        public Builder fwVer(final String value)
        {
            this.fwVer = value;
            return this;
        }

        /**
         * @param value Node GUID.
         * @return this builder.
         */
        public Builder nodeGuid(final long value)
        {
            this.nodeGuid = value;
            return this;
        }

        /**
         * @param value System image GUID.
         * @return this builder.
         */
        public Builder sysImageGuid(final long value)
        {
            this.sysImageGuid = value;
            return this;
        }

        /**
         * @param value IEEE vendor id ({@code vendor_id}).
         * @return this builder.
         */
        public Builder vendorId(final int value)
        {
            this.vendorId = value;
            return this;
        }

        /**
         * @param value Vendor part id ({@code vendor_part_id}).
         * @return this builder.
         */
        public Builder vendorPartId(final int value)
        {
            this.vendorPartId = value;
            return this;
        }

        /**
         * @param value Hardware version.
         * @return this builder.
         */
        public Builder hwVer(final int value)
        {
            this.hwVer = value;
            return this;
        }

        /**
         * @param value Number of physical ports.
         * @return this builder.
         */
        public Builder physPortCnt(final int value)
        {
            this.physPortCnt = value;
            return this;
        }

        /**
         * @param value Largest registrable block in bytes ({@code max_mr_size}), read as unsigned: -1 is 2^64-1.
         * @return this builder.
         */
        public Builder maxMrSizeBytes(final long value)
        {
            this.maxMrSizeBytes = value;
            return this;
        }

        /**
         * @param value Bit mask of the page sizes the device's translation supports ({@code page_size_cap}): bit n
         *     set means 2^n bytes.
         * @return this builder.
         */
        public Builder pageSizeCap(final long value)
        {
            this.pageSizeCap = value;
            return this;
        }

        /**
         * @param value Maximum number of QPs ({@code max_qp}).
         * @return this builder.
         */
        public Builder maxQp(final int value)
        {
            this.maxQp = value;
            return this;
        }

        /**
         * @param value Maximum outstanding work requests per queue ({@code max_qp_wr}).
         * @return this builder.
         */
        public Builder maxQpWr(final int value)
        {
            this.maxQpWr = value;
            return this;
        }

        /**
         * @param value {@code device_cap_flags} (see {@link DeviceCap}).
         * @return this builder.
         */
        public Builder deviceCapFlags(final long value)
        {
            this.deviceCapFlags = value;
            return this;
        }

        /**
         * @param value Maximum SGEs per send or receive work request ({@code max_sge}).
         * @return this builder.
         */
        public Builder maxSge(final int value)
        {
            this.maxSge = value;
            return this;
        }

        /**
         * @param value Maximum SGEs per RDMA READ ({@code max_sge_rd}).
         * @return this builder.
         */
        public Builder maxSgeRd(final int value)
        {
            this.maxSgeRd = value;
            return this;
        }

        /**
         * @param value Maximum number of CQs.
         * @return this builder.
         */
        public Builder maxCq(final int value)
        {
            this.maxCq = value;
            return this;
        }

        /**
         * @param value Maximum entries per CQ ({@code max_cqe}).
         * @return this builder.
         */
        public Builder maxCqe(final int value)
        {
            this.maxCqe = value;
            return this;
        }

        /**
         * @param value Maximum number of MRs ({@code max_mr}).
         * @return this builder.
         */
        public Builder maxMr(final int value)
        {
            this.maxMr = value;
            return this;
        }

        /**
         * @param value Maximum number of PDs.
         * @return this builder.
         */
        public Builder maxPd(final int value)
        {
            this.maxPd = value;
            return this;
        }

        /**
         * @param value Outstanding READs and atomics a QP may receive ({@code max_qp_rd_atom}).
         * @return this builder.
         */
        public Builder maxQpRdAtom(final int value)
        {
            this.maxQpRdAtom = value;
            return this;
        }

        /**
         * @param value Outstanding READs and atomics a QP may issue ({@code max_qp_init_rd_atom}).
         * @return this builder.
         */
        public Builder maxQpInitRdAtom(final int value)
        {
            this.maxQpInitRdAtom = value;
            return this;
        }

        /**
         * @param value Total READ/atomic responder resources ({@code max_res_rd_atom}).
         * @return this builder.
         */
        public Builder maxResRdAtom(final int value)
        {
            this.maxResRdAtom = value;
            return this;
        }

        /**
         * @param value Maximum number of memory windows ({@code max_mw}).
         * @return this builder.
         */
        public Builder maxMw(final int value)
        {
            this.maxMw = value;
            return this;
        }

        /**
         * @param value Atomic support ({@code atomic_cap}).
         * @return this builder.
         */
        public Builder atomicCap(final AtomicCap value)
        {
            this.atomicCap = value;
            return this;
        }

        /**
         * @param value Maximum number of SRQs.
         * @return this builder.
         */
        public Builder maxSrq(final int value)
        {
            this.maxSrq = value;
            return this;
        }

        /**
         * @param value receive work requests an SRQ may hold ({@code max_srq_wr}); unset, max_qp_wr.
         * @return this builder.
         */
        public Builder maxSrqWr(final int value)
        {
            this.maxSrqWr = value;
            return this;
        }

        /**
         * @param value SGEs per SRQ receive work request ({@code max_srq_sge}); unset, max_sge.
         * @return this builder.
         */
        public Builder maxSrqSge(final int value)
        {
            this.maxSrqSge = value;
            return this;
        }

        /**
         * @param value P_Key table size.
         * @return this builder.
         */
        public Builder maxPkeys(final int value)
        {
            this.maxPkeys = value;
            return this;
        }

        /**
         * @param value Local CA ACK delay (IBA exponent).
         * @return this builder.
         */
        public Builder localCaAckDelay(final int value)
        {
            this.localCaAckDelay = value;
            return this;
        }

        /**
         * @param value On-demand-paging capabilities ({@code ibv_query_device_ex}).
         * @return this builder.
         */
        public Builder odpCaps(final OdpCaps value)
        {
            this.odpCaps = value;
            return this;
        }

        /**
         * @param value multicast groups the device can hold ({@code max_mcast_grp}).
         * @return this builder.
         */
        public Builder maxMcastGrp(final int value)
        {
            this.maxMcastGrp = value;
            return this;
        }

        /**
         * @param value QPs one multicast group may have attached ({@code max_mcast_qp_attach}).
         * @return this builder.
         */
        public Builder maxMcastQpAttach(final int value)
        {
            this.maxMcastQpAttach = value;
            return this;
        }

        /**
         * @param value QP attachments over all multicast groups ({@code max_total_mcast_qp_attach}).
         * @return this builder.
         */
        public Builder maxTotalMcastQpAttach(final int value)
        {
            this.maxTotalMcastQpAttach = value;
            return this;
        }

        /**
         * @param value address handles the device can hold ({@code max_ah}).
         * @return this builder.
         */
        public Builder maxAh(final int value)
        {
            this.maxAh = value;
            return this;
        }

        /**
         * @return the attributes.
         * @throws NullPointerException when a text or enum field was set to null.
         */
        public DeviceAttributes build()
        {
            return new DeviceAttributes(fwVer, nodeGuid, sysImageGuid, vendorId, vendorPartId, hwVer, physPortCnt,
                maxMrSizeBytes, pageSizeCap, maxQp, maxQpWr, deviceCapFlags, maxSge, maxSgeRd, maxCq, maxCqe, maxMr,
                maxPd, maxQpRdAtom, maxQpInitRdAtom, maxResRdAtom, maxMw, atomicCap, maxSrq, maxPkeys,
                localCaAckDelay, odpCaps, maxSrqWr == null ? maxQpWr : maxSrqWr,
                maxSrqSge == null ? maxSge : maxSrqSge, maxMcastGrp, maxMcastQpAttach, maxTotalMcastQpAttach, maxAh);
        }
    }
}
