package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.MttAllocatorKind;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.simnic.DeviceProfile;
import java.util.List;
import java.util.Locale;

/**
 * The advice of a plan: host and module settings that make the workload fit, each also given as a
 * {@link Plan.Setting}, and what no setting can fix. The planner applies every setting and plans again
 * ({@link #apply}, {@link Planner.HostSpec#with}); every limit still broken then is said to be beyond any setting
 * ({@link #beyondSettings}). Huge-page pools are never advised larger than RAM less what the plan's other memory
 * (pinned 4 KiB and THP regions, the other pool) needs. Stateless.
 */
final class Advice
{
    /** 2 MiB hugetlb pages ({@code /proc/sys/vm/nr_hugepages}). */
    static final String NR_HUGEPAGES = "vm.nr_hugepages";
    /** 1 GiB hugetlb pages ({@code hugepagesz=1G hugepages=N} on the kernel command line). */
    static final String HUGEPAGES_1G = "hugepages1g";
    /** RLIMIT_MEMLOCK in bytes, -1 for unlimited. */
    static final String MEMLOCK = "RLIMIT_MEMLOCK";
    /** {@code vm.max_map_count}. */
    static final String MAX_MAP_COUNT = "vm.max_map_count";
    /** mlx4's {@code log_num_mtt} module parameter. */
    static final String LOG_NUM_MTT = "log_num_mtt";
    /** What a line of advice starts with when no setting fixes a limit. */
    static final String BEYOND = "no setting fixes ";
    /** Mappings a process has besides its regions: the default vm.max_map_count. */
    private static final long OTHER_MAPPINGS = 65_530;

    private Advice()
    {
    }

    /**
     * The advice for a plan.
     *
     * @param profile  the device.
     * @param host     the host.
     * @param groups   the measured groups.
     * @param workload the workload.
     * @param plan     the plan without advice.
     * @param out      the lines of advice.
     * @param settings the settings, one per line that sets something.
     */
    static void advise(final DeviceProfile profile, final Planner.HostSpec host, final List<Plan.GroupResult> groups,
        final Workload workload, final Plan plan, final Planner.Notes out, final List<Plan.Setting> settings)
    {
        final int n = host.processes();
        pools(host, groups, plan, out, settings);
        final long pinned = plan.totals().pinnedBytes() / n;
        if (!host.capIpcLock() && host.memlockBytes() >= 0 && pinned > host.memlockBytes())
        {
            final long value = Planner.align(pinned, 1L << 20);
            out.add("raise RLIMIT_MEMLOCK to at least " + Sizes.iec(value) + ": ulimit -l " + (value >> 10)
                + " (KiB), or unlimited");
            settings.add(new Plan.Setting(MEMLOCK, value));
        }
        final long mappings = plan.totals().mrs() / n * host.mappingsPerMr();
        if (mappings > host.maxMapCount())
        {
            final long value = mappings + OTHER_MAPPINGS;
            out.add(String.format(Locale.ROOT, "set vm.max_map_count=%d (%,d regions, counted %s each, and "
                + "%,d for the rest of the process)", value, plan.totals().mrs() / n, host.forkSafe()
                ? "two mappings (--fork-safe)" : "one mapping", OTHER_MAPPINGS));
            settings.add(new Plan.Setting(MAX_MAP_COUNT, value));
        }
        if (profile.mtt().allocator() == MttAllocatorKind.BUDDY)
        {
            mlx4(profile, host, plan.totals().mttEntries(), out, settings);
        }
        perGroup(profile, groups, workload, out);
    }

