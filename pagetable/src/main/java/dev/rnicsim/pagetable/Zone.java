package dev.rnicsim.pagetable;

/**
 * The memory zones of the model (include/linux/mmzone.h {@code enum zone_type}). NORMAL holds the low frames,
 * MOVABLE the high ones (the {@code movablecore=} boot option). Only movable allocations such as user anonymous
 * pages may use MOVABLE, and a long-term pin must first migrate its pages out of it (mm/gup.c
 * {@code check_and_migrate_movable_folios}).
 *
 * <p>Immutable and thread safe.
 */
public enum Zone
{
    /** Frames any allocation may use; long-term pinnable. */
    NORMAL,
    /** Frames only movable allocations may use; not long-term pinnable. */
    MOVABLE
}
