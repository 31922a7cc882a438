package dev.rnicsim.pagetable;

/**
 * The boot-time settings of a simulated host. Build one with {@link #builder()}; {@link Builder#build()} checks
 * every value once, with a message naming the value and its limit.
 *
 * <p>Immutable and thread safe.
 *
 * @param physicalMemoryBytes physical memory in bytes, a multiple of 4 KiB, 64 MiB to 4 TiB.
 * @param movableZoneBytes    bytes at the top of physical memory that form ZONE_MOVABLE (the {@code movablecore=}
 *                            boot option), a multiple of 4 KiB; 0 for none.
 * @param hugepages2M         2 MiB pages reserved at boot for hugetlbfs ({@code vm.nr_hugepages}).
 * @param hugepages1G         1 GiB pages reserved at boot ({@code hugepagesz=1G hugepages=N}).
 * @param swapBytes           swap space in bytes, a multiple of 4 KiB; 0 means anonymous pages cannot be reclaimed.
 * @param thpMode             transparent huge page mode.
 * @param maxMapCount         {@code vm.max_map_count}: the most VMAs one process may have.
 * @param forkBehaviour       how fork treats pinned anonymous pages.
 * @param mmapMinAddrBytes    {@code vm.mmap_min_addr}: the lowest address a fixed mapping may use.
 * @param aged                the free lists of a host that has run for a while: 4 KiB pages come back in no
 *                            particular physical order (as page-cache churn leaves the order-0 free lists), so
 *                            neighbouring virtual pages land on scattered frames. False: a freshly booted host,
 *                            which hands out frames lowest address first.
 * @param basePage            the kernel's {@code PAGE_SIZE}; it decides the THP size and which hugetlb sizes exist
 *                            ({@link BasePage#hugetlbSizes()}).
 * @param hugetlbPools        pages reserved at boot for the hugetlb sizes other than 2 MiB and 1 GiB (arm64's 64 KiB,
 *                            32 MiB, 512 MiB and 16 GiB: {@code hugepagesz=SIZE hugepages=N}), by size; sizes absent
 *                            have no pool.
 * @param overcommitMemory    {@code vm.overcommit_memory}: 0 (OVERCOMMIT_GUESS, the default: a private writable
 *                            mapping larger than RAM + swap is ENOMEM, {@link Overcommit}) or 1 (OVERCOMMIT_ALWAYS:
 *                            every mapping is granted and running out shows at fault time). 2 (OVERCOMMIT_NEVER,
 *                            the commit limit) is not modelled.
 */