    /** The hugetlb pools: what the groups need, never more than RAM less the other memory. */
    private static void pools(final Planner.HostSpec host, final List<Plan.GroupResult> groups, final Plan plan,
        final Planner.Notes out, final List<Plan.Setting> settings)
    {
        final int n = host.processes();
        long pages2M = 0;
        long pages1G = 0;
        long otherRam = 0;
        for (final Plan.GroupResult g : groups)
        {
            pages2M = Math.addExact(pages2M, Math.multiplyExact(g.mrs(), Limits.hugePagesPerMr(g, "2m")));
            pages1G = Math.addExact(pages1G, Math.multiplyExact(g.mrs(), Limits.hugePagesPerMr(g, "1g")));
            otherRam = Math.addExact(otherRam, Math.multiplyExact(g.mrs(), Limits.ramPerMr(g)));
        }
        pages2M = Math.multiplyExact(pages2M, (long)n);
        pages1G = Math.multiplyExact(pages1G, (long)n);
        otherRam = Math.multiplyExact(otherRam, (long)n);
        final long room = Math.max(0, host.ramBytes() - otherRam);
        final long fit1G = Math.min(pages1G, room / (1L << 30));
        final long fit2M = Math.min(pages2M, (room - fit1G * (1L << 30)) / (2L << 20));
        final boolean ramShort = plan.limits().stream().anyMatch(l -> l.name().equals("RAM") && !l.fits());
        if (fit1G != host.hugepages1G() && (fit1G > host.hugepages1G() || ramShort))
        {
            out.add(String.format(Locale.ROOT, "set %,d 1 GiB huge pages (hugepagesz=1G hugepages=%d on the kernel "
                + "command line) for the 1 GiB hugetlb groups%s", fit1G, fit1G, fit1G < pages1G ? String.format(
                Locale.ROOT, ": as many as fit in the %s of RAM; they need %,d, so %,d %s not fit (below)",
                Sizes.iec(host.ramBytes()), pages1G, pages1G - fit1G, pages1G - fit1G == 1 ? "does" : "do") : ""));
            settings.add(new Plan.Setting(HUGEPAGES_1G, fit1G));
        }
        if (fit2M != host.hugepages2M() && (fit2M > host.hugepages2M() || ramShort))
        {
            out.add(String.format(Locale.ROOT, "set vm.nr_hugepages=%d (%s of 2 MiB pages for the 2 MiB hugetlb "
                + "groups)%s", fit2M, Sizes.iec(fit2M * (2L << 20)), fit2M < pages2M ? String.format(Locale.ROOT,
                ": as many as fit in the %s of RAM; they need %,d, so %,d %s not fit (below)",
                Sizes.iec(host.ramBytes()), pages2M, pages2M - fit2M, pages2M - fit2M == 1 ? "does" : "do") : ""));
            settings.add(new Plan.Setting(NR_HUGEPAGES, fit2M));
        }
        if (fit2M < pages2M || fit1G < pages1G)
        {
            out.add(String.format(Locale.ROOT, "%sthe rest of the hugetlb pools: the hugetlb groups need %s, the "
                + "other groups pin %s, together more than the %s of RAM, which holds %s and not the other %s; add "
                + "RAM or shrink the groups", BEYOND, Sizes.iec(pages2M * (2L << 20) + pages1G * (1L << 30)),
                Sizes.iec(otherRam), Sizes.iec(host.ramBytes()), pagesText(fit1G, fit2M),
                pagesText(pages1G - fit1G, pages2M - fit2M)));
        }
    }

    /** @return e.g. {@code 2 pages of 1 GiB}, {@code 1 page of 1 GiB and 3 pages of 2 MiB}, {@code no huge page}. */
    private static String pagesText(final long pages1G, final long pages2M)
    {
        final String g = pages1G == 0 ? "" : String.format(Locale.ROOT, "%,d page%s of 1 GiB", pages1G,
            pages1G == 1 ? "" : "s");
        final String m = pages2M == 0 ? "" : String.format(Locale.ROOT, "%,d page%s of 2 MiB", pages2M,
            pages2M == 1 ? "" : "s");
        return g.isEmpty() && m.isEmpty() ? "no huge page" : g.isEmpty() ? m : m.isEmpty() ? g : g + " and " + m;
    }

    /** mlx4: log_num_mtt by the Open MPI rule, and its warning when the MTT covers less than 2 x RAM. */
    private static void mlx4(final DeviceProfile profile, final Planner.HostSpec host, final long mtt,
        final Planner.Notes out, final List<Plan.Setting> settings)
    {
        final int perSeg = profile.mtt().logMttsPerSeg();
        final int most = Math.min(MttConfig.MAX_LOG_BUDDY_SEGMENTS, MttConfig.MAX_LOG_ENTRIES - perSeg);
        int log = 1;
        final long wanted = Math.max(mtt, 2 * host.ramBytes() / 4096);
        while ((1L << (log + perSeg)) < wanted && log < most)
        {
            log++;
        }
        out.add("mlx4: log_num_mtt=" + log + " with log_mtts_per_seg=" + perSeg + " covers the workload and"
            + " 2 x RAM at 4 KiB pages (the Open MPI rule)" + ((1L << (log + perSeg)) < wanted ? " as far as it can: "
            + "log_num_mtt is at its most for this log_mtts_per_seg" : ""));
        settings.add(new Plan.Setting(LOG_NUM_MTT, log));
        final long registrable = profile.mtt().entries() * 4096;
        if (registrable < 2 * host.ramBytes())
        {
            out.add(String.format(Locale.ROOT, "WARNING: %s can register %s at 4 KiB pages, less than %s 2 x RAM "
                + "(Open MPI warns the same)", profile.name(), Sizes.iec(registrable),
                registrable < host.ramBytes() ? "RAM and" : ""));
        }
    }

