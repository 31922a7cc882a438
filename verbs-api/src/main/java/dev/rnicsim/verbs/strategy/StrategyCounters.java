package dev.rnicsim.verbs.strategy;

/**
 * What a pool or a cache did since it was created.
 *
 * @param hits            requests served without a registration (a fragment from a registered chunk; a cached MR).
 * @param misses          requests that needed a registration.
 * @param evictions       idle MRs deregistered to respect a bound (cache only).
 * @param invalidations   MRs dropped because their memory was released (cache only).
 * @param registrations   MRs registered.
 * @param bytesRegistered bytes registered, summed over every registration.
 * @param liveMrs         MRs registered now.
 * @param liveBytes       bytes registered now.
 */
public record StrategyCounters(long hits, long misses, long evictions, long invalidations, long registrations,
    long bytesRegistered, long liveMrs, long liveBytes)
{
}
