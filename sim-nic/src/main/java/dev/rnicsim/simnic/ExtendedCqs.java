package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;

/**
 * What a provider's extended CQ verbs and their neighbours offer, where providers differ: the {@code wc_flags}
 * {@code ibv_create_cq_ex} accepts, its creation flags, {@code ibv_resize_cq}, the completion clock
 * ({@code hca_core_clock}, {@code completion_timestamp_mask} of {@code ibv_query_device_ex}),
 * {@code ibv_query_rt_values_ex}, and thread and parent domains ({@code ibv_alloc_td},
 * {@code ibv_alloc_parent_domain}). A property of the device profile: its driver's traits
 * ({@link DriverVerbTraits#extendedCqs()}) with the profile's clock. Immutable and thread safe.
 *
 * <p>The drivers:
 * <ul>
 * <li>mlx5 (rdma-core providers/mlx5/verbs.c {@code create_cq}, {@code mlx5_resize_cq},
 * {@code mlx5_alloc_td}, {@code mlx5_alloc_parent_domain}; mlx5.c {@code mlx5_query_rt_values}):
 * {@code CREATE_CQ_SUPPORTED_WC_FLAGS} is the standard flags, COMPLETION_TIMESTAMP, CVLAN, FLOW_TAG, TM_INFO and
 * COMPLETION_TIMESTAMP_WALLCLOCK, any other is ENOTSUP; comp_mask beyond FLAGS and PD, and flags beyond
 * SINGLE_THREADED and IGNORE_OVERRUN, are EINVAL. TM_INFO is taken on every mlx5 device, with tag
 * matching ({@link TagMatchingCaps}) or without (the provider's list does not depend on the device). The clock is the profile's {@link DeviceProfile#completions()}: a dump's
 * {@code hca_core_clock} and {@code completion timestamp_mask} lines, else 156250 kHz and mask 0x7fffffffffffffff,
 * the values an mlx5 device prints in the {@code ibv_devinfo -v} dump of openucx/ucx issue 8139 (device_cap_flags
 * 0xed721c36, max_sge 30, max_mw 16777216: the ConnectX-5 of the vendor_part_id 4119 dump in openucx/ucx issue 9830
 * has the same flags); the other mlx5 profiles are given the same clock, as no dump of theirs in the project's
 * sources shows one.</li>
 * <li>rxe (providers/rxe/rxe.c {@code rxe_create_cq_ex}: {@code RXE_SUP_WC_EX_FLAGS} is the seven standard flags,
 * any other is EOPNOTSUPP; libibverbs cmd_cq.c {@code ibv_cmd_create_cq_ex} refuses comp_mask beyond FLAGS, a parent
 * domain included, with EOPNOTSUPP; the kernel's {@code rxe_create_cq} refuses any creation flag the command passes
 * on, IGNORE_OVERRUN, with EOPNOTSUPP). No completion clock ({@code ibv_devinfo}: "completion_timestamp_mask not
 * supported"), no {@code query_rt_values}, {@code alloc_td} or {@code alloc_parent_domain} in its ops: libibverbs
 * answers EOPNOTSUPP. {@code rxe_resize_cq} resizes.</li>
 * <li>mlx4 (providers/mlx4/verbs.c): {@code mlx4_resize_cq} resizes; {@code create_cq} answers ENOTSUP (EOPNOTSUPP)
 * for a comp_mask bit or creation flag outside its {@code CREATE_CQ_SUPPORTED_COMP_MASK} (FLAGS) and
 * {@code CREATE_CQ_SUPPORTED_FLAGS} (SINGLE_THREADED); its completion timestamps need the ConnectX-3's clock, which
 * no source of the project gives, so they are not offered (EOPNOTSUPP).</li>
 * <li>irdma ({@code irdma_uresize_cq}) resizes; its {@code create_cq_ex} passes the mask to
 * {@code ibv_cmd_create_cq_ex} and the flags to the kernel's {@code irdma_create_cq}, both EOPNOTSUPP for what they
 * do not take. hfi1's provider resizes too ({@code hfi1_resize_cq} calls {@code ibv_cmd_resize_cq}; the kernel's
 * {@code rvt_resize_cq}). Of the others, rdma-core 44's libbnxt_re, libcxgb4, libefa, liberdma, libhns, libmana,
 * libqedr and libsiw import no {@code ibv_cmd_resize_cq}: no resize. Every other driver: the standard flags only, and no resize, thread
 * or parent domain, as their providers were not looked up; a comp_mask beyond FLAGS and any creation flag are
 * EOPNOTSUPP, as libibverbs' {@code ibv_cmd_create_cq_ex} and the kernel drivers' {@code create_cq} answer a flag
 * they do not take ({@code if (attr->flags) return -EOPNOTSUPP}).</li>
 * </ul>
 *
 * @param driver                  the kernel driver.
 * @param wcFlags                 the {@code IBV_WC_EX_WITH_*} bits {@code ibv_create_cq_ex} accepts.
 * @param unsupportedWcFlagsErrno what a bit outside {@code wcFlags} gets (ENOTSUP is EOPNOTSUPP on Linux).
 * @param compMask                the {@code IBV_CQ_INIT_ATTR_MASK_*} bits accepted.
 * @param unsupportedCompMaskErrno what a bit outside {@code compMask} gets.
 * @param createFlags             the {@code IBV_CREATE_CQ_ATTR_*} flags accepted.
 * @param unsupportedFlagsErrno   what a flag outside {@code createFlags} gets.
 * @param resizeCq                {@code ibv_resize_cq} is implemented.
 * @param resizeToSameSizeAtOnce  a resize whose rounded size is the CQ's own returns 0 before any other check (mlx5
 *                                {@code mlx5_resize_cq} answers it without a command); false: the kernel's checks
 *                                come first (rxe {@code rxe_cq_chk_attr}, then a new queue of the same size).
 * @param hcaCoreClockKhz         the completion clock in kHz (0: none, no timestamps).
 * @param completionTimestampMask the bits of a completion timestamp the device keeps (0: none).
 * @param rtValues                {@code ibv_query_rt_values_ex} answers the raw clock.
 * @param domains                 {@code ibv_alloc_td} and {@code ibv_alloc_parent_domain} are implemented.
 * @param wcFlagsCheckedLast      the provider checks the comp_mask and the creation flags before the wc_flags (mlx5
 *                                {@code create_cq}); false: the wc_flags first (rxe and the rest).
 */
