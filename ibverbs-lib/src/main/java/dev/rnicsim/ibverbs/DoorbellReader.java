package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * How a session's thread waits for the next doorbell: it reads what has arrived; when nothing has, it polls the
 * socket again until {@link #SPIN_NS} after its last read, yielding the core between polls, then sleeps until the
 * socket is readable. A program answering a completion rings twice in a row (ibv_post_recv, then ibv_post_send):
 * the short spin takes the second doorbell without the thread being put to sleep and woken again. Longer spins
 * shorten a ping-pong's typical round trip further but lengthen its tail on a loaded machine (measured with
 * perftest: docs/c-programs.md, "Speed"). Once the doorbells come through shared memory ({@link DoorbellRing}) the
 * socket carries only kicks: {@link #sleepUntilKicked()}, and the same spin for the fabric's poller
 * ({@link DoorbellPoller}).
 *
 * <p>Not thread safe: used by the session's own thread; {@link #close()} may come from any thread.
 */
final class DoorbellReader implements AutoCloseable
{
    /** How long a session polls its socket, or the fabric's poller the doorbell rings, before it sleeps:
     * {@code RNICSIM_FABRIC_SPIN_NS} in the environment of the run that starts the fabric, 10 µs when unset (0: sleep
     * at once). */
    static final long SPIN_NS = spinNs(System.getenv("RNICSIM_FABRIC_SPIN_NS"));

    private final SocketChannel channel;
    private final Selector selector;
    private final ByteBuffer kicks = ByteBuffer.allocateDirect(256);

    DoorbellReader(final SocketChannel channel) throws IOException
    {
        this.channel = channel;
        if (SPIN_NS > 0)
        {
            channel.configureBlocking(false);
            this.selector = Selector.open();
            channel.register(selector, SelectionKey.OP_READ);
        }
        else
        {
            this.selector = null; // a blocking read sleeps at once
        }
    }

    /**
     * @param in where the bytes go (with room left).
     * @return bytes read, at least 1; -1 at the end of the stream or once closed.
     * @throws IOException when the socket fails.
     */
    int read(final ByteBuffer in) throws IOException
    {
        if (selector == null)
        {
            return channel.read(in);
        }
        final long until = System.nanoTime() + SPIN_NS;
        try
        {
            while (true)
            {
                final int n = channel.read(in);
                if (n != 0)
                {
                    return n;
                }
                if (System.nanoTime() < until)
                {
                    Thread.yield();
                    continue;
                }
                selector.select();
                selector.selectedKeys().clear();
            }
        }
        catch (final ClosedSelectorException e)
        {
            return -1;
        }
    }

    /**
     * Once the doorbells come through shared memory ({@link DoorbellRing}): sleeps until the process kicks the socket
     * (or closes it), and drops the kicks.
     *
     * @return false at the end of the stream or once closed.
     * @throws IOException when the socket fails.
     */
    boolean sleepUntilKicked() throws IOException
    {
        kicks.clear();
        if (selector == null)
        {
            return channel.read(kicks) >= 0; // blocks until a kick
        }
        try
        {
            while (true)
            {
                final int n = channel.read(kicks);
                if (n < 0)
                {
                    return false;
                }
                if (n > 0)
                {
                    return true;
                }
                selector.select();
                selector.selectedKeys().clear();
            }
        }
        catch (final ClosedSelectorException e)
        {
            return false;
        }
    }

    /**
     * Whether the process has closed the socket, without waiting (the kicks read meanwhile are dropped).
     *
     * @return true at the end of the stream, once closed, or when the socket fails (its thread then finds out).
     */
    boolean endOfStream()
    {
        if (selector == null)
        {
            return false; // a blocking socket: its end is seen when the thread sleeps on it
        }
        try
        {
            int n;
            do
            {
                kicks.clear();
                n = channel.read(kicks);
            }
            while (n > 0);
            return n < 0;
        }
        catch (final IOException e)
        {
            return true;
        }
    }

    /**
     * @param setting the environment's value, or null.
     * @return the spin in nanoseconds: the setting, or 10 µs when it is unset or not a whole number (said on stderr).
     */
    static long spinNs(final String setting)
    {
        if (setting == null || setting.isBlank())
        {
            return 10_000;
        }
        try
        {
            return Math.max(0, Long.parseLong(setting.trim()));
        }
        catch (final NumberFormatException e)
        {
            System.err.println("rnicsim: RNICSIM_FABRIC_SPIN_NS is '" + setting + "', not a whole number of "
                + "nanoseconds: the fabric polls 10000 ns before it sleeps (0 sleeps at once)");
            return 10_000;
        }
    }

    @Override
    public void close()
    {
        try
        {
            if (selector != null)
            {
                selector.close();
            }
        }
        catch (final IOException e)
        {
            // closing an epoll descriptor
        }
    }
}
