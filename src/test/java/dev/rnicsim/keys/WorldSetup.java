package dev.rnicsim.keys;

import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a fresh {@link KeyWorld} is made of besides its objects: the configurations of hosts alpha and beta, device b's
 * profile and the script's header for a chain's parameters and key policy, each made once and shared by every world
 * that asks (all immutable; thousands of worlds are made in a soak).
 */
final class WorldSetup
{
    private WorldSetup()
    {
    }

    /** The scripts' headers by key policy and chain parameters (the same for every chain of both: made once each). */
    private static final Map<List<Object>, List<String>> HEADERS = new java.util.concurrent.ConcurrentHashMap<>();

    /** The lines of a script before its first step: hosts, devices, processes, the context, PD and CQ a world makes. */
    static List<String> header(final VariantPolicy policy, final ChainParams params)
    {
        return HEADERS.computeIfAbsent(List.of(policy, params), k -> makeHeader(policy, params));
    }

    private static List<String> makeHeader(final VariantPolicy policy, final ChainParams params)
    {
        final String keysWord = policy.name().toLowerCase(Locale.ROOT);
        final List<String> h = new ArrayList<>();
        h.add("# rnic-sim key lifecycle (dev.rnicsim.keys): keys=" + keysWord + ", " + params);
        h.add("# replay: ./rnicsim run FILE   (exit 0: every expectation of the model held; 1: the simulator differs)");
        h.add("host alpha ram=256M memlock=unlimited");
        h.add("host beta ram=256M swap=64M fork=" + params.forkWord());
        h.add("device nic_a alpha profile=connectx5");
        h.add("device nic_b beta profile=connectx5" + (params.buddyMtt() ? " log_num_mtt=" + ChainParams.LOG_NUM_MTT
            + " log_mtts_per_seg=" + ChainParams.LOG_MTTS_PER_SEG : "") + " max_mr=" + params.maxMr() + " keys="
            + keysWord);
        h.add("open app_a nic_a");
        h.add("pd pd_a app_a");
        h.add("cq cq_a app_a");
        h.add("mmap scratch app_a 4K");
        h.add("reg smr pd_a scratch 4K");
        h.add("process app_b beta memlock=" + Script.size(params.memlockBytes()));
        h.add("open ctx_b0 nic_b process=app_b");
        h.add("cq cq_b0 ctx_b0");
        h.add("pd pd_b0 ctx_b0");
        return List.copyOf(h);
    }

    /** Host alpha's configuration (immutable: made once). */
    static final HostConfig HOST_A = HostConfig.builder().physicalMemoryBytes(256L << 20).aged(false).build();
    /** Host beta's configuration by fork behaviour (immutable: made once each). */
    private static final Map<ForkBehaviour, HostConfig> HOST_B = new java.util.concurrent.ConcurrentHashMap<>();
    /** Device b's profile by MTT allocator, max_mr and key policy (immutable: made once each). */
    private static final Map<List<Object>, DeviceProfile> PROFILE_B = new java.util.concurrent.ConcurrentHashMap<>();

    /** Host beta's configuration for a chain's parameters. */
    static HostConfig hostB(final ChainParams params)
    {
        return HOST_B.computeIfAbsent(params.fork(), f -> HostConfig.builder().physicalMemoryBytes(256L << 20)
            .swapBytes(64L << 20).forkBehaviour(f).aged(false).build());
    }

    /** Device b's profile for a chain's parameters and a key policy. */
    static DeviceProfile profileB(final ChainParams params, final VariantPolicy policy)
    {
        return PROFILE_B.computeIfAbsent(List.of(params.buddyMtt(), params.maxMr(), policy),
            k -> makeProfileB(params, policy));
    }

    private static DeviceProfile makeProfileB(final ChainParams params, final VariantPolicy policy)
    {
        DeviceProfile p = DeviceProfiles.byName("connectx5");
        if (params.buddyMtt())
        {
            p = p.withMtt(dev.rnicsim.mtt.MttConfig.buddy(ChainParams.LOG_NUM_MTT, ChainParams.LOG_MTTS_PER_SEG));
        }
        p = p.withAttributes(p.attributes().toBuilder().maxMr(params.maxMr()).build());
        return p.withVariantPolicy(policy);
    }
}
