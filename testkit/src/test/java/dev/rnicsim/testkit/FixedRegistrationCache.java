package dev.rnicsim.testkit;

import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.ProtectionDomain;

/**
 * The naive cache with the fix: it follows the process's unmaps (as UCX's memory hooks intercept munmap) and drops
 * its entries over memory that goes away, so the next use registers the new pages.
 */
final class FixedRegistrationCache extends NaiveRegistrationCache
{
    FixedRegistrationCache(final ProtectionDomain pd, final HostMemory memory)
    {
        super(pd);
        memory.onUnmap(this::invalidate);
    }

    /**
     * @param s a chain's state.
     * @return a fixed cache over side B's PD, following side B's unmaps.
     */
    static FixedRegistrationCache of(final VerbsState s)
    {
        return new FixedRegistrationCache(s.nic().pd(TestNic.Side.B), s.nic().memory(TestNic.Side.B));
    }
}
