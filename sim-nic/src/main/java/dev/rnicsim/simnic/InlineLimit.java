package dev.rnicsim.simnic;

import java.util.Objects;

/**
 * The most inline data ({@code ibv_qp_init_attr.cap.max_inline_data}) a driver's {@code create_qp} takes, and the
 * check that refuses more, for the message: a property of the device profile ({@link DriverTraits#inlineLimit()}),
 * read by {@link InlineDataLimits}.
 *
 * <p>Immutable and thread safe.
 *
 * @param maxBytes  the most inline bytes a QP may ask for.
 * @param checkedBy the driver's function and constant (or device attribute) that bound it, e.g.
 *                  {@code rxe_qp_chk_cap: RXE_MAX_INLINE_DATA}.
 */
public record InlineLimit(int maxBytes, String checkedBy)
{
    /** The bound of the drivers whose own figure is not modelled: mlx4's {@code create_qp_ex} bound (1024), which
     * mlx5's send WQE size comes close to; assumed for the rest. */
    public static final InlineLimit ASSUMED = new InlineLimit(1024, "the provider's send WQE size");

    /**
     * @throws NullPointerException     when checkedBy is null.
     * @throws IllegalArgumentException when maxBytes is negative.
     */
    public InlineLimit
    {
        Objects.requireNonNull(checkedBy, "checkedBy");
        if (maxBytes < 0)
        {
            throw new IllegalArgumentException("maxBytes=" + maxBytes + " must not be negative");
        }
    }
}
