package dev.rnicsim.mtt;

/**
 * The table-related properties of a device profile.
 *
 * <p>Immutable and thread safe.
 *
 * @param mtt                 MTT size and allocator.
 * @param mpt                 MPT size and key policy.
 * @param pageSizeCap         bitmap of supported MR page sizes ({@code page_size_cap}: bit n set = 2^n bytes).
 * @param cacheEntries        translation-cache lines (MPT and MTT entries together); 0 for none.
 * @param cacheWays           translation-cache associativity.
 */
public record AdapterConfig(MttConfig mtt, MptConfig mpt, long pageSizeCap, int cacheEntries, int cacheWays)
{
    /**
     * @throws TableException EINVAL when the MTT or MPT configuration is missing or {@code page_size_cap} is 0.
     */
    public AdapterConfig
    {
        if (mtt == null || mpt == null)
        {
            throw new TableException(Errno.EINVAL, "MTT and MPT configurations must be given");
        }
        if (pageSizeCap == 0)
        {
            throw new TableException(Errno.EINVAL, "page_size_cap=0 allows no page size"
                + "; give a page_size_cap with at least one page size bit");
        }
    }
}
