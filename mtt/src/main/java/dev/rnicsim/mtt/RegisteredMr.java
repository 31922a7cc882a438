package dev.rnicsim.mtt;

/**
 * What the adapter tables hold for one registered MR.
 *
 * <p>Immutable and thread safe.
 *
 * @param key           lkey == rkey.
 * @param pageSizeBytes the MR page size chosen by {@link PageSizeSelector}.
 * @param mtt           the MTT entries holding its translation.
 */
public record RegisteredMr(int key, long pageSizeBytes, MttRange mtt)
{
}
