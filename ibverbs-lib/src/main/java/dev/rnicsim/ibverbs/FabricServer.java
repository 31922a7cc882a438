package dev.rnicsim.ibverbs;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One simulated fabric served to real processes: the C library ({@code libibverbs.so.1} of this module) in each
 * process connects to its Unix socket, and every verb it is asked becomes a call on the simulated devices of one
 * simulated host, which check it with the rules of the real stack; the bytes RDMA moves are the real processes'
 * own ({@link ProcessMemory}). Two programs connected to one server reach each other as two processes on one host
 * with its devices (a server and a client of {@code ibv_rc_pingpong}).
 *
 * <p>Thread safety: a thread per connection reads its requests; the simulation runs under one lock (the model is
 * single-threaded), and answers and completions are written under that lock too, so each connection sees them in
 * the order they happened.
 */
public final class FabricServer implements AutoCloseable
{
    /**
     * A device to plug into the fabric's host.
     *
     * @param hcaId   the name programs see ({@code ibv_get_device_name}), e.g. {@code mlx5_0}.
     * @param profile        what kind of device.
     * @param netdevMtuBytes the MTU of the netdev its Ethernet port sits on ({@code rnicsim exec --netdev-mtu}).
     * @param ipv4           the netdev's IPv4 address, or null ({@code rnicsim exec --ipv4}).
     */
    public record DeviceSpec(String hcaId, DeviceProfile profile, int netdevMtuBytes, String ipv4)
    {
        /**
         * @throws NullPointerException when hcaId or profile is null.
         */
        public DeviceSpec
        {
            Objects.requireNonNull(hcaId, "hcaId");
            Objects.requireNonNull(profile, "profile");
        }

        /**
         * A device on a netdev of the profile's MTU (1500 bytes, or what a dump's active_mtu tells: {@code
         * DeviceProfile.netdevMtuBytes}) without an IPv4 address.
         *
         * @param hcaId   the device's name.
         * @param profile its profile.
         */
        public DeviceSpec(final String hcaId, final DeviceProfile profile)
        {
            this(hcaId, profile, Objects.requireNonNull(profile, "profile").netdevMtuBytes(), null);
        }
    }

    final Object lock = new Object();
    final SimFabric fabric = new SimFabric();
    final SimHost host;
    final List<SimDevice> devices = new ArrayList<>();
    final List<String> hcaIds = new ArrayList<>();
    final ProcessMemory memory = new ProcessMemory();
    final Completions completions = new Completions(this);
    /** QPs by device index (high 32 bits) and QP number, so a requester finds its responder. */
    final Map<Long, Session.QpInfo> qps = new HashMap<>();
    /** Live MRs by device index (high 32 bits) and key, to turn an iova into the process's address. */
    final Map<Long, Session.MrInfo> mrs = new HashMap<>();
    /** What the processes' XRC objects share (the files naming domains, the CQs of XRC SRQs). */
    final XrcVerbs.Fabric xrc = new XrcVerbs.Fabric();
    /** The memory windows of every process, to turn a window's rkey and iova into its MR's address. */
    final WindowTranslation windows = new WindowTranslation();
    /** The model's strict checks (recycled keys that validate elsewhere, DMA to frames no longer mapped, hot-path
     * registration), attached when the first process in strict mode connects. */
    private dev.rnicsim.simnic.StrictChecker checker;
    /** Compiles the data path while the fabric waits for its first work request (RNICSIM_FABRIC_WARMUP=0: not). */
    final FabricWarmUp warmUp;
    /** The warm-up's thread, or null when it is off. */
    final Thread warmUpThread;
    /** Polls the processes' doorbell rings after work, so a doorbell needs no wake-up ({@link DoorbellPoller}). */
    final DoorbellPoller doorbellPoller = new DoorbellPoller(lock);
    private final Path socketPath;
    private final ServerSocketChannel server;
    private final PrintStream log;
    private final List<Session> sessions = new ArrayList<>();
    private final Thread acceptor;
    private volatile boolean closed;
    private int everConnected;

