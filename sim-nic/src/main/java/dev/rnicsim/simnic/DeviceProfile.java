package dev.rnicsim.simnic;

import dev.rnicsim.mtt.IndexPolicy;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.VariantPolicy;
import dev.rnicsim.verbs.DeviceAttributes;
import java.util.List;
import java.util.Set;
import java.util.Objects;

/**
 * Everything about a simulated device that differs by vendor: the attributes {@code ibv_query_device} reports, and
 * the properties behind them that no attribute shows (MTT allocator, key variant policy, translation-cache
 * geometry, rkey rule, link speed).
 *
 * <p>Immutable and thread safe.
 *
 * @param name                 profile name, e.g. {@code connectx5}.
 * @param driver               kernel driver it models: {@code mlx4}, {@code mlx5}, {@code rxe}, {@code irdma},
 *                             {@code siw}, {@code efa}, {@code bnxt_re}, {@code hns}, {@code qedr}, {@code erdma},
 *                             {@code mana}, {@code cxgb4}, {@code hfi1}, or {@code generic} for a device no
 *                             recognition rule knows.
 * @param attributes           what {@code ibv_query_device_ex} reports (max_mr, page_size_cap, max_mw, ...).
 * @param mtt                  MTT size and allocator: mlx4's power-of-two buddy in segments, or exact.
 * @param variantPolicy        how a key's low byte changes when its MPT index is reused.
 * @param indexPolicy          which free MPT index a registration takes.
 * @param cacheEntries         translation-cache entries on the NIC (MPT and MTT entries share it).
 * @param cacheWays            translation-cache associativity.
 * @param providerRules        the provider behaviours this device follows where providers differ.
 * @param relaxedOrdering      true when the device applies IBV_ACCESS_RELAXED_ORDERING (it is accepted everywhere).
 * @param linkGbps             link rate in Gbit/s, which the cost model turns into wire time.
 * @param seed                 seed of the device's random choices (RANDOM keys).
 * @param defaultedFields      attributes that were not known for this device and got documented defaults
 *                             (from an incomplete {@code ibv_devinfo -v} dump or a profile without a dump).
 * @param traits               what the driver's registration code does that no attribute shows: key layout,
 *                             accepted access flags, translation structure, fast-reg length, RDMA READ/WRITE,
 *                             transport ({@link DriverTraits}).
 * @param completions          the completion clock and {@code num_comp_vectors} ({@link CompletionAttributes}): the
 *                             driver's, or a dump's.
 * @param linkLayer            the port's link layer, {@code IBV_LINK_LAYER_*} ({@link
 *                             dev.rnicsim.verbs.PortAttributes#LINK_LAYER_INFINIBAND} ...): a property of the part,
 *                             not of the driver, since one driver runs both (mlx5 answers {@code
 *                             mlx5_ib_port_link_layer} from the port type the firmware reports): the driver's usual
 *                             one ({@link #driverLinkLayer}), Ethernet for the Ethernet-only ConnectX parts
 *                             ({@link ConnectXProfiles}).
 * @param portMtus             the port's max_mtu and active_mtu as a dump's port section gave them ({@link
 *                             PortMtus}), both 4096 without one.
 */
