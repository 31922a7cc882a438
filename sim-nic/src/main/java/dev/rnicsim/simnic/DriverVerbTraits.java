package dev.rnicsim.simnic;

import java.util.Objects;

/**
 * What a driver's queue verbs do where drivers differ, beyond registration ({@link DriverTraits}): the driver
 * functions a refusal of {@code ibv_create_srq}, {@code ibv_modify_srq} and {@code ibv_resize_cq} names, what its
 * extended CQ verbs offer, the QP events it raises, its hw_counters, whether it has tag-matching SRQs and what its
 * ports report. Data, so
 * that the verbs ask the profile's traits instead of testing driver names. Immutable and thread safe.
 *
 * <p>The functions, as the drivers.md table names them: the SRQ size check at creation ({@code mlx4_ib_create_srq},
 * {@code mlx5_ib_create_srq}, rxe {@code rxe_srq_chk_init}, {@code siw_create_srq}, cxgb4 {@code c4iw_create_srq},
 * {@code hns_roce_create_srq}, {@code qedr_check_srq_params}, {@code bnxt_re_create_srq}, hfi1's rdmavt
 * {@code rvt_create_srq}); of ibv_modify_srq ({@code mlx4_ib_modify_srq} and {@code mlx5_ib_modify_srq}, which answer
 * -EINVAL for IB_SRQ_MAX_WR, and rxe {@code rxe_srq_chk_attr}); of a CQ resize below the completions waiting (rxe
 * {@code rxe_cq_chk_attr}, libmlx4 {@code mlx4_resize_cq}). A driver whose function was not read names its
 * {@code create_srq} or the man page's rule.
 *
 * @param srqCreateFunction     the function that checks an SRQ's size at creation ("its create_srq" where not read).
 * @param srqZeroRefusal        who refuses an SRQ of 0 work requests or SGEs, for the message: read for rxe
 *                              ({@code rxe_srq_chk_init}) and rdmavt ({@code rvt_create_srq}), assumed for the rest.
 * @param srqModifyFunction     the function that checks ibv_modify_srq, or ibv_modify_srq(3)'s rule where not read.
 * @param srqResizeRefusalRead  the driver's refusal of IB_SRQ_MAX_WR was read in {@code srqModifyFunction} (mlx4,
 *                              mlx5), so a refusal message cites it.
 * @param cqResizeBelowQueued   who refuses a CQ resize below the completions waiting: the driver's function where
 *                              read, else ibv_resize_cq(3).
 * @param extendedCqs           what the provider's extended CQ verbs offer ({@link ExtendedCqs}, which gives each
 *                              driver's source), with the driver's completion clock: a profile's own clock
 *                              ({@link DeviceProfile#completions()}) replaces it in {@link ExtendedCqs#of}.
 * @param asyncEvents           the QP events the driver raises ({@link AsyncEventRules}).
 * @param asyncEventsOldKernel  the QP events of the driver in a kernel older than 6.2 (profiles with
 *                              {@link ProviderRule#KERNEL_WITHOUT_FLUSH_ACCESS}): rxe raised none before its two
 *                              patches; the same as {@code asyncEvents} for the others.
 * @param hwCounters            the driver's hw_counters ({@link HwCounters}).
 * @param tagMatchingSrqs       {@code ibv_create_srq_ex} creates tag-matching SRQs (mlx5 only: rxe_create_srq and the
 *                              others answer EOPNOTSUPP for a type beyond basic and XRC).
 * @param port                  what its {@code query_port} reports ({@link DriverPortTraits}).
 */
