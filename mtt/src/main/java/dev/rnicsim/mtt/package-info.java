/**
 * The adapter's translation and protection tables, modelled without any notion of a process.
 *
 * <p>{@link dev.rnicsim.mtt.PageSizeSelector} chooses an MR's page size as the kernel's
 * {@code ib_umem_find_best_pgsz} does for a device {@code page_size_cap}; {@link dev.rnicsim.mtt.Mtt} holds the
 * translation entries, handed out by mlx4's power-of-two buddy over segments of {@code 2^log_mtts_per_seg}
 * entries or by exact allocation; {@link dev.rnicsim.mtt.MptTable} holds the protection entries, named by 32-bit
 * keys made of a 24-bit index and an 8-bit variant (generation, random or recycled, by device profile);
 * {@link dev.rnicsim.mtt.TranslationCache} is the NIC's cache of both; {@link dev.rnicsim.mtt.AdapterTables}
 * performs registration, deregistration and translation on them. Inputs are physically contiguous DMA runs and an
 * iova; every operation returns or accumulates counts and never reads a clock. Refused calls throw
 * {@link dev.rnicsim.mtt.TableException} with the Linux errno and change nothing; a null argument throws
 * NullPointerException; the data-path checks ({@code lookup}, {@code translate}) never throw.
 */
package dev.rnicsim.mtt;