public record DeviceProfile(String name, String driver, DeviceAttributes attributes, MttConfig mtt,
    VariantPolicy variantPolicy, IndexPolicy indexPolicy, int cacheEntries, int cacheWays,
    Set<ProviderRule> providerRules, boolean relaxedOrdering, double linkGbps, long seed,
    List<String> defaultedFields, DriverTraits traits, CompletionAttributes completions, int linkLayer,
    PortMtus portMtus)
{
    /**
     * A profile whose port MTUs are 4096 ({@link PortMtus#FULL}).
     *
     * @param name            profile name.
     * @param driver          kernel driver.
     * @param attributes      query_device attributes.
     * @param mtt             MTT size and allocator.
     * @param variantPolicy   key variant policy.
     * @param indexPolicy     MPT index policy.
     * @param cacheEntries    translation-cache entries.
     * @param cacheWays       translation-cache associativity.
     * @param providerRules   provider behaviours.
     * @param relaxedOrdering relaxed ordering applied.
     * @param linkGbps        link rate in Gbit/s.
     * @param seed            seed of random choices.
     * @param defaultedFields attributes that got defaults.
     * @param traits          driver traits.
     * @param completions     completion clock and vectors.
     * @param linkLayer       the port's link layer.
     */
    public DeviceProfile(final String name, final String driver, final DeviceAttributes attributes,
        final MttConfig mtt, final VariantPolicy variantPolicy, final IndexPolicy indexPolicy, final int cacheEntries,
        final int cacheWays, final Set<ProviderRule> providerRules, final boolean relaxedOrdering,
        final double linkGbps, final long seed, final List<String> defaultedFields, final DriverTraits traits,
        final CompletionAttributes completions, final int linkLayer)
    {
        this(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays, providerRules,
            relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions, linkLayer, PortMtus.FULL);
    }

    /**
     * A profile with the link layer its driver's ports usually have ({@link #driverLinkLayer}).
     *
     * @param name            profile name.
     * @param driver          kernel driver.
     * @param attributes      query_device attributes.
     * @param mtt             MTT size and allocator.
     * @param variantPolicy   key variant policy.
     * @param indexPolicy     MPT index policy.
     * @param cacheEntries    translation-cache entries.
     * @param cacheWays       translation-cache associativity.
     * @param providerRules   provider behaviours.
     * @param relaxedOrdering relaxed ordering applied.
     * @param linkGbps        link rate in Gbit/s.
     * @param seed            seed of random choices.
     * @param defaultedFields attributes that got defaults.
     * @param traits          driver traits.
     * @param completions     completion clock and vectors.
     */
    public DeviceProfile(final String name, final String driver, final DeviceAttributes attributes,
        final MttConfig mtt, final VariantPolicy variantPolicy, final IndexPolicy indexPolicy, final int cacheEntries,
        final int cacheWays, final Set<ProviderRule> providerRules, final boolean relaxedOrdering,
        final double linkGbps, final long seed, final List<String> defaultedFields, final DriverTraits traits,
        final CompletionAttributes completions)
    {
        this(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays, providerRules,
            relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions,
            driverLinkLayer(Objects.requireNonNull(driver, "driver")));
    }

    /**
     * A profile with the completion attributes {@link CompletionAttributes#of} gives its driver.
     *
     * @param name            profile name.
     * @param driver          kernel driver.
     * @param attributes      query_device attributes.
     * @param mtt             MTT size and allocator.
     * @param variantPolicy   key variant policy.
     * @param indexPolicy     MPT index policy.
     * @param cacheEntries    translation-cache entries.
     * @param cacheWays       translation-cache associativity.
     * @param providerRules   provider behaviours.
     * @param relaxedOrdering relaxed ordering applied.
     * @param linkGbps        link rate in Gbit/s.
     * @param seed            seed of random choices.
     * @param defaultedFields attributes that got defaults.
     * @param traits          driver traits.
     */
    public DeviceProfile(final String name, final String driver, final DeviceAttributes attributes,
        final MttConfig mtt, final VariantPolicy variantPolicy, final IndexPolicy indexPolicy, final int cacheEntries,
        final int cacheWays, final Set<ProviderRule> providerRules, final boolean relaxedOrdering,
        final double linkGbps, final long seed, final List<String> defaultedFields, final DriverTraits traits)
    {
        this(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays, providerRules,
            relaxedOrdering, linkGbps, seed, defaultedFields, traits, CompletionAttributes.of(driver));
    }

    /**
     * A profile with the traits {@link DriverTraits#of} gives its driver.
     *
     * @param name            profile name.
     * @param driver          kernel driver.
     * @param attributes      query_device attributes.
     * @param mtt             MTT size and allocator.
     * @param variantPolicy   key variant policy.
     * @param indexPolicy     MPT index policy.
     * @param cacheEntries    translation-cache entries.
     * @param cacheWays       translation-cache associativity.
     * @param providerRules   provider behaviours.
     * @param relaxedOrdering relaxed ordering applied.
     * @param linkGbps        link rate in Gbit/s.
     * @param seed            seed of random choices.
     * @param defaultedFields attributes that got defaults.
     */
    public DeviceProfile(final String name, final String driver, final DeviceAttributes attributes,
        final MttConfig mtt, final VariantPolicy variantPolicy, final IndexPolicy indexPolicy, final int cacheEntries,
        final int cacheWays, final Set<ProviderRule> providerRules, final boolean relaxedOrdering,
        final double linkGbps, final long seed, final List<String> defaultedFields)
    {
        this(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays, providerRules,
            relaxedOrdering, linkGbps, seed, defaultedFields, DriverTraits.of(driver));
    }

    /**
     * @throws NullPointerException when a reference is null.
     * @throws IllegalArgumentException when max_mr is outside 2..2^24, the cache geometry is not positive, the
     *                                  link rate is not positive, or the link layer is not an IBV_LINK_LAYER_*
     *                                  value (the message names the value).
     */
    public DeviceProfile
    {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(attributes, "attributes");
        Objects.requireNonNull(mtt, "mtt");
        Objects.requireNonNull(variantPolicy, "variantPolicy");
        Objects.requireNonNull(indexPolicy, "indexPolicy");
        Objects.requireNonNull(traits, "traits");
        Objects.requireNonNull(completions, "completions");
        Objects.requireNonNull(portMtus, "portMtus");
        defaultedFields = List.copyOf(defaultedFields);
        // One bit per rule: follows (read on every verb and completion) is a bit test.
        providerRules = ProviderRuleSet.of(providerRules);
        if (attributes.maxMr() < 1 || attributes.maxMr() > (1 << 24))
        {
            throw new IllegalArgumentException("profile " + name + ": max_mr=" + attributes.maxMr()
                + " must be 1..16777216 (24-bit MPT index)");
        }
        if (cacheEntries <= 0 || cacheWays <= 0 || cacheEntries % cacheWays != 0)
        {
            throw new IllegalArgumentException("profile " + name + ": cacheEntries=" + cacheEntries + " cacheWays="
                + cacheWays + " must be positive, entries a multiple of ways");
        }
        if (!(linkGbps > 0))
        {
            throw new IllegalArgumentException("profile " + name + ": linkGbps=" + linkGbps + " must be positive");
        }
        if (linkLayer < dev.rnicsim.verbs.PortAttributes.LINK_LAYER_UNSPECIFIED
            || linkLayer > dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET)
        {
            throw new IllegalArgumentException("profile " + name + ": linkLayer=" + linkLayer + " must be 0"
                + " (IBV_LINK_LAYER_UNSPECIFIED), 1 (INFINIBAND) or 2 (ETHERNET)");
        }
        if (attributes.maxMr() > (1L << (32 - traits.keyVariantBits())))
        {
            throw new IllegalArgumentException("profile " + name + ": max_mr=" + attributes.maxMr() + " does not fit"
                + " the " + (32 - traits.keyVariantBits()) + " index bits of " + traits.driver() + "'s keys");
        }
    }

    /**
     * @param newTraits the driver traits.
     * @return a copy with them.
     */
    public DeviceProfile withTraits(final DriverTraits newTraits)
    {
        return new DeviceProfile(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, newTraits, completions,
            linkLayer, portMtus);
    }

    /**
     * @param newAttributes attributes.
     * @return a copy with these attributes.
     */
    public DeviceProfile withAttributes(final DeviceAttributes newAttributes)
    {
        return new DeviceProfile(name, driver, newAttributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions,
            linkLayer, portMtus);
    }

    /**
     * @param newMtt MTT size and allocator.
     * @return a copy with this MTT.
     */
    public DeviceProfile withMtt(final MttConfig newMtt)
    {
        return new DeviceProfile(name, driver, attributes, newMtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions,
            linkLayer, portMtus);
    }

    /**
     * @param policy key variant policy.
     * @return a copy with this policy.
     */
    public DeviceProfile withVariantPolicy(final VariantPolicy policy)
    {
        return new DeviceProfile(name, driver, attributes, mtt, policy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions,
            linkLayer, portMtus);
    }

    /**
     * @param rules the provider rules the copy follows.
     * @return a copy with these rules.
     */
    public DeviceProfile withProviderRules(final java.util.Set<ProviderRule> rules)
    {
        return new DeviceProfile(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            rules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions,
            linkLayer, portMtus);
    }

    /**
     * @param entries translation-cache entries.
     * @param ways    associativity.
     * @return a copy with this cache geometry.
     */
    public DeviceProfile withCache(final int entries, final int ways)
    {
        return new DeviceProfile(name, driver, attributes, mtt, variantPolicy, indexPolicy, entries, ways,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions,
            linkLayer, portMtus);
    }

    /**
     * @param newCompletions the completion clock and vectors.
     * @return a copy with them.
     */
    public DeviceProfile withCompletions(final CompletionAttributes newCompletions)
    {
        return new DeviceProfile(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, newCompletions,
            linkLayer, portMtus);
    }

    /**
     * @param newLinkLayer the port's link layer, {@code IBV_LINK_LAYER_*}.
     * @return a copy whose port has it.
     */
    public DeviceProfile withLinkLayer(final int newLinkLayer)
    {
        return new DeviceProfile(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions, newLinkLayer,
            portMtus);
    }

    /**
     * @param newPortMtus the port's MTUs (a dump's port section).
     * @return a copy whose port has them.
     */
    public DeviceProfile withPortMtus(final PortMtus newPortMtus)
    {
        return new DeviceProfile(name, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions, linkLayer,
            newPortMtus);
    }

    /**
     * @param newName profile name.
     * @return a copy with this name.
     */
    public DeviceProfile withName(final String newName)
    {
        return new DeviceProfile(newName, driver, attributes, mtt, variantPolicy, indexPolicy, cacheEntries, cacheWays,
            providerRules, relaxedOrdering, linkGbps, seed, defaultedFields, traits, completions,
            linkLayer, portMtus);
    }

    /**
     * @param rule a provider behaviour.
     * @return true when this device follows it.
     */
    /**
     * Entries of the simulated MPT: one per MR the device reports it takes ({@code max_mr}) plus index 0, which no
     * key may use, capped at the index space of the driver's key layout (2^24 with 8 variant bits, 2^16 for hfi1's
     * 16-bit lkey table). A device reporting {@code max_mr=N} takes N MRs (mlx4 reports
     * its MPT size less the reserved entries, {@code caps.num_mpts - caps.reserved_mrws}; mlx5 and rxe report what
     * their pools hand out, {@code 1 << log_max_mkey}, {@code RXE_MAX_MR}).
     *
     * @return table entries, index 0 included.
     */
    public long mptEntries()
    {
        return Math.min((long)attributes.maxMr() + 1, Math.min(dev.rnicsim.mtt.MptConfig.MAX_MR_LIMIT,
            1L << (32 - traits.keyVariantBits())));
    }

    /**
     * @return how many MRs (and windows and fast-registration MRs, which take MPT entries too) fit at once:
     *         {@code max_mr}, or 2^24 - 1 when a device reports the whole 24-bit index space.
     */
    public long registrableMrs()
    {
        return mptEntries() - 1;
    }

    /** Device memory of an mlx5 part, {@code max_dm_size} (assumed: 128 KiB; no published dump of the field was
     * found). */
    public static final long MLX5_MAX_DM_BYTES = 128 * 1024;

    /**
     * @return {@code max_dm_size} of {@code ibv_query_device_ex}: bytes of device memory, 0 without
     *         {@link ProviderRule#DEVICE_MEMORY}.
     */
    public long maxDmSizeBytes()
    {
        return follows(ProviderRule.DEVICE_MEMORY) ? MLX5_MAX_DM_BYTES : 0;
    }

    /** CPUs of the simulated host, which the drivers' completion vectors follow ({@link
     * CompletionAttributes#SIMULATED_HOST_CPUS}). */
    public static final int SIMULATED_HOST_CPUS = CompletionAttributes.SIMULATED_HOST_CPUS;

    /**
     * @return {@code num_comp_vectors} of the device (the kernel's {@code ib_device.num_comp_vectors}): a dump's
     *         value, else one completion vector per CPU of the simulated host, as every modelled driver gives
     *         ({@link CompletionAttributes}).
     */
    public int numCompVectors()
    {
        return completions.numCompVectors();
    }

    /**
     * @return the driver's {@code hw_counters} files: their names and the counts behind them differ by driver (mlx5
     *         Q counters, rxe's own names).
     */
    public HwCounters hwCounters()
    {
        return traits.verbs().hwCounters();
    }

    /**
     * @return what ibv_query_port reports for each port of this profile: rxe from rxe_param.h
     *         ({@code RXE_PORT_GID_TBL_LEN} 1024, {@code RXE_PORT_MAX_MSG_SZ} 2^31 and {@code RXE_PORT_PKEY_TBL_LEN}
     *         1 in current kernels, 0x800000 and 64 in old ones (rxe-legacy), {@code IB_PORT_CM_SUP}, MTU cap 4096, Ethernet); the others assumed
     *         (no port section in the dumps: gid_tbl_len 256, max_msg_sz 2^30 for mlx4/mlx5 and irdma), except an iWARP
     *         port's gid_tbl_len, 1 ({@link #IWARP_GID_TBL_LEN}). The link
     *         layer is the profile's ({@link #linkLayer()}). The MTUs are those on a netdev of the default MTU,
     *         1500 bytes ({@link PortMtuRule}; a
     *         device's own netdev: {@link SimDevice#portAttributes()}).
     */
    public dev.rnicsim.verbs.PortAttributes portAttributes()
    {
        final dev.rnicsim.verbs.PortAttributes p = linkPort();
        final PortMtuRule rule = portMtuRule();
        if (!rule.followsNetdev())
        {
            return p;
        }
        final int netdev = netdevMtuBytes();
        final int linkMax = linkMaxMtu();
        return new dev.rnicsim.verbs.PortAttributes(p.state(), rule.maxMtu(netdev, linkMax),
            rule.activeMtu(netdev, linkMax), p.gidTblLen(), p.portCapFlags(), p.maxMsgSzBytes(), p.pkeyTblLen(),
            p.linkLayer());
    }

    /**
     * @return the largest MTU the port's link takes whatever the netdev, as {@code enum ibv_mtu}: the dump's max_mtu,
     *         or 4096 where max_mtu itself follows the netdev ({@link PortMtuRule#NETDEV_MAX_TOO}: siw, erdma).
     */
    public int linkMaxMtu()
    {
        return portMtuRule() == PortMtuRule.NETDEV_MAX_TOO ? dev.rnicsim.verbs.PortAttributes.MTU_4096
            : portMtus.maxMtu();
    }

    /**
     * The MTU a device of this profile's netdev starts with: Ethernet's 1500 ({@link PortNetdev#DEFAULT_MTU_BYTES}),
     * unless the profile's port MTUs come from a dump whose active_mtu the driver's rule does not give on 1500 bytes:
     * then the MTU that gives it, 9000 (jumbo frames) for 4096, else the smallest (the IB MTU plus the headers the
     * rule subtracts: 2048 + 96 = 2144 for {@code iboe_get_mtu}).
     *
     * @return the netdev's MTU in bytes.
     */
    public int netdevMtuBytes()
    {
        final PortMtuRule rule = portMtuRule();
        final int active = portMtus.activeMtu();
        if (!rule.followsNetdev() || !portMtus.reported()
            || rule.activeMtu(PortNetdev.DEFAULT_MTU_BYTES, linkMaxMtu()) == active)
        {
            return PortNetdev.DEFAULT_MTU_BYTES;
        }
        if (active == dev.rnicsim.verbs.PortAttributes.MTU_4096)
        {
            return 9000;
        }
        final int headers = switch (rule)
        {
            case IBOE_HEADERS -> PortMtuRule.IBOE_HEADER_BYTES;
            case RXE_HEADERS -> PortMtuRule.RXE_HEADER_BYTES;
            default -> 0;
        };
        return Math.max(PortNetdev.MIN_MTU_BYTES, PortMtuRule.bytesOf(active) + headers);
    }

    /** The port's attributes before a netdev decides its MTUs: the dump's MTUs, or both 4096. */
    private dev.rnicsim.verbs.PortAttributes linkPort()
    {
        final long cmSup = 1L << 16;
        final dev.rnicsim.verbs.PortAttributes d = driverPort(cmSup);
        return new dev.rnicsim.verbs.PortAttributes(d.state(), portMtus.maxMtu(), portMtus.activeMtu(),
            traits.transport() != DriverTraits.Transport.IWARP ? d.gidTblLen() : IWARP_GID_TBL_LEN, d.portCapFlags(),
            d.maxMsgSzBytes(), d.pkeyTblLen(), d.linkLayer());
    }

    /**
     * gid_tbl_len of an iWARP port: one entry, the netdev's MAC ({@code siw_query_port}, cxgb4's {@code
     * c4iw_query_port}, {@code erdma_query_port} outside RoCE mode, and {@code irdma_query_port} when
     * {@code rdma_protocol_roce} is false set {@code gid_tbl_len = 1}; irdma's RoCE ports have 32, qedr's iWARP ports 1).
     */
    static final int IWARP_GID_TBL_LEN = 1;

    private dev.rnicsim.verbs.PortAttributes driverPort(final long cmSup)
    {
        final DriverPortTraits port = traits.verbs().port().forVendor(attributes.vendorId());
        return new dev.rnicsim.verbs.PortAttributes(dev.rnicsim.verbs.PortAttributes.STATE_ACTIVE,
            dev.rnicsim.verbs.PortAttributes.MTU_4096, dev.rnicsim.verbs.PortAttributes.MTU_4096, port.gidTblLen(),
            cmSup, port.maxMsgSzBytes(), port.pkeyTblLen() != 0 ? port.pkeyTblLen() : attributes.maxPkeys(),
            port.linkLayerFixed() ? port.linkLayer() : linkLayer());
    }

    /**
     * The link layer of a driver's ports when the profile does not say otherwise: what the kernel's {@code
     * rdma_port_get_link_layer} answers. Ethernet for the RoCE drivers ({@code bnxt_re_get_link_layer}, hns, qedr,
     * mana, rxe, irdma) and the iWARP ones (siw, cxgb4, erdma: an iWARP node's transport gives Ethernet),
     * unspecified for EFA ({@code efa_port_link_layer}), InfiniBand for hfi1, mlx4 and mlx5 (whose VPI parts
     * initialise their ports as InfiniBand) and the rest.
     *
     * @param driver kernel driver name.
     * @return its usual {@code IBV_LINK_LAYER_*}.
     */
    public static int driverLinkLayer(final String driver)
    {
        return DriverPortTraits.of(driver).linkLayer();
    }

    /**
     * @return how the port's MTUs follow its netdev ({@link PortMtuRule}, each driver's {@code query_port}): the
     *         link's own on InfiniBand and EFA; iboe_get_mtu's headers on mlx4, mlx5, bnxt_re, hns, qedr; rxe's
     *         {@code RXE_MAX_HDR_LENGTH}; the netdev MTU itself on irdma, mana, cxgb4; max_mtu too on siw, erdma.
     */
    public PortMtuRule portMtuRule()
    {
        if (linkLayer() != dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET)
        {
            return PortMtuRule.LINK;
        }
        return traits.verbs().port().mtuRule();
    }

    /**
     * @return which GIDs the port lists ({@link GidTable.Kinds}): IB on an InfiniBand or EFA port; one GID from the
     *         MAC on an iWARP port; RoCE v2 only on rxe, irdma, mana; RoCE v1 and v2 on the other RoCE drivers
     *         (mlx4, mlx5, bnxt_re, hns, qedr).
     */
    public GidTable.Kinds gidKinds()
    {
        if (linkLayer() != dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET)
        {
            return GidTable.Kinds.INFINIBAND;
        }
        if (traits.transport() == DriverTraits.Transport.IWARP)
        {
            return GidTable.Kinds.IWARP;
        }
        return traits.verbs().port().roceV2Only() ? GidTable.Kinds.ROCE_V2 : GidTable.Kinds.ROCE_V1_AND_V2;
    }

    /**
     * @return true when {@code ibv_modify_qp} refuses a path_mtu above the port's active_mtu with EINVAL: hns ({@code
     *         check_mtu_validate} in hns_roce_hw_v2.c compares it with {@code iboe_get_mtu} of the netdev). The others
     *         take any path_mtu up to max_mtu (mlx5 {@code __mlx5_ib_modify_qp}, rxe {@code rxe_qp_chk_attr}).
     */
    public boolean pathMtuAboveActiveRefused()
    {
        return traits.verbs().port().pathMtuAboveActiveRefused();
    }

    public boolean follows(final ProviderRule rule)
    {
        return ((ProviderRuleSet)providerRules).has(rule);
    }

    /**
     * @return true when an MR without remote rights gets rkey 0 ({@link ProviderRule#RKEY_ONLY_WITH_REMOTE_ACCESS}).
     */
    public boolean rkeyOnlyWithRemoteAccess()
    {
        return follows(ProviderRule.RKEY_ONLY_WITH_REMOTE_ACCESS);
    }
}