public record HostConfig(
    long physicalMemoryBytes,
    long movableZoneBytes,
    long hugepages2M,
    long hugepages1G,
    long swapBytes,
    ThpMode thpMode,
    int maxMapCount,
    ForkBehaviour forkBehaviour,
    long mmapMinAddrBytes,
    boolean aged,
    BasePage basePage,
    java.util.Map<PageSize, Long> hugetlbPools,
    int overcommitMemory)
{
    /** Default physical memory: 16 GiB. */
    public static final long DEFAULT_PHYSICAL_MEMORY_BYTES = 16L << 30;
    /** Smallest host: 64 MiB. */
    public static final long MIN_PHYSICAL_MEMORY_BYTES = 64L << 20;
    /** Largest host: 4 TiB (1 TiB and more is modelled without per-page objects). */
    public static final long MAX_PHYSICAL_MEMORY_BYTES = 4L << 40;
    /** Default {@code vm.max_map_count}: 65530 (include/linux/mm.h {@code DEFAULT_MAX_MAP_COUNT}). */
    public static final int DEFAULT_MAX_MAP_COUNT = 65530;
    /** Default {@code vm.mmap_min_addr}: 65536, as on x86-64 distributions. */
    public static final long DEFAULT_MMAP_MIN_ADDR_BYTES = 65536;

    /**
     * Checks the settings; see {@link Builder#build()}.
     */
    public HostConfig
    {
        check(physicalMemoryBytes >= MIN_PHYSICAL_MEMORY_BYTES && physicalMemoryBytes <= MAX_PHYSICAL_MEMORY_BYTES,
            "physicalMemoryBytes=" + physicalMemoryBytes + " is outside [" + MIN_PHYSICAL_MEMORY_BYTES + ", "
                + MAX_PHYSICAL_MEMORY_BYTES + "]");
        check(physicalMemoryBytes % PhysicalMemory.FRAME_BYTES == 0,
            "physicalMemoryBytes=" + physicalMemoryBytes + " is not a multiple of 4096");
        check(movableZoneBytes >= 0 && movableZoneBytes % PhysicalMemory.FRAME_BYTES == 0,
            "movableZoneBytes=" + movableZoneBytes + " is negative or not a multiple of 4096");
        check(movableZoneBytes < physicalMemoryBytes,
            "movableZoneBytes=" + movableZoneBytes + " leaves no ZONE_NORMAL in physicalMemoryBytes="
                + physicalMemoryBytes);
        check(basePage != null, "basePage must be given");
        hugetlbPools = hugetlbPools == null ? java.util.Map.of() : java.util.Map.copyOf(hugetlbPools);
        final long normalBytes = physicalMemoryBytes - movableZoneBytes;
        final java.util.Map<PageSize, Long> all = new java.util.EnumMap<>(PageSize.class);
        all.putAll(hugetlbPools);
        check(!all.containsKey(PageSize.SIZE_2M) && !all.containsKey(PageSize.SIZE_1G),
            "hugetlbPools takes the sizes other than 2 MiB and 1 GiB; give those as hugepages2M and hugepages1G");
        all.put(PageSize.SIZE_2M, hugepages2M);
        all.put(PageSize.SIZE_1G, hugepages1G);
        long poolBytes = 0;
        for (final java.util.Map.Entry<PageSize, Long> e : all.entrySet())
        {
            final PageSize size = e.getKey();
            final long pages = e.getValue();
            check(pages >= 0, poolName(size) + "=" + pages + " must not be negative");
            check(pages == 0 || basePage.hugetlbSizes().contains(size), "a host of " + basePage.kb()
                + " KiB pages has no hugetlb pages of " + size.word() + ": its sizes are " + words(basePage)
                + " (arch/arm64/mm/hugetlbpage.c hugetlbpage_init; x86-64 has 2m and 1g)");
            check(pages <= normalBytes / size.bytes(), poolName(size) + "=" + pages
                + " exceed ZONE_NORMAL=" + normalBytes + " bytes");
            poolBytes += pages * size.bytes();
        }
        check(poolBytes <= normalBytes,
            "hugetlb pools of " + poolBytes + " bytes (" + all + ") exceed ZONE_NORMAL=" + normalBytes + " bytes");
        check(swapBytes >= 0 && swapBytes % PhysicalMemory.FRAME_BYTES == 0 && swapBytes <= (1L << 43),
            "swapBytes=" + swapBytes + " is negative, not a multiple of 4096, or above 8 TiB");
        check(thpMode != null, "thpMode must be given");
        check(physicalMemoryBytes % basePage.bytes() == 0, "physicalMemoryBytes=" + physicalMemoryBytes
            + " is not a multiple of the " + basePage.kb() + " KiB base page");
        check(forkBehaviour != null, "forkBehaviour must be given");
        check(maxMapCount >= 0, "maxMapCount=" + maxMapCount + " must be 0 or more (vm.max_map_count's minimum, "
            + "SYSCTL_ZERO)");
        check(mmapMinAddrBytes >= 0 && mmapMinAddrBytes % PhysicalMemory.FRAME_BYTES == 0
                && mmapMinAddrBytes < UserProcess.TASK_SIZE,
            "mmapMinAddrBytes=" + mmapMinAddrBytes + " is negative, unaligned or above TASK_SIZE");
        check(overcommitMemory == 0 || overcommitMemory == 1, "vm.overcommit_memory=" + overcommitMemory
            + " is not modelled: give 0 (heuristic, the default) or 1 (always; 2, the commit limit of "
            + "OVERCOMMIT_NEVER, is not modelled)");
    }

    private static String poolName(final PageSize size)
    {
        return size == PageSize.SIZE_2M ? "hugepages2M" : size == PageSize.SIZE_1G ? "hugepages1G"
            : "hugepages(" + size.word() + ")";
    }

    private static String words(final BasePage page)
    {
        final StringBuilder out = new StringBuilder();
        for (final PageSize size : page.hugetlbSizes())
        {
            out.append(out.isEmpty() ? "" : ", ").append(size.word());
        }
        return out.toString();
    }

    /**
     * @param size a page size.
     * @return the hugetlb pages of that size reserved at boot (0 when none).
     */
    public long hugepages(final PageSize size)
    {
        if (size == PageSize.SIZE_2M)
        {
            return hugepages2M;
        }
        if (size == PageSize.SIZE_1G)
        {
            return hugepages1G;
        }
        return hugetlbPools.getOrDefault(size, 0L);
    }

    private static void check(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new KernelException(Errno.EINVAL, message);
        }
    }

    /**
     * @return a builder holding the defaults: 16 GiB, no ZONE_MOVABLE, no hugetlb pools, no swap, THP madvise,
     * {@code vm.max_map_count} 65530, modern fork, {@code mmap_min_addr} 65536.
     */
    public static Builder builder()
    {
        return new Builder();
    }

    /**
     * @return a builder that starts from this configuration.
     */
    public Builder toBuilder()
    {
        return new Builder()
            .physicalMemoryBytes(physicalMemoryBytes)
            .movableZoneBytes(movableZoneBytes)
            .hugepages2M(hugepages2M)
            .hugepages1G(hugepages1G)
            .swapBytes(swapBytes)
            .thpMode(thpMode)
            .maxMapCount(maxMapCount)
            .forkBehaviour(forkBehaviour)
            .mmapMinAddrBytes(mmapMinAddrBytes)
            .aged(aged)
            .basePage(basePage)
            .hugetlbPools(hugetlbPools)
            .overcommitMemory(overcommitMemory);
    }

    /**
     * Collects host settings; {@link #build()} validates them. Not thread safe.
     */
    public static final class Builder
    {
        private long physicalMemoryBytes = DEFAULT_PHYSICAL_MEMORY_BYTES;
        private long movableZoneBytes;
        private long hugepages2M;
        private long hugepages1G;
        private long swapBytes;
        private ThpMode thpMode = ThpMode.MADVISE;
        private int maxMapCount = DEFAULT_MAX_MAP_COUNT;
        private ForkBehaviour forkBehaviour = ForkBehaviour.MODERN;
        private boolean aged;
        private long mmapMinAddrBytes = DEFAULT_MMAP_MIN_ADDR_BYTES;
        private BasePage basePage = BasePage.SIZE_4K;
        private final java.util.Map<PageSize, Long> hugetlbPools = new java.util.EnumMap<>(PageSize.class);
        private int overcommitMemory;

        private Builder()
        {
        }

        /**
         * @param bytes physical memory in bytes.
         * @return this builder.
         */
        public Builder physicalMemoryBytes(final long bytes)
        {
            this.physicalMemoryBytes = bytes;
            return this;
        }

        /**
         * @param bytes size of ZONE_MOVABLE at the top of memory, in bytes.
         * @return this builder.
         */
        public Builder movableZoneBytes(final long bytes)
        {
            this.movableZoneBytes = bytes;
            return this;
        }

        /**
         * @param pages number of 2 MiB hugetlb pages reserved at boot.
         * @return this builder.
         */
        public Builder hugepages2M(final long pages)
        {
            this.hugepages2M = pages;
            return this;
        }

        /**
         * @param pages number of 1 GiB hugetlb pages reserved at boot.
         * @return this builder.
         */
        public Builder hugepages1G(final long pages)
        {
            this.hugepages1G = pages;
            return this;
        }

        /**
         * @param bytes swap space in bytes.
         * @return this builder.
         */
        public Builder swapBytes(final long bytes)
        {
            this.swapBytes = bytes;
            return this;
        }

        /**
         * @param mode transparent huge page mode.
         * @return this builder.
         */
        public Builder thpMode(final ThpMode mode)
        {
            this.thpMode = mode;
            return this;
        }

        /**
         * @param count {@code vm.max_map_count}.
         * @return this builder.
         */
        public Builder maxMapCount(final int count)
        {
            this.maxMapCount = count;
            return this;
        }

        /**
         * @param behaviour fork behaviour of the host kernel.
         * @return this builder.
         */
        public Builder forkBehaviour(final ForkBehaviour behaviour)
        {
            this.forkBehaviour = behaviour;
            return this;
        }

        /**
         * @param value true for the free lists of a host that has run for a while (scattered 4 KiB frames).
         * @return this builder.
         */
        public Builder aged(final boolean value)
        {
            this.aged = value;
            return this;
        }

        /**
         * @param bytes {@code vm.mmap_min_addr}.
         * @return this builder.
         */
        public Builder mmapMinAddrBytes(final long bytes)
        {
            this.mmapMinAddrBytes = bytes;
            return this;
        }

        /**
         * @param page the kernel's {@code PAGE_SIZE}.
         * @return this builder.
         */
        public Builder basePage(final BasePage page)
        {
            this.basePage = page;
            return this;
        }

        /**
         * @param size  a hugetlb page size; 2 MiB and 1 GiB go to {@link #hugepages2M} and {@link #hugepages1G}.
         * @param pages pages of that size reserved at boot.
         * @return this builder.
         */
        public Builder hugepages(final PageSize size, final long pages)
        {
            if (size == PageSize.SIZE_2M)
            {
                return hugepages2M(pages);
            }
            if (size == PageSize.SIZE_1G)
            {
                return hugepages1G(pages);
            }
            hugetlbPools.put(size, pages);
            return this;
        }

        /**
         * @param mode {@code vm.overcommit_memory}: 0 (heuristic) or 1 (always).
         * @return this builder.
         */
        public Builder overcommitMemory(final int mode)
        {
            this.overcommitMemory = mode;
            return this;
        }

        private Builder hugetlbPools(final java.util.Map<PageSize, Long> pools)
        {
            hugetlbPools.clear();
            hugetlbPools.putAll(pools);
            return this;
        }

        /**
         * @return the validated configuration.
         * @throws KernelException EINVAL naming the first value out of its range.
         */
        public HostConfig build()
        {
            return new HostConfig(physicalMemoryBytes, movableZoneBytes, hugepages2M, hugepages1G, swapBytes,
                thpMode, maxMapCount, forkBehaviour, mmapMinAddrBytes, aged, basePage, hugetlbPools, overcommitMemory);
        }
    }
}
