package dev.rnicsim.simnic;

/**
 * A device's hardware tag matching, as {@code ibv_query_device_ex} reports it in {@code struct ibv_tm_caps}. The
 * kernel fills it from the device's capabilities ({@code mlx5_ib_query_device}, drivers/infiniband/hw/mlx5/main.c):
 * with the {@code tag_matching} capability, max_num_tags is {@code 2^log_tag_matching_list_sz - 1}, max_ops is
 * {@code 2^log_max_qp_sz} (the device's max_qp_wr) and max_sge {@code MLX5_TM_MAX_SGE} (1); with
 * {@code rndv_offload_rc} as well, flags is {@code IB_TM_CAP_RNDV_RC} (IBV_TM_CAP_RC) and max_rndv_hdr_size
 * {@code MLX5_TM_MAX_RNDV_MSG_SIZE} (64). Every other driver reports all 0. A profile has it by
 * {@link ProviderRule#TAG_MATCHING} (ConnectX-5 and later).
 *
 * <p>{@code log_tag_matching_list_sz} is not in any {@code ibv_devinfo} dump (the tool prints no tm_caps), and no
 * public capability dump of a ConnectX-5 was found: the model assumes 7 (127 tags); the rules do not depend on the
 * figure. Immutable.
 *
 * @param maxRndvHdrSizeBytes  the largest rendezvous request (TMH, RVH and user header) a tagged SEND may carry.
 * @param maxNumTags           the most tagged buffers one TM SRQ's list may hold.
 * @param flags                {@code IBV_TM_CAP_RC} when tag matching works on RC QPs.
 * @param maxOps               the most list operations outstanding on one TM SRQ.
 * @param maxSge               the most SGEs of a tagged buffer.
 * @param logTagMatchingListSz the device's {@code log_tag_matching_list_sz} (0 without tag matching).
 */
public record TagMatchingCaps(int maxRndvHdrSizeBytes, int maxNumTags, int flags, int maxOps, int maxSge,
    int logTagMatchingListSz)
{
    /** {@code IBV_TM_CAP_RC} of {@code enum ibv_tm_cap_flags}. */
    public static final int CAP_RC = 1;
    /** {@code MLX5_TM_MAX_RNDV_MSG_SIZE}. */
    static final int MLX5_MAX_RNDV_MSG_BYTES = 64;
    /** {@code MLX5_TM_MAX_SGE}. */
    static final int MLX5_MAX_SGE = 1;
    /** The assumed {@code log_tag_matching_list_sz} (see the class comment). */
    static final int ASSUMED_LOG_LIST_SIZE = 7;

    /** A device without tag matching. */
    public static final TagMatchingCaps NONE = new TagMatchingCaps(0, 0, 0, 0, 0, 0);

    /**
     * @param profile a device profile.
     * @return the tm_caps its device reports.
     */
    public static TagMatchingCaps of(final DeviceProfile profile)
    {
        if (!profile.follows(ProviderRule.TAG_MATCHING))
        {
            return NONE;
        }
        return new TagMatchingCaps(MLX5_MAX_RNDV_MSG_BYTES, (1 << ASSUMED_LOG_LIST_SIZE) - 1, CAP_RC,
            profile.attributes().maxQpWr(), MLX5_MAX_SGE, ASSUMED_LOG_LIST_SIZE);
    }

    /**
     * @return true when the device matches tags at all.
     */
    public boolean supported()
    {
        return maxNumTags > 0;
    }
}
