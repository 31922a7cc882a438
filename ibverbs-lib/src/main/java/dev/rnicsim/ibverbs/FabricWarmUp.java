package dev.rnicsim.ibverbs;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Warms the JIT up while a new fabric waits for its programs: on a private simulated fabric of its own (one host with
 * the bytes elsewhere, one device of the served fabric's first profile, two processes), 64 KiB RDMA WRITEs into MRs
 * registered with IBV_ACCESS_RELAXED_ORDERING, up to {@link #MAX_WRITES}, each with the two copies that move a
 * WRITE's real bytes ({@link ProcessMemory}, here between two buffers of this process), and each followed by a small
 * signaled SEND into a posted receive, polled at once at both ends as a latency test does, so that the model's data
 * paths and the copies are compiled before the first work request of a program arrives. (Without the SENDs the JIT
 * compiled the SEND path during the first thousands of round trips of {@code ib_send_lat}: a second of compiler
 * threads' CPU on a 2-core machine where both programs busy-poll; docs/c-programs.md, "Speed".) It stops at that first work
 * request ({@link #stop()}) or the served fabric's end, at its budget of writes or of {@link #MAX_WALL_NS}, whichever
 * comes first. Made with a device (as the fabric server makes it) and with the C library built, it runs instead the
 * library's training program on a private fabric server of its own ({@link ProgramWarmUp}), which drives the same
 * model paths and the server's own path from doorbell to completion as well, for at most {@link #PROGRAM_MAX_WALL_NS}
 * and again only until that first work request. It shares nothing with the served fabric: no counter, key, clock or
 * trace of it changes. {@code RNICSIM_FABRIC_WARMUP=model} asks for the model-only warm-up; {@code RNICSIM_FABRIC_WARMUP=0} in
 * the environment of the run that starts the fabric turns it off.
 *
 * <p>Thread safety: {@link #run()} runs on its own thread; {@link #stop()} may be called from any thread.
 */
final class FabricWarmUp implements Runnable
{
    /** Writes at most: enough for the compiler to see the data path hot (a fraction of a second once compiled). */
    static final int MAX_WRITES = 6000;
    /** Wall-clock budget: a fabric that waits longer for its first post stays as warm as it got. */
    static final long MAX_WALL_NS = 3_000_000_000L;
    private static final int MESSAGE_BYTES = 64 << 10;
    private static final int SIGNAL_EVERY = 16;
    private static final int SMALL_BYTES = 2;

    /** Wall-clock budget of the training program ({@link ProgramWarmUp}). */
    static final long PROGRAM_MAX_WALL_NS = 10_000_000_000L;
    /** The training program's WRITEs, SENDs and READs (about as many WRITEs as the model-only warm-up makes). */
    static final List<String> PROGRAM_ARGUMENTS = List.of("8000", "2000", "4000");

    private final DeviceProfile profile;
    /** The device of the training program's private fabric; null: the model-only warm-up. */
    private final FabricServer.DeviceSpec device;
    private final PrintStream log;
    private volatile boolean stopped;
    private volatile boolean programDone;
    private volatile int writes;
    private volatile int sends;

    /** A warm-up of the model's data path only. */
    FabricWarmUp(final DeviceProfile profile)
    {
        this.profile = profile;
        this.device = null;
        this.log = null;
    }

    /**
     * A warm-up through the training program on that device, or of the model's data path when there is no program.
     *
     * @param device the device of the warm-up's private fabric.
     * @param log    where {@code RNICSIM_FABRIC_STATS} reports how long the program ran.
     */
    FabricWarmUp(final FabricServer.DeviceSpec device, final PrintStream log)
    {
        this.profile = device.profile();
        this.device = device;
        this.log = log;
    }

    /**
     * @return whether the training program ran to its end on the warm-up's private fabric ({@link ProgramWarmUp}).
     */
    boolean programDone()
    {
        return programDone;
    }

    /**
     * @return the WRITEs the warm-up has made so far.
     */
    int writes()
    {
        return writes;
    }

    /**
     * @return the small SENDs the warm-up has made so far (one after each WRITE).
     */
    int sends()
    {
        return sends;
    }

    /** Stops the warm-up (a program's first work request has arrived). */
    void stop()
    {
        stopped = true;
    }

    @Override
    public void run()
    {
        if (device != null && !"model".equals(System.getenv("RNICSIM_FABRIC_WARMUP")) && ProgramWarmUp.available())
        {
            final long start = System.nanoTime();
            programDone = ProgramWarmUp.run(device, PROGRAM_ARGUMENTS, () -> stopped,
                start + PROGRAM_MAX_WALL_NS);
            if (FabricStats.ENABLED && log != null)
            {
                log.println(String.format(java.util.Locale.ROOT, "fabric: warm-up: the training program %s after "
                    + "%.1f ms", programDone ? "ran to its end" : "was ended", (System.nanoTime() - start) / 1e6));
            }
            return;
        }
        runModel();
    }

    private void runModel()
    {
        try (ProcessMemory memory = new ProcessMemory(); Arena arena = Arena.ofConfined())
        {
            final SimFabric fabric = new SimFabric();
            final SimHost host = fabric.addHost("warm-up", HostConfig.builder().build());
            host.host().physicalMemory().bytesElsewhere(true);
            final SimDevice device = host.addDevice("sim:warm-up/dev0", profile);
            final SimContext a = device.open(host.host().spawn("requester").capIpcLock(true));
            final SimContext b = device.open(host.host().spawn("responder").capIpcLock(true));
            final ProtectionDomain pdA = a.allocPd();
            final ProtectionDomain pdB = b.allocPd();
            final CompletionQueue cq = a.createCq(256);
            final QueuePair writer = pdA.createQp(QpInitAttr.rc(cq));
            final CompletionQueue targetCq = b.createCq(256);
            final QueuePair target = pdB.createQp(QpInitAttr.rc(targetCq));
            writer.connect(target.address(), EnumSet.noneOf(Access.class));
            target.connect(writer.address(), EnumSet.of(Access.REMOTE_WRITE));
            final long source = a.memory().allocate(MESSAGE_BYTES, Backing.BASE_PAGES);
            final long dest = b.memory().allocate(MESSAGE_BYTES, Backing.BASE_PAGES);
            final MemoryRegion sourceMr = pdA.regMr(source, MESSAGE_BYTES, EnumSet.of(Access.LOCAL_WRITE,
                Access.RELAXED_ORDERING));
            final MemoryRegion targetMr = pdB.regMr(dest, MESSAGE_BYTES, EnumSet.of(Access.LOCAL_WRITE,
                Access.REMOTE_WRITE, Access.RELAXED_ORDERING));
            final List<Sge> sgl = List.of(new Sge(source, MESSAGE_BYTES, sourceMr.lkey()));
            final List<Sge> smallSend = List.of(new Sge(source, SMALL_BYTES, sourceMr.lkey()));
            final List<Sge> smallRecv = List.of(new Sge(dest, SMALL_BYTES, targetMr.lkey()));
            final long deadline = System.nanoTime() + MAX_WALL_NS;
            // the real bytes' path too: the two copies of a WRITE, here within this process
            final int pid = (int) ProcessHandle.current().pid();
            final MemorySegment buffers = arena.allocate(2L * MESSAGE_BYTES, 4096);
            final List<ProcessMemory.Range> from = List.of(new ProcessMemory.Range(buffers.address(), MESSAGE_BYTES));
            final List<ProcessMemory.Range> to = List.of(new ProcessMemory.Range(buffers.address() + MESSAGE_BYTES,
                MESSAGE_BYTES));
            for (int i = 0; i < MAX_WRITES && !stopped && System.nanoTime() < deadline; i++)
            {
                final boolean signaled = i % SIGNAL_EVERY == SIGNAL_EVERY - 1;
                final Set<SendFlag> flags = signaled ? EnumSet.of(SendFlag.SIGNALED) : EnumSet.noneOf(SendFlag.class);
                writer.postSend(new SendWr(i, WrOpcode.RDMA_WRITE, sgl, flags, dest, targetMr.rkey(), 0, 0, 0, 0));
                if (signaled)
                {
                    fabric.progressAll();
                    cq.poll(SIGNAL_EVERY);
                }
                if (memory.gather(pid, from) == MESSAGE_BYTES)
                {
                    memory.scatter(pid, to);
                }
                writes = i + 1;
                // a latency test's round: a receive posted, a small SEND, both completions polled
                target.postRecv(List.of(new RecvWr(i, smallRecv)));
                writer.postSend(new SendWr(i, WrOpcode.SEND, smallSend, EnumSet.of(SendFlag.SIGNALED), 0, 0, 0, 0, 0,
                    0));
                fabric.progressAll();
                cq.poll(SIGNAL_EVERY);
                targetCq.poll(SIGNAL_EVERY);
                sends = i + 1;
            }
        }
        catch (final RuntimeException e)
        {
            // a profile the warm-up cannot drive (no RC, no relaxed ordering): the fabric starts cold, as it would
        }
    }
}
