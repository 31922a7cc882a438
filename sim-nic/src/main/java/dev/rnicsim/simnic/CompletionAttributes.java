package dev.rnicsim.simnic;

/**
 * What a device reports about its completions beyond {@code ibv_query_device}: the completion clock of
 * {@code ibv_query_device_ex} ({@code hca_core_clock}, {@code completion_timestamp_mask}) and the context's
 * {@code num_comp_vectors}. A property of the device profile: a built-in profile takes its driver's values
 * ({@link #of(String)}), a profile read from an {@code ibv_devinfo -v} dump the dump's lines where it has them
 * ({@code completion timestamp_mask:}, {@code hca_core_clock: NkHZ}, {@code num_comp_vectors:}, the lines
 * libibverbs/examples/devinfo.c prints from the extended attributes; {@link DevinfoReader}).
 *
 * <p><b>The completion clock.</b> mlx5: 156250 kHz and mask 0x7fffffffffffffff, the values an mlx5 device prints in
 * the {@code ibv_devinfo -v} dump of openucx/ucx issue 8139 (see {@link ExtendedCqs}); no other driver's clock is
 * given by a public dump the project has (rxe and irdma print "completion_timestamp_mask not supported"), so 0.
 *
 * <p><b>The completion vectors.</b> Every modelled driver gives one completion vector per CPU of the host, up to
 * the interrupt vectors its device has, so on the simulated host ({@link #SIMULATED_HOST_CPUS} CPUs) each reports
 * that count: rxe and siw {@code num_possible_cpus()} ({@code rxe_register_device}, {@code siw_device_create}); mlx5
 * one completion EQ per CPU ({@code mlx5_comp_vectors_max}); mlx4 its completion EQs ({@code caps.num_comp_vectors},
 * one per CPU from {@code mlx4_enable_msi_x}); efa {@code dev->neqs ?: 1}, one EQ per CPU on a device with event
 * queues (efa_main.c {@code efa_ib_device_add}); erdma {@code irq_num - 1} (one vector per CPU plus the command
 * queue's); bnxt_re one NQ per MSI-X vector but the slow path's; qedr {@code num_cnq}; irdma {@code ceqs_count};
 * cxgb4 {@code lldi.nciq}; hns, mana and hfi1 the completion queues their firmware or affinity setup gives (the
 * host-CPU bound assumed). The count is the host's, not the driver's, which is why it stays one number here; a dump
 * taken on another host carries its own.
 *
 * <p>Immutable and thread safe.
 *
 * @param hcaCoreClockKhz         the completion clock in kHz (0: none, no completion timestamps).
 * @param completionTimestampMask the bits of a completion timestamp the device keeps (0: none).
 * @param numCompVectors          {@code num_comp_vectors}: completion vectors a CQ may name (1 or more).
 */
public record CompletionAttributes(long hcaCoreClockKhz, long completionTimestampMask, int numCompVectors)
{
    /** CPUs of the simulated host, which the drivers' completion vectors follow (assumed: a small server). */
    public static final int SIMULATED_HOST_CPUS = 8;
    /** The completion clock of the mlx5 profiles, kHz (openucx/ucx issue 8139's dump). */
    static final long MLX5_HCA_CORE_CLOCK_KHZ = 156_250;
    /** The completion timestamp mask of the mlx5 profiles (the same dump). */
    static final long MLX5_TIMESTAMP_MASK = 0x7fff_ffff_ffff_ffffL;

    /**
     * @throws IllegalArgumentException when the clock is negative or there is no completion vector (the message
     *                                  names the value).
     */
    public CompletionAttributes
    {
        if (hcaCoreClockKhz < 0)
        {
            throw new IllegalArgumentException("hca_core_clock=" + hcaCoreClockKhz + " kHz must be 0 (none) or "
                + "positive");
        }
        if (numCompVectors < 1)
        {
            throw new IllegalArgumentException("num_comp_vectors=" + numCompVectors + " must be 1 or more (every "
                + "device has at least one completion vector)");
        }
    }

    /**
     * @param driver a profile's kernel driver.
     * @return its built-in values (see the class comment): the clock of its traits' extended CQ verbs
     *         ({@link DriverVerbTraits#extendedCqs()}), the simulated host's CPUs.
     */
    public static CompletionAttributes of(final String driver)
    {
        final ExtendedCqs driverCqs = DriverVerbTraits.of(driver).extendedCqs();
        return new CompletionAttributes(driverCqs.hcaCoreClockKhz(), driverCqs.completionTimestampMask(),
            SIMULATED_HOST_CPUS);
    }

    /**
     * @param khz a completion clock in kHz.
     * @return a copy with it.
     */
    public CompletionAttributes withHcaCoreClockKhz(final long khz)
    {
        return new CompletionAttributes(khz, completionTimestampMask, numCompVectors);
    }

    /**
     * @param mask a completion timestamp mask.
     * @return a copy with it.
     */
    public CompletionAttributes withCompletionTimestampMask(final long mask)
    {
        return new CompletionAttributes(hcaCoreClockKhz, mask, numCompVectors);
    }

    /**
     * @param vectors completion vectors.
     * @return a copy with them.
     */
    public CompletionAttributes withNumCompVectors(final int vectors)
    {
        return new CompletionAttributes(hcaCoreClockKhz, completionTimestampMask, vectors);
    }
}