    private FabricServer(final Path socketPath, final List<DeviceSpec> specs, final PrintStream log,
        final boolean warm) throws IOException
    {
        this.socketPath = socketPath;
        this.log = log;
        this.host = fabric.addHost("host", HostConfig.builder().build());
        // the real bytes move between the real processes (ProcessMemory) after the model's verdict: the model checks,
        // counts and prices every packet and chunk, and copies no byte of its own
        host.host().physicalMemory().bytesElsewhere(true);
        for (final DeviceSpec s : specs)
        {
            final SimDevice d = host.addDevice("sim:host/" + s.hcaId(), s.profile());
            d.netdev().mtuBytes(s.netdevMtuBytes()).ipv4(s.ipv4());
            devices.add(d);
            hcaIds.add(s.hcaId());
        }
        warmUp = new FabricWarmUp(specs.get(0), log);
        warmUpThread = !warm || "0".equals(System.getenv("RNICSIM_FABRIC_WARMUP")) ? null
            : Thread.ofPlatform().daemon().name("rnicsim-fabric-warm-up").start(warmUp);
        Files.deleteIfExists(socketPath);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socketPath));
        acceptor = Thread.ofPlatform().daemon().name("rnicsim-fabric-accept").start(this::acceptLoop);
    }

    /**
     * Starts serving a new fabric.
     *
     * @param socketPath where to listen (replaced if a file is there).
     * @param devices    the devices of the fabric's host, at least one.
     * @param log        where the server reports what it cannot tell a program (a post the device refused after
     *                   the verb returned, a connection lost).
     * @return the running server.
     * @throws IOException              when the socket cannot be bound.
     * @throws IllegalArgumentException when no device is given.
     */
    public static FabricServer start(final Path socketPath, final List<DeviceSpec> devices, final PrintStream log)
        throws IOException
    {
        if (devices.isEmpty())
        {
            throw new IllegalArgumentException("a fabric needs at least one device");
        }
        return new FabricServer(socketPath, devices, log, true);
    }

    /** A server of a fabric of the warm-up's own ({@link ProgramWarmUp}): as {@link #start}, with no warm-up. */
    static FabricServer startPrivate(final Path socketPath, final List<DeviceSpec> devices, final PrintStream log)
        throws IOException
    {
        return new FabricServer(socketPath, devices, log, false);
    }

    /**
     * @return the socket programs connect to (the library reads it from {@code RNICSIM_FABRIC_SOCKET}).
     */
    public Path socketPath()
    {
        return socketPath;
    }

    /**
     * @return the simulated fabric (read it under no other thread's feet: after the programs have finished).
     */
    public SimFabric fabric()
    {
        return fabric;
    }

    /**
     * @return connections open now.
     */
    public int connections()
    {
        synchronized (lock)
        {
            return sessions.size();
        }
    }

    /**
     * @return connections ever accepted.
     */
    public int connectionsEver()
    {
        synchronized (lock)
        {
            return everConnected;
        }
    }

    private void acceptLoop()
    {
        while (!closed)
        {
            try
            {
                final SocketChannel ch = server.accept();
                final Session s = new Session(this, ch);
                synchronized (lock)
                {
                    sessions.add(s);
                    everConnected++;
                }
                Thread.ofPlatform().daemon().name("rnicsim-fabric-conn").start(s::run);
            }
            catch (final IOException e)
            {
                if (!closed)
                {
                    log.println("rnicsim: fabric server: " + e.getMessage());
                }
                return;
            }
        }
    }

    /** Attaches the model's strict checks to every device (once). */
    void strictChecks()
    {
        if (checker == null)
        {
            // stale keys and leaks are reported with the completion and at exit; these are the rest
            checker = new dev.rnicsim.simnic.StrictChecker(false).disable(
                dev.rnicsim.simnic.StrictWarning.Kind.STALE_LKEY, dev.rnicsim.simnic.StrictWarning.Kind.STALE_RKEY,
                dev.rnicsim.simnic.StrictWarning.Kind.LEAKED_MR, dev.rnicsim.simnic.StrictWarning.Kind.UNUSED_MR);
            for (final SimDevice d : devices)
            {
                checker.attach(d);
            }
        }
    }

    /** Passes the strict checker's new warnings to every process in strict mode (under the lock). */
    void forwardStrictWarnings()
    {
        if (checker == null || checker.warnings().isEmpty())
        {
            return;
        }
        for (final dev.rnicsim.simnic.StrictWarning w : checker.warnings())
        {
            for (final Session s : sessions)
            {
                if (s.strict)
                {
                    s.sendText("rnicsim strict: " + w.kind() + ": " + w.message() + System.lineSeparator());
                }
            }
        }
        checker.clear();
        for (final Session s : sessions)
        {
            s.flush();
        }
    }

    void ended(final Session s)
    {
        synchronized (lock)
        {
            sessions.remove(s);
            lock.notifyAll();
        }
    }

    /**
     * Waits until no program is connected.
     *
     * @throws InterruptedException when interrupted.
     */
    public void awaitNoConnections() throws InterruptedException
    {
        synchronized (lock)
        {
            while (!sessions.isEmpty())
            {
                lock.wait();
            }
        }
    }

    void report(final String text)
    {
        log.println(text);
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return; // idempotent: the socket may be another fabric's by now
        }
        closed = true;
        warmUp.stop();
        try
        {
            server.close();
            Files.deleteIfExists(socketPath);
        }
        catch (final IOException e)
        {
            log.println("rnicsim: fabric server: " + e.getMessage());
        }
        final List<Session> open;
        synchronized (lock)
        {
            open = new ArrayList<>(sessions);
        }
        for (final Session s : open)
        {
            s.closeChannel();
        }
        acceptor.interrupt();
    }
}
