package dev.rnicsim.dma;

import dev.rnicsim.pagetable.PhysicalMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * How a device's DMA writes reach memory, under PCIe ordering (PCI Express Base Specification, "Transaction Ordering":
 * a posted write with the Relaxed Ordering attribute may pass earlier posted writes; one without it may not).
 *
 * <p>Writes are placed in chunks of {@link #CHUNK_BYTES} (a TLP of the common 256-byte Max_Payload_Size; assumed).
 * A write to an MR registered with IBV_ACCESS_RELAXED_ORDERING, on a device that applies it, is relaxed: its chunks
 * land in a seeded random order, and a random tail of them may still be in flight when the next write arrives. A
 * later relaxed write may then land before them (ibv_reg_mr(3): ordering between two RDMA writes is not guaranteed);
 * a later strict write waits for them, unless the platform is unsafe ({@code unsafePlatform}: relaxed ordering forced
 * on a root complex that does not keep the rules for it, where even a strict write may overtake). A completion makes
 * every earlier byte visible: {@link #drain()}.
 *
 * <p>Not thread safe.
 */
public final class WriteOrdering
{
    /** Bytes of one placed chunk: a 256-byte TLP (assumed Max_Payload_Size). */
    public static final int CHUNK_BYTES = 256;

    private final boolean relaxedApplied;
    private final boolean unsafePlatform;
    private final SplittableRandom random;
    private final List<Chunk> pending = new ArrayList<>();
    private final List<PlacementListener> listeners = new ArrayList<>();
    private long chunksPlaced;
    private long chunksReordered;
    private long overtakes;

    /**
     * One chunk of a write: its bytes (taken when the write was read from its source: {@code lengthBytes} of
     * {@code data} from {@code offset}, an array the write's chunks share) and where they go.
     */
    record Chunk(PhysicalMemory memory, long physAddr, byte[] data, int offset, int lengthBytes, long sequence)
    {
    }

    private long sequence;
    /** Highest sequence number placed so far: a chunk placed below it landed after a later one. */
    private long lastPlacedSequence = -1;

    /**
     * @param relaxedApplied the device applies relaxed ordering to writes of MRs that ask for it.
     * @param unsafePlatform relaxed ordering is forced on a platform that does not keep PCIe ordering for it.
     * @param seed           seed of the placement order.
     */
    public WriteOrdering(final boolean relaxedApplied, final boolean unsafePlatform, final long seed)
    {
        this.relaxedApplied = relaxedApplied;
        this.unsafePlatform = unsafePlatform;
        this.random = new SplittableRandom(seed);
    }

    /**
     * @return true when the device applies relaxed ordering to writes.
     */
    public boolean relaxedApplied()
    {
        return relaxedApplied;
    }

    /**
     * @return true when the platform does not keep ordering for relaxed writes.
     */
    public boolean unsafePlatform()
    {
        return unsafePlatform;
    }

    /**
     * @param listener told of every chunk placed from now on.
     */
    public void addListener(final PlacementListener listener)
    {
        listeners.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    /**
     * @param listener a listener added before.
     */
    public void removeListener(final PlacementListener listener)
    {
        listeners.remove(listener);
    }

    /**
     * @param relaxedWrite the write asks for relaxed ordering.
     * @return true when the write must go chunk by chunk through this object (someone watches, chunks are in flight,
     * or the write is relaxed here); false when it may be copied at once.
     */
    boolean engaged(final boolean relaxedWrite)
    {
        return !listeners.isEmpty() || !pending.isEmpty() || (relaxedWrite && relaxedApplied);
    }

    Chunk chunk(final PhysicalMemory memory, final long physAddr, final byte[] data, final int offset,
        final int lengthBytes)
    {
        return new Chunk(memory, physAddr, data, offset, lengthBytes, sequence++);
    }

    /**
     * Places the chunks of one write, in the order the rules above allow.
     *
     * @param chunks       the write's chunks in address order.
     * @param relaxedWrite the write asks for relaxed ordering.
     */
    void place(final List<Chunk> chunks, final boolean relaxedWrite)
    {
        final boolean relaxed = relaxedWrite && relaxedApplied;
        final List<Chunk> order = new ArrayList<>(chunks.size() + pending.size());
        order.addAll(pending);
        pending.clear();
        order.addAll(chunks);
        if (relaxed || (unsafePlatform && order.size() > chunks.size()))
        {
            // May pass the chunks still in flight (on the unsafe platform even when strict): all of them land in a
            // random interleaving. A strict write with nothing in flight lands in order everywhere.
            shuffle(order);
        }
        int keep = 0;
        if (relaxed && order.size() > 1)
        {
            // A random tail is still in flight when this write is done.
            keep = random.nextInt(order.size() / 2 + 1);
        }
        final long firstOfThisWrite = chunks.isEmpty() ? Long.MAX_VALUE : chunks.get(0).sequence();
        long earlierUnplaced = 0;
        for (final Chunk c : order)
        {
            earlierUnplaced += c.sequence() < firstOfThisWrite ? 1 : 0;
        }
        boolean overtook = false;
        for (int i = 0; i < order.size() - keep; i++)
        {
            final Chunk c = order.get(i);
            if (c.sequence() >= firstOfThisWrite && earlierUnplaced > 0)
            {
                overtook = true;
            }
            if (c.sequence() < firstOfThisWrite)
            {
                earlierUnplaced--;
            }
            write(c);
        }
        for (int i = order.size() - keep; i < order.size(); i++)
        {
            pending.add(order.get(i));
        }
        if (overtook)
        {
            overtakes++;
        }
    }

    /**
     * Makes every chunk still in flight land (a completion, a read or an atomic through the device orders behind
     * them).
     */
    public void drain()
    {
        if (pending.isEmpty())
        {
            return;
        }
        final List<Chunk> left = new ArrayList<>(pending);
        pending.clear();
        for (final Chunk c : left)
        {
            write(c);
        }
    }

    /**
     * @return chunks still in flight.
     */
    public int inFlight()
    {
        return pending.size();
    }

    /**
     * @return chunks placed since creation.
     */
    public long chunksPlaced()
    {
        return chunksPlaced;
    }

    /**
     * @return chunks that landed after a chunk issued later than them (within a write, after a later write, or at a
     * drain).
     */
    public long chunksReordered()
    {
        return chunksReordered;
    }

    /**
     * @return writes whose chunks landed while chunks of an earlier write were still in flight.
     */
    public long overtakes()
    {
        return overtakes;
    }

    private void write(final Chunk c)
    {
        c.memory().write(c.physAddr(), c.data(), c.offset(), c.lengthBytes());
        chunksPlaced++;
        if (c.sequence() < lastPlacedSequence)
        {
            chunksReordered++;
        }
        lastPlacedSequence = Math.max(lastPlacedSequence, c.sequence());
        if (!listeners.isEmpty())
        {
            // A listener may stop listening while it is told.
            for (final PlacementListener l : List.copyOf(listeners))
            {
                l.placed(c.memory(), c.physAddr(), c.lengthBytes());
            }
        }
    }

    private void shuffle(final List<Chunk> list)
    {
        for (int i = list.size() - 1; i > 0; i--)
        {
            final int j = random.nextInt(i + 1);
            final Chunk t = list.get(i);
            list.set(i, list.get(j));
            list.set(j, t);
        }
    }
}
