package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.ProviderRule;
import dev.rnicsim.verbs.VerbsException;
import java.util.Set;

/**
 * {@code ibv_create_qp} of a qp_type the library does not simulate. A type that is no {@code enum ibv_qp_type} value
 * at all (77, say) is refused where the real stack refuses it: libmlx5 sizes the send queue by the type before it
 * asks the kernel ({@code mlx5_calc_sq_size} → {@code sq_overhead}, whose {@code default:} answers EINVAL), so with
 * max_send_wr above 0 the answer is EINVAL on a provider that sizes its WQEs so
 * ({@link ProviderRule#QP_CAPS_FROM_MLX5_WQE_SIZES}); without a send queue, or on another provider, the kernel's
 * driver refuses it (mlx5_ib {@code check_qp_type}: EOPNOTSUPP, "Unsupported QP type"). A real type the library
 * does not simulate (RAW_PACKET, DRIVER) is EOPNOTSUPP. Stateless.
 */
final class UnknownQpType
{
    /** {@code enum ibv_qp_type}: RC 2, UC 3, UD 4, RAW_PACKET 8, XRC_SEND 9, XRC_RECV 10, DRIVER 0xff. */
    private static final Set<Integer> IBV_QP_TYPES = Set.of(2, 3, 4, 8, 9, 10, 0xff);
    private static final int EINVAL = 22;
    private static final int EOPNOTSUPP = 95;

    private UnknownQpType()
    {
    }

    /**
     * @param profile   the device's profile.
     * @param typeCode  the qp_type given.
     * @param maxSendWr its cap.max_send_wr.
     * @return the refusal to throw.
     */
    static VerbsException refusal(final DeviceProfile profile, final int typeCode, final int maxSendWr)
    {
        if (IBV_QP_TYPES.contains(typeCode))
        {
            return new VerbsException("ibv_create_qp", EOPNOTSUPP, "qp_type " + typeCode + " is not simulated "
                + "through the library (RC, UC, UD, XRC_SEND and XRC_RECV are); create one of those");
        }
        final boolean sizedByProvider = maxSendWr != 0 && profile.follows(ProviderRule.QP_CAPS_FROM_MLX5_WQE_SIZES);
        return new VerbsException("ibv_create_qp", sizedByProvider ? EINVAL : EOPNOTSUPP, "qp_type " + typeCode
            + " is no ibv_qp_type (RC 2, UC 3, UD 4, RAW_PACKET 8, XRC_SEND 9, XRC_RECV 10, DRIVER 255): "
            + (sizedByProvider ? profile.driver() + "'s provider sizes the send queue by the QP type (libmlx5 "
            + "sq_overhead) and knows no such type" : "the kernel's " + profile.driver() + " driver refuses it "
            + (profile.follows(ProviderRule.QP_CAPS_FROM_MLX5_WQE_SIZES) ? "(mlx5_ib check_qp_type: \"Unsupported "
            + "QP type\")" : "(as mlx5_ib's check_qp_type does; assumed for " + profile.driver() + ")"))
            + "; set qp_type to IBV_QPT_RC, IBV_QPT_UC, "
            + "IBV_QPT_UD or an XRC type");
    }
}