public record DriverVerbTraits(String srqCreateFunction, String srqZeroRefusal, String srqModifyFunction,
                               boolean srqResizeRefusalRead, String cqResizeBelowQueued, ExtendedCqs extendedCqs,
                               AsyncEventRules asyncEvents, AsyncEventRules asyncEventsOldKernel,
                               HwCounters hwCounters, boolean tagMatchingSrqs, DriverPortTraits port)
{
    /** What a driver whose modify_srq was not read is held to. */
    static final String MODIFY_SRQ_MAN_PAGE = "ibv_modify_srq(3)";
    /** What a driver whose CQ resize check was not read is held to. */
    static final String RESIZE_CQ_MAN_PAGE = "ibv_resize_cq(3): cqe must be at least the number of unpolled entries";

    /**
     * @throws NullPointerException for a null component.
     */
    public DriverVerbTraits
    {
        Objects.requireNonNull(srqCreateFunction, "srqCreateFunction");
        Objects.requireNonNull(srqZeroRefusal, "srqZeroRefusal");
        Objects.requireNonNull(srqModifyFunction, "srqModifyFunction");
        Objects.requireNonNull(cqResizeBelowQueued, "cqResizeBelowQueued");
        Objects.requireNonNull(extendedCqs, "extendedCqs");
        Objects.requireNonNull(asyncEvents, "asyncEvents");
        Objects.requireNonNull(asyncEventsOldKernel, "asyncEventsOldKernel");
        Objects.requireNonNull(hwCounters, "hwCounters");
        Objects.requireNonNull(port, "port");
    }

    /**
     * The traits of a driver whose queue verbs were not read, and the base of the others: its create_srq taken to
     * refuse 0 (assumed), the man pages' rules, the standard wc_flags without resize, thread or parent domains, the
     * IBA events as mlx5 raises them (assumed), no counters modelled, no tag matching.
     *
     * @param driver      the driver.
     * @param srqCreate   the function that checks an SRQ's size at creation, or null for "its create_srq".
     * @return the traits.
     */
    static DriverVerbTraits defaults(final String driver, final String srqCreate)
    {
        final String create = srqCreate == null ? "its create_srq" : srqCreate;
        return new DriverVerbTraits(create, create + " is taken to refuse 0 (assumed: not read)",
            MODIFY_SRQ_MAN_PAGE, false, RESIZE_CQ_MAN_PAGE, ExtendedCqs.standard(driver, false), AsyncEventRules.IBA,
            AsyncEventRules.IBA, HwCounters.NONE, false, DriverPortTraits.of(driver));
    }

    /**
     * The table of the drivers' queue verbs (see the class comment and {@link ExtendedCqs}, {@link AsyncEventRules},
     * {@link HwCounters} for each fact's source); a driver not in it gets {@link #defaults}.
     *
     * @param driver a driver name.
     * @return its traits.
     */
    public static DriverVerbTraits of(final String driver)
    {
        return switch (driver)
        {
            case "mlx4" -> defaults(driver, "mlx4_ib_create_srq").withSrqModify("mlx4_ib_modify_srq", true)
                .withCqResizeBelowQueued("libmlx4 mlx4_resize_cq").withExtendedCqs(ExtendedCqs.standard(driver, true));
            case "mlx5" -> new DriverVerbTraits("mlx5_ib_create_srq",
                "mlx5_ib_create_srq is taken to refuse 0 (assumed: not read)", "mlx5_ib_modify_srq", true,
                RESIZE_CQ_MAN_PAGE, ExtendedCqs.MLX5, AsyncEventRules.IBA, AsyncEventRules.IBA,
                HwCounters.MLX5, true, DriverPortTraits.of(driver));
            case "rxe" -> new DriverVerbTraits("rxe_srq_chk_init", "rxe_srq_chk_init refuses 0", "rxe_srq_chk_attr",
                false, "rxe_cq_chk_attr", ExtendedCqs.RXE, AsyncEventRules.RXE, AsyncEventRules.RXE_BEFORE_6_2,
                HwCounters.RXE, false, DriverPortTraits.of(driver));
            case "irdma" -> defaults(driver, null).withExtendedCqs(ExtendedCqs.standard(driver, true));
            case "siw" -> defaults(driver, "siw_create_srq");
            case "cxgb4" -> defaults(driver, "c4iw_create_srq");
            case "hns" -> defaults(driver, "hns_roce_create_srq");
            case "qedr" -> defaults(driver, "qedr_check_srq_params");
            case "bnxt_re" -> defaults(driver, "bnxt_re_create_srq");
            case "hfi1" -> new DriverVerbTraits("rvt_create_srq", "rdmavt's rvt_create_srq refuses 0",
                MODIFY_SRQ_MAN_PAGE, false, RESIZE_CQ_MAN_PAGE, ExtendedCqs.standard(driver, true),
                AsyncEventRules.IBA, AsyncEventRules.IBA, HwCounters.NONE, false, DriverPortTraits.of(driver));
            // efa, mana, erdma and any driver no rule knows: nothing read
            default -> defaults(driver, null);
        };
    }

    /**
     * @param function the function that checks ibv_modify_srq.
     * @param resizeRefusalRead its refusal of IB_SRQ_MAX_WR was read.
     * @return a copy with them.
     */
    DriverVerbTraits withSrqModify(final String function, final boolean resizeRefusalRead)
    {
        return new DriverVerbTraits(srqCreateFunction, srqZeroRefusal, function, resizeRefusalRead,
            cqResizeBelowQueued, extendedCqs, asyncEvents, asyncEventsOldKernel, hwCounters, tagMatchingSrqs, port);
    }

    /**
     * @param source who refuses a CQ resize below the completions waiting.
     * @return a copy with it.
     */
    DriverVerbTraits withCqResizeBelowQueued(final String source)
    {
        return new DriverVerbTraits(srqCreateFunction, srqZeroRefusal, srqModifyFunction, srqResizeRefusalRead,
            source, extendedCqs, asyncEvents, asyncEventsOldKernel, hwCounters, tagMatchingSrqs, port);
    }

    /**
     * @param cqs what the provider's extended CQ verbs offer.
     * @return a copy with it.
     */
    DriverVerbTraits withExtendedCqs(final ExtendedCqs cqs)
    {
        return new DriverVerbTraits(srqCreateFunction, srqZeroRefusal, srqModifyFunction, srqResizeRefusalRead,
            cqResizeBelowQueued, cqs, asyncEvents, asyncEventsOldKernel, hwCounters, tagMatchingSrqs, port);
    }

    /**
     * @param profile a device profile of this driver.
     * @return the QP events it raises: {@link #asyncEventsOldKernel} on a kernel older than 6.2.
     */
    AsyncEventRules asyncEventsOf(final DeviceProfile profile)
    {
        return profile.providerRules().contains(ProviderRule.KERNEL_WITHOUT_FLUSH_ACCESS) ? asyncEventsOldKernel
            : asyncEvents;
    }
}
