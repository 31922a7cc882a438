package dev.rnicsim.simnic;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The engine-thread mode of a fabric ({@link SimFabric#startEngineThread()}): the NIC engine runs on a thread of its
 * own, as a real NIC works beside the program, instead of being driven by {@code poll} and {@code progress}. The
 * program's threads post and poll while it runs.
 *
 * <p>The simulator's objects stay single-threaded underneath: one fair lock of the fabric is held by the engine
 * thread for each packet it moves and by the verbs that share the engine's state while they run: posting
 * ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_post_srq_recv}, {@code ibv_bind_mw}),
 * {@code ibv_modify_qp}, {@code ibv_destroy_qp}, {@code ibv_poll_cq}, the fabric's {@code progress}, and every verb
 * that changes the tables or keys the engine reads: registration and deregistration of every kind of MR,
 * {@code ibv_rereg_mr}, {@code ibv_alloc_mw} / {@code ibv_dealloc_mw}, {@code ibv_advise_mr}, {@code ibv_alloc_pd}
 * / {@code ibv_dealloc_pd}, {@code ibv_create_cq}, {@code ibv_create_qp}, {@code ibv_create_srq} and the XRC verbs
 * ({@code SimFabric.guarded}). So a deregistration that returned is followed by no DMA through its
 * key, whichever thread called it. Any other code that must not interleave with the engine (reading simulated
 * memory while a message lands) runs in {@link #exclusive}.
 *
 * <p>{@code poll} then waits for real events: while the CQ has fewer completions than asked for and the engine has
 * work, the polling thread waits on a condition the engine thread signals after every packet (no sleeping, no
 * timed waits); it returns what the CQ holds once the completions are there or the engine has nothing left to do.
 * The engine itself stays deterministic (the same turns, the same simulated clock); only which of the program's
 * calls comes first depends on the threads. The deterministic mode without a thread stays the default and the
 * testkit's.
 */
public final class EngineThread implements AutoCloseable
{
    private final SimFabric fabric;
    private final ReentrantLock lock = new ReentrantLock(true);
    /** Signalled when a verb may have given the engine work. */
    private final Condition work = lock.newCondition();
    /** Signalled after every packet the engine thread moved, and when it stops or fails. */
    private final Condition progressed = lock.newCondition();
    private final Thread thread;
    private boolean stopping;
    private long packets;
    private RuntimeException failure;

    EngineThread(final SimFabric fabric)
    {
        this.fabric = fabric;
        this.thread = Thread.ofPlatform().name("rnicsim-engine").daemon().unstarted(this::run);
    }

    void start()
    {
        thread.start();
    }

    private void run()
    {
        lock.lock();
        try
        {
            while (!stopping)
            {
                final int moved;
                try
                {
                    moved = fabric.engine().progress(1);
                }
                catch (final RuntimeException e)
                {
                    failure = e;
                    stopping = true;
                    progressed.signalAll();
                    return;
                }
                progressed.signalAll();
                if (moved == 0)
                {
                    work.awaitUninterruptibly();
                }
                else
                {
                    packets++;
                    if (lock.hasQueuedThreads())
                    {
                        // A fair lock hands itself to the longest-waiting program thread first.
                        lock.unlock();
                        lock.lock();
                    }
                }
            }
        }
        finally
        {
            lock.unlock();
        }
    }

    /** A verb starts: holds the engine off until {@link #exit()}. */
    void enter()
    {
        lock.lock();
    }

    /** A verb ends: the engine may have work now, and pollers may have completions. */
    void exit()
    {
        work.signal();
        progressed.signalAll();
        lock.unlock();
    }

    /**
     * Called with the lock held (between {@link #enter()} and {@link #exit()}): waits until {@code done} holds or
     * the engine has nothing left to do, the engine thread moving packets meanwhile.
     */
    void awaitUntil(final BooleanSupplier done)
    {
        while (!done.getAsBoolean() && !fabric.engine().idle())
        {
            if (failure != null)
            {
                throw new IllegalStateException("the engine thread stopped on a fault of the simulator", failure);
            }
            work.signal();
            progressed.awaitUninterruptibly();
        }
    }

    /**
     * Runs code that must not interleave with the engine (reading the simulated memory while a message lands,
     * registering, allocating): the engine thread waits while it runs.
     *
     * @param body the code.
     * @param <T>  what it returns.
     * @return what it returned.
     */
    public <T> T exclusive(final Supplier<T> body)
    {
        enter();
        try
        {
            return body.get();
        }
        finally
        {
            exit();
        }
    }

    /**
     * @param t a thread.
     * @return true when {@code t} waits for the engine's lock (a verb called from it is held off by the engine or by
     * {@link #exclusive}).
     */
    boolean hasQueuedThread(final Thread t)
    {
        return lock.hasQueuedThread(t);
    }

    /**
     * @return packets the engine thread moved so far.
     */
    public long packetsMoved()
    {
        lock.lock();
        try
        {
            return packets;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Stops the thread after the packet it is moving; the fabric goes back to the deterministic mode (poll and
     * progress drive the engine). What is still in flight stays in flight.
     *
     * @throws IllegalStateException when the engine thread had stopped on a fault of the simulator (the fault is the
     *                               cause).
     */
    @Override
    public void close()
    {
        lock.lock();
        try
        {
            stopping = true;
            work.signal();
        }
        finally
        {
            lock.unlock();
        }
        boolean interrupted = false;
        while (thread.isAlive())
        {
            try
            {
                thread.join();
            }
            catch (final InterruptedException e)
            {
                interrupted = true;
            }
        }
        fabric.engineThreadStopped(this);
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
        if (failure != null)
        {
            throw new IllegalStateException("the engine thread stopped on a fault of the simulator", failure);
        }
    }
}
