package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The state {@link VerbsActions} act on: a {@link TestNic} with strict mode attached, and the record of what the
 * actions did so far, by the names their script lines use: buffers mapped in the responder's process
 * ({@code buf0}, {@code buf1}, ...), MRs registered over them ({@code mr0}, ...) and every key ever issued. A
 * source buffer {@code src} of {@link #sourceBytes()} bytes, registered LOCAL_WRITE on side A, is what WRITEs send
 * from and READs land in.
 *
 * <p>Actions name what they use, so that a shrunk chain still reads as a script; when the thing named is gone in a
 * shrunk run (its mmap or reg was shrunk away), the action does nothing. Users' own actions keep their objects
 * (a registration cache, say) with {@link #attachment}, which {@link #close()} closes first.
 *
 * <p>Not thread safe.
 */
public final class VerbsState implements AutoCloseable
{
    /** The default of {@link #maxBufferBytes()}: 256 KiB. */
    public static final long DEFAULT_MAX_BUFFER_BYTES = 256L << 10;

    /**
     * A buffer mapped by an action.
     *
     * @param name        its name in script lines.
     * @param side        whose process.
     * @param addr        its first byte.
     * @param lengthBytes its length as asked for (mapped rounded up to 4 KiB).
     * @param mapped      false after a munmap (until it is mapped again at the same address).
     */
    public record Buffer(String name, Side side, long addr, long lengthBytes, boolean mapped)
    {
        /**
         * @return the length mapped: whole 4 KiB pages.
         */
        public long mappedBytes()
        {
            return (lengthBytes + 4095) & ~4095L;
        }

        Buffer withMapped(final boolean value)
        {
            return new Buffer(name, side, addr, lengthBytes, value);
        }
    }

    /**
     * An MR registered by an action.
     *
     * @param name        its name in script lines.
     * @param buffer      the name of the buffer it was registered over.
     * @param mr          the MR.
     * @param addr        its first byte.
     * @param lengthBytes its length.
     * @param lkey        its lkey (kept after deregistration: stale keys are used by name).
     * @param rkey        its rkey.
     * @param access      its rights.
     */
    public record Mr(String name, String buffer, MemoryRegion mr, long addr, long lengthBytes, int lkey, int rkey,
        Set<Access> access)
    {
        /**
         * @return true while registered.
         */
        public boolean live()
        {
            return !mr.isClosed();
        }
    }

    private final TestNic nic;
    private final StrictMode strict;
    private final long maxBufferBytes;
    private final long srcAddr;
    private final MemoryRegion src;
    private final Map<String, Buffer> buffers = new LinkedHashMap<>();
    private final Map<String, Mr> mrs = new LinkedHashMap<>();
    private final Map<Class<?>, Object> attachments = new LinkedHashMap<>();
    private final List<String> log = new ArrayList<>();
    private int buffersNamed;
    private int mrsNamed;
    private int childrenNamed;
    private boolean closed;

    /** The state last created on each thread: the one whose chain is being generated. */
    private static final ThreadLocal<VerbsState> GENERATING = new ThreadLocal<>();

    private VerbsState(final TestNic nic, final long maxBufferBytes)
    {
        this.nic = nic;
        this.maxBufferBytes = maxBufferBytes;
        this.strict = nic.strict();
        GENERATING.set(this);
        srcAddr = nic.alloc(Side.A, maxBufferBytes);
        src = nic.reg(Side.A, srcAddr, maxBufferBytes, Access.LOCAL_WRITE);
    }

    /**
     * @return a state on two {@code connectx5} hosts with LEGACY fork (so that {@link VerbsActions#fork()} shows
     * the copy-on-write case), buffers up to {@value #DEFAULT_MAX_BUFFER_BYTES} bytes.
     */
    public static VerbsState create()
    {
        return create(TestNic.builder().forkBehaviour(ForkBehaviour.LEGACY), DEFAULT_MAX_BUFFER_BYTES);
    }

    /**
     * @param nic            the fixture's settings.
     * @param maxBufferBytes the largest buffer {@link VerbsActions#mmap()} maps (and the size of {@code src}), at
     *                       least 4096 and at most 64 MiB.
     * @return a new state, with strict mode attached.
     * @throws IllegalArgumentException for a bad maximum.
     */
    public static VerbsState create(final TestNic.Builder nic, final long maxBufferBytes)
    {
        if (maxBufferBytes < 4096 || maxBufferBytes > 64L << 20)
        {
            throw new IllegalArgumentException("maxBufferBytes=" + maxBufferBytes + " must be 4 KiB to 64 MiB");
        }
        return new VerbsState(nic.start(), maxBufferBytes);
    }

    /**
     * @return the state last created on this thread and not closed yet: the state of the chain jqwik is generating
     * steps for (a chain creates its state first, then generates each step just before running it), or null.
     */
    public static VerbsState generating()
    {
        return GENERATING.get();
    }

    /**
     * @return the fixture.
     */
    public TestNic nic()
    {
        return nic;
    }

    /**
     * @return the strict mode watching both devices.
     */
    public StrictMode strict()
    {
        return strict;
    }

    /**
     * @throws AssertionError when strict mode saw a violation (its report, after the script lines run so far).
     */
    public void assertClean()
    {
        strict.assertClean();
    }

    /**
     * @return the largest buffer mapped, in bytes.
     */
    public long maxBufferBytes()
    {
        return maxBufferBytes;
    }

    /**
     * @return bytes of the source buffer {@code src} on side A.
     */
    public long sourceBytes()
    {
        return maxBufferBytes;
    }

    /**
     * @return {@code src}: the LOCAL_WRITE MR on side A that WRITEs send from and READs land in.
     */
    public MemoryRegion source()
    {
        return src;
    }

    /**
     * @return the buffers, in the order they were mapped.
     */
    public List<Buffer> buffers()
    {
        return List.copyOf(buffers.values());
    }

    /**
     * @param name a buffer's name.
     * @return the buffer, or null when no action mapped it in this run.
     */
    public Buffer buffer(final String name)
    {
        return buffers.get(name);
    }

    /**
     * @return the names of buffers mapped now.
     */
    public List<String> mappedBuffers()
    {
        return buffers.values().stream().filter(Buffer::mapped).map(Buffer::name).toList();
    }

    /**
     * @return the names of buffers unmapped now.
     */
    public List<String> unmappedBuffers()
    {
        return buffers.values().stream().filter(b -> !b.mapped()).map(Buffer::name).toList();
    }

    /**
     * @return every MR the actions registered, live or not, in order.
     */
    public List<Mr> mrs()
    {
        return List.copyOf(mrs.values());
    }

    /**
     * @param name an MR's name.
     * @return the MR, or null when no action registered it in this run.
     */
    public Mr mr(final String name)
    {
        return mrs.get(name);
    }

    /**
     * @return the names of MRs registered now.
     */
    public List<String> liveMrs()
    {
        return mrs.values().stream().filter(Mr::live).map(Mr::name).toList();
    }

    /**
     * @param right a right.
     * @return the names of live MRs with that right.
     */
    public List<String> liveMrsWith(final Access right)
    {
        return mrs.values().stream().filter(m -> m.live() && m.access().contains(right)).map(Mr::name).toList();
    }

    /**
     * @return every lkey and rkey ever issued to the actions' MRs (stale ones included), in order.
     */
    public List<Integer> issuedKeys()
    {
        final Set<Integer> keys = new LinkedHashSet<>();
        for (final Mr m : mrs.values())
        {
            keys.add(m.lkey());
            keys.add(m.rkey());
        }
        return List.copyOf(keys);
    }

    /**
     * @return the script lines the actions ran, each followed by its outcome where it was not plain success.
     */
    public List<String> log()
    {
        return Collections.unmodifiableList(log);
    }

    /**
     * Returns the object of a type kept with this state, making it on first use: how users' own actions keep
     * their code under test (a registration cache, a pool). An AutoCloseable attachment is closed by
     * {@link #close()}, before the MRs and the fixture.
     *
     * @param type    the key.
     * @param factory makes it, given nothing (capture the state if it needs it).
     * @param <T>     its type.
     * @return the attachment.
     */
    public <T> T attachment(final Class<T> type, final Supplier<? extends T> factory)
    {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(factory, "factory");
        return type.cast(attachments.computeIfAbsent(type, k -> Objects.requireNonNull(factory.get(), "factory")));
    }

    /**
     * @param type the key.
     * @param <T>  its type.
     * @return the attachment of that type, or null.
     */
    public <T> T attachment(final Class<T> type)
    {
        return type.cast(attachments.get(type));
    }

    // ------------------------------------------------------------------ what actions call

    /**
     * Records a script line (with its outcome) in {@link #log()}.
     *
     * @param line the line.
     */
    public void record(final String line)
    {
        log.add(line);
    }

    /**
     * @return the name the next {@link #addBuffer} should use ({@code buf0}, {@code buf1}, ...).
     */
    public String nextBufferName()
    {
        return "buf" + buffersNamed;
    }

    /**
     * @return the name the next {@link #addMr} should use.
     */
    public String nextMrName()
    {
        return "mr" + mrsNamed;
    }

    /**
     * @return the name of the next forked child.
     */
    public String nextChildName()
    {
        return "child" + childrenNamed;
    }

    void childForked()
    {
        childrenNamed++;
    }

    void mrNamed()
    {
        mrsNamed++;
    }

    /**
     * @param buffer a buffer just mapped.
     */
    public void addBuffer(final Buffer buffer)
    {
        buffers.put(buffer.name(), buffer);
        buffersNamed++;
    }

    /**
     * @param name   a buffer's name.
     * @param mapped whether it is mapped now.
     */
    public void setMapped(final String name, final boolean mapped)
    {
        final Buffer b = buffers.get(name);
        if (b != null)
        {
            buffers.put(name, b.withMapped(mapped));
        }
    }

    /**
     * @param mr an MR just registered.
     */
    public void addMr(final Mr mr)
    {
        mrs.put(mr.name(), mr);
    }

    // ------------------------------------------------------------------ life cycle

    /**
     * Closes the attachments, deregisters the live MRs the actions registered and {@code src}, then closes the
     * fixture; idempotent.
     *
     * @throws AssertionError with strict mode's violations (a leak found as the contexts close included), after
     *                        the script lines run.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        forget();
        try
        {
            releaseAll();
            nic.close();
        }
        catch (final AssertionError e)
        {
            throw new AssertionError("after:\n    " + String.join("\n    ", log) + "\n" + e.getMessage(), e);
        }
    }

    /**
     * Closes like {@link #close()} but throws nothing: after a failure already reported.
     */
    public void closeQuietly()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        forget();
        try
        {
            releaseAll();
        }
        catch (final RuntimeException ignored)
        {
            // already failing
        }
        try
        {
            nic.close();
        }
        catch (final RuntimeException | AssertionError ignored)
        {
            // already failing
        }
    }

    private void forget()
    {
        if (GENERATING.get() == this)
        {
            GENERATING.remove();
        }
    }

    private void releaseAll()
    {
        final List<Object> list = new ArrayList<>(attachments.values());
        Collections.reverse(list);
        for (final Object o : list)
        {
            if (o instanceof AutoCloseable c)
            {
                try
                {
                    c.close();
                }
                catch (final RuntimeException e)
                {
                    throw e;
                }
                catch (final Exception e)
                {
                    throw new IllegalStateException("closing " + o + ": " + e, e);
                }
            }
        }
        for (final Mr m : mrs.values())
        {
            m.mr().close();
        }
        src.close();
    }

    /**
     * @return true once closed.
     */
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public String toString()
    {
        final StringBuilder sb = new StringBuilder("VerbsState[");
        sb.append(buffers.size()).append(" buffers (").append(mappedBuffers().size()).append(" mapped), ")
            .append(mrs.size()).append(" MRs (").append(liveMrs().size()).append(" live), ")
            .append(strict.violations().size()).append(" violations, ").append(nic.reconnects())
            .append(" reconnects]");
        return sb.toString();
    }

    static Set<Access> copy(final Set<Access> s)
    {
        return s.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(s);
    }
}
