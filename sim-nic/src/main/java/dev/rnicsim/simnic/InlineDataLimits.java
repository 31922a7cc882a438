package dev.rnicsim.simnic;

/**
 * The most inline data ({@code ibv_qp_init_attr.cap.max_inline_data}) a driver's {@code create_qp} takes. No
 * attribute of {@code ibv_query_device} reports it, so an application learns it only by asking for too much: the
 * drivers that check it refuse the QP with EINVAL and create nothing. A property of the device profile
 * ({@link DriverTraits#inlineLimit()}, an {@link InlineLimit}), set where each profile is built:
 *
 * <ul>
 * <li>rxe: 512 bytes, {@code RXE_MAX_INLINE_DATA} (rxe_param.h: {@code RXE_MAX_WQE_SIZE} less the size of
 * {@code struct rxe_send_wqe}, 720 - 208), checked by {@code rxe_qp_chk_cap} ("invalid max inline data"). The rxe of
 * the older kernels {@code rxe-legacy} stands for (before the FLUSH access flags) had a fixed
 * {@code RXE_MAX_INLINE_DATA = 400}, the limit ofiwg/libfabric issue 4719 hit ("invalid max inline data = 512 &gt;
 * 400").</li>
 * <li>irdma: 101 bytes, {@code IRDMA_MAX_INLINE_DATA_SIZE} of the E810's generation 2 ({@code uk_attrs.max_hw_inline}),
 * checked by {@code irdma_validate_qp_attrs} in the kernel and by libirdma's {@code irdma_ucreate_qp}.</li>
 * <li>siw: 80 bytes, {@code SIW_MAX_INLINE}: the inline data takes the place of SGEs 1 to 5 of a WQE
 * ({@code sizeof(struct siw_sge)} 16 x ({@code SIW_MAX_SGE} 6 - 1)), checked by {@code siw_create_qp}.</li>
 * <li>qedr: 256 bytes on RoCE, {@code ROCE_REQ_MAX_INLINE_DATA_SIZE} ({@code qed_rdma_init_devinfo}), checked by
 * {@code qedr_check_qp_attrs} ("unsupported inline data size").</li>
 * <li>efa: the device's {@code inline_buf_size} (32 bytes on the modelled parts, UCX's EFA fixture), which
 * {@code efadv_query_device} reports and {@code efa_qp_validate_cap} (efa_verbs.c) checks.</li>
 * <li>every other driver: 1024 bytes ({@link InlineLimit#ASSUMED}: mlx4's {@code create_qp_ex} bound, {@link SendOps};
 * mlx5 sizes the send WQE from it and refuses one larger than the device's descriptor, about that much: assumed for
 * the rest).</li>
 * </ul>
 */
final class InlineDataLimits
{
    private InlineDataLimits()
    {
    }

    /**
     * @param profile a device profile.
     * @return the most inline bytes its driver's {@code create_qp} takes.
     */
    static int maxBytes(final DeviceProfile profile)
    {
        return profile.traits().inlineLimit().maxBytes();
    }

    /**
     * {@code ibv_create_qp}'s check of {@code cap.max_inline_data}: EINVAL, nothing created, when it is negative or
     * above the driver's bound.
     *
     * @param verb         the verb, for the message.
     * @param device       the device the QP is created on.
     * @param inlineBytes  the {@code max_inline_data} asked for.
     */
    static void check(final String verb, final SimDevice device, final int inlineBytes)
    {
        final InlineLimit limit = device.profile().traits().inlineLimit();
        final int max = limit.maxBytes();
        if (inlineBytes < 0)
        {
            throw Errors.invalid(verb, "max_inline_data=" + inlineBytes
                + " is negative and nothing was created; ask for 0 to " + max + " inline bytes");
        }
        if (inlineBytes > max)
        {
            throw Errors.invalid(verb, "max_inline_data=" + inlineBytes + " > " + max + " bytes, the most the "
                + device.profile().driver() + " driver takes (" + limit.checkedBy() + "; no attribute of "
                + "ibv_query_device reports it); nothing was created. Ask for at most " + max
                + " inline bytes, or send larger payloads from a registered buffer instead of IBV_SEND_INLINE");
        }
    }
}
