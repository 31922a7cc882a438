package dev.rnicsim.verbs.strategy;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.HostMemory;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A memory pool (the seed's S15): chunks of memory allocated and registered once, on first need, and carved into
 * fragments by a binary buddy allocator per chunk (sizes rounded up to a power of two, from
 * {@link Config#minFragmentBytes()} to {@link Config#chunkBytes()}; a freed fragment merges with its free buddy).
 * Every fragment carries the lkey and rkey of its chunk's MR, so a message made of several fragments is described
 * by an SGL ({@link #sgl}) without copying. The rkey opens the whole chunk (every fragment in it) to a peer, as a
 * pool's single registration does on real hardware. Only {@link #allocate} may register, and only when no chunk has room;
 * {@link #free} never deregisters. Not thread safe.
 */
public final class MemoryPool implements AutoCloseable
{
    /**
     * How a pool is sized.
     *
     * @param chunkBytes       bytes per registered chunk, a power of two of at least 4 KiB.
     * @param maxChunks        the most chunks, at least 1.
     * @param minFragmentBytes smallest fragment, a power of two from 64 bytes to chunkBytes.
     * @param backing          pages behind the chunks (huge pages cut MTT entries).
     * @param access           rights of the chunks' MRs.
     */
    public record Config(long chunkBytes, int maxChunks, long minFragmentBytes, Backing backing, Set<Access> access)
    {
        /**
         * @throws IllegalArgumentException for a size that is not a power of two in range, or maxChunks below 1.
         */
        public Config
        {
            Objects.requireNonNull(backing, "backing");
            Objects.requireNonNull(access, "access");
            if (chunkBytes < 4096 || Long.bitCount(chunkBytes) != 1)
            {
                throw new IllegalArgumentException("chunk size " + chunkBytes + " bytes: expected a power of two "
                    + "of at least 4096");
            }
            if (minFragmentBytes < 64 || Long.bitCount(minFragmentBytes) != 1 || minFragmentBytes > chunkBytes)
            {
                throw new IllegalArgumentException("smallest fragment " + minFragmentBytes + " bytes: expected a "
                    + "power of two from 64 to the chunk size, " + chunkBytes);
            }
            if (maxChunks < 1)
            {
                throw new IllegalArgumentException("at most " + maxChunks + " chunks: expected 1 or more");
            }
            access = java.util.Collections.unmodifiableSet(access.isEmpty() ? EnumSet.noneOf(Access.class)
                : EnumSet.copyOf(access));
        }
    }

    /**
     * A piece of a registered chunk.
     *
     * @param addr        first byte (process virtual address, also the address to use with the keys).
     * @param lengthBytes bytes asked for (the buddy block behind it may be larger).
     * @param lkey        the chunk MR's lkey.
     * @param rkey        the chunk MR's rkey.
     */
    public record Fragment(long addr, long lengthBytes, int lkey, int rkey)
    {
        /**
         * @return an SGE over the whole fragment.
         */
        public Sge sge()
        {
            return new Sge(addr, lengthBytes, lkey);
        }

        /**
         * @param offsetBytes offset into the fragment.
         * @param bytes       length.
         * @return an SGE over part of the fragment.
         * @throws IllegalArgumentException when the part is not inside the fragment.
         */
        public Sge sge(final long offsetBytes, final long bytes)
        {
            if (offsetBytes < 0 || bytes < 0 || offsetBytes > lengthBytes - bytes)
            {
                throw new IllegalArgumentException("offset " + offsetBytes + " + " + bytes + " bytes is outside the "
                    + lengthBytes + "-byte fragment");
            }
            return new Sge(addr + offsetBytes, bytes, lkey);
        }

        @Override
        public String toString()
        {
            return "fragment 0x" + Long.toHexString(addr) + "+" + lengthBytes + " lkey 0x" + Integer.toHexString(lkey);
        }
    }

    /** One registered chunk and its buddy free lists: free block offsets by order (0 = minFragmentBytes). */
    private static final class Chunk
    {
        final long addr;
        final MemoryRegion mr;
        final List<TreeSet<Long>> free = new ArrayList<>();

        Chunk(final long addr, final MemoryRegion mr, final int orders)
        {
            this.addr = addr;
            this.mr = mr;
            for (int o = 0; o <= orders; o++)
            {
                free.add(new TreeSet<>());
            }
            free.get(orders).add(0L);
        }
    }

    /** Where an allocated fragment sits. */
    private record Allocation(Chunk chunk, long offset, int order)
    {
    }

    private final ProtectionDomain pd;
    private final HostMemory memory;
    private final Config config;
    private final int topOrder;
    private final int minShift;
    private final List<Chunk> chunks = new ArrayList<>();
    private final Map<Long, Allocation> allocated = new HashMap<>();
    private long hits;
    private long misses;
    private long registrations;
    private long bytesRegistered;
    private boolean closed;

    private MemoryPool(final ProtectionDomain pd, final HostMemory memory, final Config config)
    {
        this.pd = pd;
        this.memory = memory;
        this.config = config;
        this.minShift = Long.numberOfTrailingZeros(config.minFragmentBytes());
        this.topOrder = Long.numberOfTrailingZeros(config.chunkBytes()) - minShift;
    }

    /**
     * @param pd     the PD the chunks are registered in.
     * @param memory where the chunks are allocated.
     * @param config sizes, backing and rights.
     * @return an empty pool (nothing registered until the first allocation).
     */
    public static MemoryPool create(final ProtectionDomain pd, final HostMemory memory, final Config config)
    {
        return new MemoryPool(Objects.requireNonNull(pd, "pd"), Objects.requireNonNull(memory, "memory"),
            Objects.requireNonNull(config, "config"));
    }

    /**
     * @param bytes bytes wanted, 1 to {@link Config#chunkBytes()}.
     * @return a fragment of at least that many bytes in a registered chunk, not overlapping any other live one.
     * @throws VerbsException EINVAL for a size out of range or a closed pool; ENOMEM when every chunk is full and
     *                        {@link Config#maxChunks()} are registered (naming the limit), or when registering a new
     *                        chunk fails (the device's or the host's reason).
     */
    public Fragment allocate(final long bytes)
    {
        check("allocate");
        if (bytes < 1 || bytes > config.chunkBytes())
        {
            throw new VerbsException("MemoryPool.allocate", Errno.EINVAL.code(), "bytes=" + bytes
                + " must be from 1 to chunkBytes=" + config.chunkBytes());
        }
        final int order = orderFor(bytes);
        // A chunk whose MR was deregistered under the pool (its PD or context closed) hands out nothing more.
        chunks.removeIf(c -> c.mr.isClosed());
        for (final Chunk c : chunks)
        {
            final Long offset = take(c, order);
            if (offset != null)
            {
                hits++;
                return handOut(c, offset, order, bytes);
            }
        }
        if (chunks.size() >= config.maxChunks())
        {
            throw new VerbsException("MemoryPool.allocate", Errno.ENOMEM.code(), "no free block of "
                + (config.minFragmentBytes() << order) + " bytes in " + chunks.size() + " chunks = maxChunks="
                + config.maxChunks() + " of " + config.chunkBytes() + " bytes"
                + "; free fragments first or raise maxChunks");
        }
        misses++;
        final Chunk c = addChunk();
        return handOut(c, take(c, order), order, bytes);
    }

    private int orderFor(final long bytes)
    {
        final int shift = 64 - Long.numberOfLeadingZeros(bytes - 1);
        return Math.max(0, shift - minShift);
    }

    /** Takes a free block of the order, splitting a larger one; null when the chunk has none. */
    private static Long take(final Chunk c, final int order)
    {
        int o = order;
        while (o < c.free.size() && c.free.get(o).isEmpty())
        {
            o++;
        }
        if (o >= c.free.size())
        {
            return null;
        }
        final long offset = c.free.get(o).pollFirst();
        while (o > order)
        {
            o--;
            // Keep the lower half, free the upper half (its buddy).
            c.free.get(o).add(offset + (1L << o));
        }
        return offset;
    }

    private Fragment handOut(final Chunk c, final long blockIndex, final int order, final long bytes)
    {
        final long addr = c.addr + (blockIndex << minShift);
        allocated.put(addr, new Allocation(c, blockIndex, order));
        return new Fragment(addr, bytes, c.mr.lkey(), c.mr.rkey());
    }

    private Chunk addChunk()
    {
        final long addr = memory.allocate(config.chunkBytes(), config.backing());
        final MemoryRegion mr;
        try
        {
            mr = pd.regMr(addr, config.chunkBytes(), config.access());
        }
        catch (final VerbsException e)
        {
            memory.free(addr, config.chunkBytes());
            throw e;
        }
        registrations++;
        bytesRegistered += config.chunkBytes();
        final Chunk c = new Chunk(addr, mr, topOrder);
        chunks.add(c);
        return c;
    }

    /**
     * Returns a fragment; its block merges with free buddies. Never deregisters.
     *
     * @param fragment a fragment this pool handed out and that is not freed yet.
     * @throws VerbsException EINVAL for a fragment this pool does not hold (a double free, another pool's).
     */
    public void free(final Fragment fragment)
    {
        check("free");
        final Allocation a = fragment == null ? null : allocated.get(fragment.addr());
        if (a == null || a.chunk().mr.lkey() != fragment.lkey())
        {
            throw new VerbsException("MemoryPool.free", Errno.EINVAL.code(), fragment
                + " is not allocated from this pool (double free?)"
                + "; free each fragment once, to the pool that gave it");
        }
        allocated.remove(fragment.addr());
        long offset = a.offset();
        int order = a.order();
        final Chunk c = a.chunk();
        while (order < topOrder)
        {
            final long buddy = offset ^ (1L << order);
            if (!c.free.get(order).remove(buddy))
            {
                break;
            }
            offset = Math.min(offset, buddy);
            order++;
        }
        c.free.get(order).add(offset);
    }

    /**
     * @param fragments fragments, in message order.
     * @return one SGE per fragment, for a work request's SGL.
     */
    public static List<Sge> sgl(final List<Fragment> fragments)
    {
        final List<Sge> out = new ArrayList<>(fragments.size());
        for (final Fragment f : fragments)
        {
            out.add(f.sge());
        }
        return out;
    }

    /**
     * @return the pool's counters: hits (served from a registered chunk), misses (a chunk registered), MRs and bytes.
     */
    public StrategyCounters counters()
    {
        return new StrategyCounters(hits, misses, 0, 0, registrations, bytesRegistered, chunks.size(),
            (long)chunks.size() * config.chunkBytes());
    }

    /**
     * @return fragments handed out and not freed.
     */
    public int liveFragments()
    {
        return allocated.size();
    }

    /**
     * @return the MRs of the registered chunks, in registration order.
     */
    public List<MemoryRegion> memoryRegions()
    {
        final List<MemoryRegion> out = new ArrayList<>(chunks.size());
        for (final Chunk c : chunks)
        {
            out.add(c.mr);
        }
        return out;
    }

    private void check(final String op)
    {
        if (closed)
        {
            throw new VerbsException("MemoryPool." + op, Errno.EINVAL.code(), "the pool is closed"
                + " (close() released it); create a new pool");
        }
    }

    /**
     * Deregisters every chunk and frees its memory; idempotent. Fragments still out become invalid.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final List<Chunk> all = List.copyOf(chunks);
        chunks.clear();
        allocated.clear();
        Release.each(all, c ->
        {
            c.mr.close();
            memory.free(c.addr, config.chunkBytes());
        });
    }
}
