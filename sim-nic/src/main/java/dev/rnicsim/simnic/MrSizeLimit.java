package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;

/**
 * How a driver bounds the size of one MR by {@code max_mr_size}. The uverbs core compares the length with nothing
 * ({@code ib_uverbs_reg_mr}); the drivers that check do it themselves, with their own errno:
 * <ul>
 * <li>irdma {@code irdma_reg_user_mr}: a length above {@code max_mr_size} is EINVAL, before anything is pinned (the
 * default here, also for drivers whose {@code max_mr_size} is {@code ~0}, where it never applies: mlx4, mlx5,
 * rxe, siw);</li>
 * <li>bnxt_re {@code bnxt_re_reg_user_mr}: above {@code BNXT_RE_MAX_MR_SIZE} is ENOMEM
 * ({@link ProviderRule#MR_SIZE_ABOVE_MAX_ENOMEM});</li>
 * <li>efa: no length check at all; {@code max_mr_size} is {@code max_mr_pages * PAGE_SIZE}, and the device counts
 * the MR's pages at the page size the driver chose, refusing more than {@code max_mr_pages} with ENOMEM
 * ({@link ProviderRule#MR_SIZE_IN_DEVICE_PAGES}, checked as the translation's entries in {@link UmemRegistration}).
 * </li>
 * </ul>
 */
final class MrSizeLimit
{
    private MrSizeLimit()
    {
    }

    /**
     * Refuses a length above the profile's {@code max_mr_size} as its driver does.
     *
     * @param profile     the device's profile.
     * @param lengthBytes the MR's length.
     * @param verb        the verb, for the message.
     */
    static void check(final DeviceProfile profile, final long lengthBytes, final String verb)
    {
        final long maxBytes = profile.attributes().maxMrSizeBytes();
        if (Long.compareUnsigned(lengthBytes, maxBytes) <= 0 || profile.follows(ProviderRule.MR_SIZE_IN_DEVICE_PAGES))
        {
            return;
        }
        final boolean enomem = profile.follows(ProviderRule.MR_SIZE_ABOVE_MAX_ENOMEM);
        throw Errors.of(verb, enomem ? Errno.ENOMEM : Errno.EINVAL, "length=" + Long.toUnsignedString(lengthBytes)
            + " > max_mr_size=" + Long.toUnsignedString(maxBytes) + " of " + profile.driver() + " ("
            + (enomem ? "bnxt_re_reg_user_mr: \"MR Size > Max supported\"" : "the driver compares the length with "
            + "max_mr_size before pinning: irdma_reg_user_mr") + "); register a smaller range or split it into "
            + "several MRs");
    }

    /**
     * @param profile the device's profile.
     * @return what an overflow of the translation's entries means on a device that bounds MRs in its own pages (a
     *         clause for the message), or the empty string.
     */
    static String devicePagesNote(final DeviceProfile profile)
    {
        if (!profile.follows(ProviderRule.MR_SIZE_IN_DEVICE_PAGES))
        {
            return "";
        }
        return ": the device's max_mr_pages, which " + profile.driver() + "_query_device reports as max_mr_size = "
            + "max_mr_pages x 4 KiB = " + Long.toUnsignedString(profile.attributes().maxMrSizeBytes()) + " bytes; the "
            + "device refuses more pages in its REG_MR admin command with a resource-allocation failure "
            + "(efa_com_comp_status_to_errno: ENOMEM), counted in pages of the MR's page size";
    }
}
