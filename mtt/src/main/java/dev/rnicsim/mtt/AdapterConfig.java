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
 * @param noPageSizeErrno     what a registration gets when no page size of {@code pageSizeCap} fits it (the
 *                            driver's answer to {@code ib_umem_find_best_pgsz} returning 0): EINVAL on mlx5
 *                            ({@code mlx5_umem_find_best_pgsz} callers), EOPNOTSUPP on irdma
 *                            ({@code irdma_alloc_iwmr}).
 */
public record AdapterConfig(MttConfig mtt, MptConfig mpt, long pageSizeCap, int cacheEntries, int cacheWays,
                            Errno noPageSizeErrno)
{
    /**
     * A configuration whose driver answers EINVAL when no page size fits.
     *
     * @param mtt          MTT size and allocator.
     * @param mpt          MPT size and key policy.
     * @param pageSizeCap  bitmap of supported MR page sizes.
     * @param cacheEntries translation-cache lines.
     * @param cacheWays    translation-cache associativity.
     */
    public AdapterConfig(final MttConfig mtt, final MptConfig mpt, final long pageSizeCap, final int cacheEntries,
        final int cacheWays)
    {
        this(mtt, mpt, pageSizeCap, cacheEntries, cacheWays, Errno.EINVAL);
    }

    /**
     * @throws TableException EINVAL when the MTT or MPT configuration is missing or {@code page_size_cap} is 0.
     */
    public AdapterConfig
    {
        if (mtt == null || mpt == null || noPageSizeErrno == null)
        {
            throw new TableException(Errno.EINVAL, "MTT and MPT configurations and the no-page-size errno must be "
                + "given");
        }
        if (pageSizeCap == 0)
        {
            throw new TableException(Errno.EINVAL, "page_size_cap=0 allows no page size"
                + "; give a page_size_cap with at least one page size bit");
        }
    }
}