public record ExtendedCqs(String driver, long wcFlags, Errno unsupportedWcFlagsErrno, int compMask,
    Errno unsupportedCompMaskErrno, int createFlags, Errno unsupportedFlagsErrno, boolean resizeCq,
    boolean resizeToSameSizeAtOnce, long hcaCoreClockKhz, long completionTimestampMask, boolean rtValues, boolean domains,
    boolean wcFlagsCheckedLast)
{
    /** IBV_WC_EX_WITH_BYTE_LEN .. IBV_WC_EX_WITH_DLID_PATH_BITS: {@code IBV_WC_STANDARD_FLAGS} of verbs.h. */
    public static final long WC_STANDARD = 0x7f;
    /** {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP}. */
    public static final long WC_COMPLETION_TIMESTAMP = 1 << 7;
    /** {@code IBV_WC_EX_WITH_CVLAN}. */
    public static final long WC_CVLAN = 1 << 8;
    /** {@code IBV_WC_EX_WITH_FLOW_TAG}. */
    public static final long WC_FLOW_TAG = 1 << 9;
    /** {@code IBV_WC_EX_WITH_TM_INFO}. */
    public static final long WC_TM_INFO = 1 << 10;
    /** {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK}. */
    public static final long WC_COMPLETION_TIMESTAMP_WALLCLOCK = 1 << 11;
    /** {@code IBV_CQ_INIT_ATTR_MASK_FLAGS}. */
    public static final int MASK_FLAGS = 1;
    /** {@code IBV_CQ_INIT_ATTR_MASK_PD}: the CQ's buffers come from a parent domain. */
    public static final int MASK_PD = 2;
    /** {@code IBV_CREATE_CQ_ATTR_SINGLE_THREADED}. */
    public static final int FLAG_SINGLE_THREADED = 1;
    /** {@code IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN}. */
    public static final int FLAG_IGNORE_OVERRUN = 2;
    private static final long NS_PER_MS = 1_000_000;

    /** mlx5's extended CQ verbs, with the driver's clock (see the class comment and {@link CompletionAttributes}). */
    static final ExtendedCqs MLX5 = new ExtendedCqs("mlx5", WC_STANDARD | WC_COMPLETION_TIMESTAMP | WC_CVLAN
        | WC_FLOW_TAG | WC_TM_INFO | WC_COMPLETION_TIMESTAMP_WALLCLOCK, Errno.EOPNOTSUPP, MASK_FLAGS | MASK_PD,
        Errno.EINVAL, FLAG_SINGLE_THREADED | FLAG_IGNORE_OVERRUN, Errno.EINVAL, true, true,
        CompletionAttributes.MLX5_HCA_CORE_CLOCK_KHZ, CompletionAttributes.MLX5_TIMESTAMP_MASK, true, true, true);
    /** rxe's extended CQ verbs (see the class comment). */
    static final ExtendedCqs RXE = standard("rxe", true);

    /**
     * The extended CQ verbs of a provider that takes the standard wc_flags only, without thread or parent domains,
     * and refuses any other comp_mask bit or creation flag with EOPNOTSUPP (see the class comment).
     *
     * @param driver the driver.
     * @param resize its provider implements {@code ibv_resize_cq} (rxe, mlx4, irdma, hfi1).
     * @return its extended CQ verbs, without a clock (none of these drivers' clocks is given by a public dump).
     */
    static ExtendedCqs standard(final String driver, final boolean resize)
    {
        return new ExtendedCqs(driver, WC_STANDARD, Errno.EOPNOTSUPP, MASK_FLAGS, Errno.EOPNOTSUPP,
            FLAG_SINGLE_THREADED, Errno.EOPNOTSUPP, resize, false, 0, 0, false, false, false);
    }

    /**
     * @param profile a device profile.
     * @return what its provider's extended CQ verbs offer: its driver's ({@link DriverVerbTraits#extendedCqs()}) with
     *         the profile's clock (a dump's hca_core_clock line, else the driver's: {@link CompletionAttributes}).
     */
    public static ExtendedCqs of(final DeviceProfile profile)
    {
        final ExtendedCqs x = profile.traits().verbs().extendedCqs();
        return new ExtendedCqs(profile.driver(), x.wcFlags, x.unsupportedWcFlagsErrno, x.compMask,
            x.unsupportedCompMaskErrno, x.createFlags, x.unsupportedFlagsErrno, x.resizeCq, x.resizeToSameSizeAtOnce,
            profile.completions().hcaCoreClockKhz(), profile.completions().completionTimestampMask(), x.rtValues,
            x.domains, x.wcFlagsCheckedLast);
    }

    /**
     * The provider's checks of {@code ibv_create_cq_ex}'s attributes, in its order (mlx5 {@code create_cq}: the
     * comp_mask, the creation flags, then the wc_flags; rxe and the rest: the wc_flags first). The entry count is
     * checked by {@link SimContext#createCq}.
     *
     * @param wcFlags  {@code wc_flags}.
     * @param compMask {@code comp_mask}.
     * @param flags    {@code flags} (read only with IBV_CQ_INIT_ATTR_MASK_FLAGS).
     * @param notParentDomain IBV_CQ_INIT_ATTR_MASK_PD names a PD that is not a parent domain.
     * @throws VerbsException the provider's errno for the first attribute it refuses (see the record components);
     *                        EINVAL for a {@code parent_domain} that is none (mlx5 {@code create_cq}).
     */
    public void checkCreateCqEx(final long wcFlags, final int compMask, final int flags, final boolean notParentDomain)
    {
        final String verb = "ibv_create_cq_ex";
        final long badWc = wcFlags & ~this.wcFlags;
        if (!wcFlagsCheckedLast && badWc != 0)
        {
            throw wcRefusal(verb, badWc);
        }
        if ((compMask & ~this.compMask) != 0)
        {
            throw Errors.of(verb, unsupportedCompMaskErrno, "comp_mask=0x" + Integer.toHexString(compMask)
                + " has bits " + driver + "'s provider does not take (it takes 0x" + Integer.toHexString(this.compMask)
                + ((this.compMask & MASK_PD) == 0 ? ": no IBV_CQ_INIT_ATTR_MASK_PD, the device has no parent domains"
                : "") + "); clear them");
        }
        if ((compMask & MASK_FLAGS) != 0 && (flags & ~createFlags) != 0)
        {
            throw Errors.of(verb, unsupportedFlagsErrno, "flags=0x" + Integer.toHexString(flags) + " has creation "
                + "flags " + driver + " does not take (it takes 0x" + Integer.toHexString(createFlags) + "); clear them");
        }
        if (badWc != 0)
        {
            throw wcRefusal(verb, badWc);
        }
        if ((compMask & MASK_PD) != 0 && notParentDomain)
        {
            throw Errors.invalid(verb, "IBV_CQ_INIT_ATTR_MASK_PD names a PD that is no parent domain (mlx5 "
                + "create_cq takes a CQ's buffers from a parent domain only); pass one of ibv_alloc_parent_domain");
        }
    }

    private VerbsException wcRefusal(final String verb, final long badWc)
    {
        return Errors.of(verb, unsupportedWcFlagsErrno, "wc_flags 0x" + Long.toHexString(badWc) + " are outside what "
            + driver + "'s provider fills (0x" + Long.toHexString(wcFlags) + ")"
            + ((badWc & WC_TM_INFO) != 0 ? ": its provider reads no tag-matching fields (only mlx5's does)" : "")
            + "; ask only for fields the device reports");
    }

    /**
     * @param timeNs a time of the device's clock in ns.
     * @return that time in cycles of {@code hca_core_clock}, masked by {@code completion_timestamp_mask}: what
     *         {@code ibv_wc_read_completion_ts} and the raw clock of {@code ibv_query_rt_values_ex} give (0 without a
     *         clock).
     */
    public long cycles(final long timeNs)
    {
        final long whole = timeNs / NS_PER_MS * hcaCoreClockKhz;
        final long part = timeNs % NS_PER_MS * hcaCoreClockKhz / NS_PER_MS;
        return (whole + part) & completionTimestampMask;
    }

    /**
     * {@code ibv_query_rt_values_ex} with IBV_VALUES_MASK_RAW_CLOCK: the device's free-running clock now, read from
     * the fabric's simulated clock.
     *
     * @param context an open context.
     * @return the raw clock in cycles of {@code hca_core_clock}.
     * @throws VerbsException EOPNOTSUPP where the provider has no {@code query_rt_values} (libibverbs' answer).
     */
    public long rawClock(final SimContext context)
    {
        if (!rtValues)
        {
            throw Errors.of("ibv_query_rt_values_ex", Errno.EOPNOTSUPP, driver + "'s provider has no "
                + "query_rt_values (libibverbs answers EOPNOTSUPP); read time from the host's clock instead");
        }
        return cycles(context.device().fabric().clock().nowNs());
    }
}
