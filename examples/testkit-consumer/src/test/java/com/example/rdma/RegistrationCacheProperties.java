package com.example.rdma;

import dev.rnicsim.testkit.CacheActions;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.testkit.VerbsActions;
import dev.rnicsim.testkit.VerbsState;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import java.util.EnumSet;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.ActionChain;

/**
 * A property of a registration cache that follows munmap: random chains of a correct application (allocations,
 * frees, mapping the same address again, fork, remote writes) that also writes into the peer's buffers under keys
 * from the cache never make the NIC write into memory the application no longer owns.
 */
class RegistrationCacheProperties
{
    /** The cache under test, seen by the actions through CacheActions.MrCache; closed with the chain's state. */
    static final class HookedCache implements CacheActions.MrCache, AutoCloseable
    {
        private final RegistrationCache cache;

        HookedCache(final VerbsState s)
        {
            cache = RegistrationCache.create(s.nic().pd(Side.B), RegistrationCache.Config.unbounded());
            cache.hookUnmaps(s.nic().memory(Side.B));          // the line a naive cache forgets
        }

        @Override
        public MemoryRegion cover(final long addr, final long lengthBytes)
        {
            final RegistrationCache.Handle h = cache.acquire(addr, lengthBytes,
                EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            cache.release(h);                                   // idle, but kept registered for the write
            return h.mr();
        }

        @Override
        public void close()
        {
            cache.close();
        }
    }

    @Property(tries = 40)
    void writesThroughTheCacheNeverReachFreedMemory(@ForAll("chains") final ActionChain<VerbsState> chain)
    {
        VerbsActions.run(chain);
    }

    @Provide
    Arbitrary<ActionChain<VerbsState>> chains()
    {
        return CacheActions.chains(HookedCache::new);
    }
}
