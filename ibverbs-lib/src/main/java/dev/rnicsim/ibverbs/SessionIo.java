package dev.rnicsim.ibverbs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * The socket of one connected process, in non-blocking mode: the server never waits for a process to read. What the
 * fabric's thread writes (answers, completions, reports, under the fabric's lock) goes out as far as the socket takes
 * it at once; what it does not take waits in a backlog, in order, and the session's own thread writes it as the
 * process reads, while it waits for the process's next request. So a process that is slow to read (it computes, or it
 * is stopped in a debugger) holds up only itself, never the lock and the other processes of the fabric.
 *
 * <p>Thread safety: {@link #read} is called by the session's thread only; {@link #write} by any thread (under the
 * fabric's lock); the backlog has a lock of its own.
 */
final class SessionIo implements AutoCloseable
{
    private final SocketChannel channel;
    private final Selector selector;
    private final SelectionKey key;
    private final Object writeLock = new Object();
    /** Bytes not yet taken by the socket, in write mode (position: how many). */
    private ByteBuffer backlog = ByteBuffer.allocateDirect(1 << 16).order(ByteOrder.LITTLE_ENDIAN);

    SessionIo(final SocketChannel channel) throws IOException
    {
        this.channel = channel;
        channel.configureBlocking(false);
        this.selector = Selector.open();
        this.key = channel.register(selector, SelectionKey.OP_READ);
    }

    /**
     * Reads what the process sent, waiting until something arrives; meanwhile writes the backlog as the socket takes it.
     *
     * @param in where to read to (with room left).
     * @return bytes read, or -1 when the process closed its end.
     * @throws IOException when the socket fails or is closed.
     */
    int read(final ByteBuffer in) throws IOException
    {
        try
        {
            while (true)
            {
                final int n = channel.read(in);
                if (n != 0 || !in.hasRemaining())
                {
                    return n;
                }
                selector.select();
                selector.selectedKeys().clear();
                drainBacklog();
            }
        }
        catch (final ClosedSelectorException e)
        {
            throw new IOException("the connection is closed", e);
        }
    }

    /**
     * Writes the bytes from {@code out}'s position to its limit without waiting: what the socket does not take now is
     * kept and written by the session's thread, after what was kept before.
     *
     * @throws IOException when the socket fails (the process has gone).
     */
    void write(final ByteBuffer out) throws IOException
    {
        synchronized (writeLock)
        {
            if (backlog.position() == 0)
            {
                channel.write(out);
                if (!out.hasRemaining())
                {
                    return;
                }
            }
            if (backlog.remaining() < out.remaining())
            {
                int cap = backlog.capacity() * 2;
                while (cap - backlog.position() < out.remaining())
                {
                    cap *= 2;
                }
                final ByteBuffer bigger = ByteBuffer.allocateDirect(cap).order(ByteOrder.LITTLE_ENDIAN);
                backlog.flip();
                bigger.put(backlog);
                backlog = bigger;
            }
            backlog.put(out);
            try
            {
                key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                selector.wakeup();
            }
            catch (final java.nio.channels.CancelledKeyException | ClosedSelectorException e)
            {
                throw new IOException("the connection is closed", e);
            }
        }
    }

    private void drainBacklog() throws IOException
    {
        synchronized (writeLock)
        {
            if (backlog.position() == 0)
            {
                return;
            }
            backlog.flip();
            channel.write(backlog);
            backlog.compact();
            if (backlog.position() == 0)
            {
                key.interestOps(SelectionKey.OP_READ);
            }
        }
    }

    @Override
    public void close() throws IOException
    {
        try
        {
            channel.close();
        }
        finally
        {
            selector.close();
        }
    }
}
