/**
 * The adapter's translation and protection tables, modelled without any notion of a process.
 *
 * <p>What will live here: page-size selection as the kernel's {@code ib_umem_find_best_pgsz} does it for a
 * device {@code page_size_cap}; the MTT with a capacity in entries and the two allocators real devices use
 * (mlx4's power-of-two buddy over segments of {@code 2^log_mtts_per_seg} entries, and exact allocation);
 * the MPT (mkey) table with 32-bit keys made of a 24-bit index and an 8-bit variant (generation, random or
 * recycled, by device profile); and the NIC translation cache. Inputs are physically contiguous runs
 * (DMA address, length) and an iova; every operation returns or accumulates counts and never reads a clock.
 * Seed points S3, S10-S14; design in DESIGN.md section 3.
 */
package dev.rnicsim.mtt;