    /** Per group: the cost of registering per request, the MTT entries huge pages would save. */
    private static void perGroup(final DeviceProfile profile, final List<Plan.GroupResult> groups,
        final Workload workload, final Planner.Notes out)
    {
        // MR pages of 2 MiB or more need the device to support them and an iova that does not forbid them.
        final boolean hugeMrPages = (profile.attributes().pageSizeCap() & -(2L << 20)) != 0;
        for (int i = 0; i < groups.size(); i++)
        {
            final Plan.GroupResult g = groups.get(i);
            final long iovaAlign = workload.groups().get(i).iovaAlignBytes();
            if (g.lifetime() == Workload.Lifetime.PER_REQUEST && g.sampled() > 0)
            {
                final long perRequest = g.regNsPerMr() + g.deregNsPerMr();
                out.add(String.format(Locale.ROOT, "group %s registers per request: %s per request (reg %s + dereg "
                    + "%s)%s; a pool of %,d regions registered at start-up would take it off the request path",
                    g.name(), Sizes.duration(perRequest), Sizes.duration(g.regNsPerMr()),
                    Sizes.duration(g.deregNsPerMr()), g.requestsPerSecond() == 0 ? "" : String.format(Locale.ROOT,
                    ", at %,d requests/s %.1f %% of one core", g.requestsPerSecond(),
                    perRequest * (double)g.requestsPerSecond() / 1e7), g.mrs()));
            }
            if ((g.backing().equals("4k") || g.backing().equals("thp")) && g.pinsHostMemory() && hugeMrPages
                && g.sizeBytes() >= 2L << 20 && (iovaAlign == 0 || iovaAlign >= 2L << 20))
            {
                final long huge = Planner.ceilDiv(g.sizeBytes(), 2L << 20);
                if (g.mttEntriesPerMr() > huge)
                {
                    out.add(String.format(Locale.ROOT, "group %s on 2 MiB huge pages: %,d MTT entries per MR instead"
                        + " of %,d (%,d times fewer)", g.name(), huge, g.mttEntriesPerMr(), g.mttEntriesPerMr() / huge));
                }
            }
        }
    }

    /**
     * @param profile  the device.
     * @param settings advised settings.
     * @return the device with the module parameters among them applied.
     */
    static DeviceProfile apply(final DeviceProfile profile, final List<Plan.Setting> settings)
    {
        DeviceProfile p = profile;
        for (final Plan.Setting s : settings)
        {
            if (s.name().equals(LOG_NUM_MTT) && p.mtt().allocator() == MttAllocatorKind.BUDDY)
            {
                p = p.withMtt(MttConfig.buddy((int)s.value(), p.mtt().logMttsPerSeg()));
            }
        }
        return p;
    }

    /**
     * Says what the plan with every setting applied still breaks: no setting fixes it.
     *
     * @param profile the device.
     * @param host    the host as given.
     * @param again   the plan with every setting applied.
     * @param out     the lines of advice.
     */
    static void beyondSettings(final DeviceProfile profile, final Planner.HostSpec host, final Plan again,
        final Planner.Notes out)
    {
        if (again.breach() != null && again.breach().limit().equals(FirstLimit.REFUSED))
        {
            final boolean odp = profile.attributes().odpCaps().supported();
            for (final Plan.GroupResult g : again.groups())
            {
                if (g.refusal() == null)
                {
                    continue;
                }
                final boolean odpKind = g.kind().startsWith("odp");
                out.add(BEYOND + "the refusal of group '" + g.name() + "' (" + (odpKind ? profile.name()
                    + " general_odp_caps 0x" + Integer.toHexString(profile.attributes().odpCaps().generalCaps())
                    : profile.name() + ": " + g.refusal()) + "): " + switch (g.kind())
                    {
                        case "odp" -> "use a device with ODP (general_odp_caps ODP_SUPPORT), or register the group "
                            + "pinned (drop odp from its access)";
                        case "odp-implicit" -> odp ? "use a device with implicit ODP (general_odp_caps "
                            + "ODP_SUPPORT_IMPLICIT), or register explicit ODP MRs" : "use a device with ODP "
                            + "(general_odp_caps ODP_SUPPORT and ODP_SUPPORT_IMPLICIT), or register the group pinned";
                        case "dmabuf" -> "use a device whose driver registers dma-bufs (mlx5), or gpu: peer-memory";
                        default -> "use a device that has the capability, or change the group's access or backing";
                    });
            }
            return;
        }
        boolean said = out.lines.stream().anyMatch(l -> l.startsWith(BEYOND));
        for (final Plan.Limit l : again.limits())
        {
            if (l.fits() || l.name().startsWith("hugetlb") && said)
            {
                continue;
            }
            out.add(String.format(Locale.ROOT, "%s%s: %s required, %s available: %s", BEYOND, l.name(),
                Sizes.of(l.required(), l.unit()), Sizes.of(l.available(), l.unit()), remedy(profile, l.name())));
            said = true;
        }
        if (!said && again.breach() != null)
        {
            out.add(BEYOND + again.breach().message());
        }
    }

    private static String remedy(final DeviceProfile profile, final String limit)
    {
        return switch (limit)
        {
            case "max_mr" -> "a device with a larger max_mr, fewer and larger regions, or fewer processes";
            case "MTT entries" -> profile.mtt().allocator() == MttAllocatorKind.BUDDY
                ? "log_num_mtt is at its most; raise log_mtts_per_seg, use huge pages, or register fewer bytes"
                : "the device's MTT is fixed; use huge pages (fewer entries per MR) or register fewer bytes";
            case "max_mr_size" -> "split the regions into MRs of at most max_mr_size each";
            case "RAM" -> "add RAM, shrink the groups, or register them with ODP (which pins nothing)";
            case "GPU BAR1" -> "a GPU with a larger BAR1 (resizable BAR), or fewer GPU bytes registered at once";
            case "GPU memory" -> "a GPU with more memory, or fewer GPU bytes";
            default -> "shrink the workload";
        };
    }
}
