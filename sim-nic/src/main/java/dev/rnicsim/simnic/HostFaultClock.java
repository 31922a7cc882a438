package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.VmEvent;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Prices the host page faults a piece of work takes: a CPU's first touch of a page (the fault and the zeroing of the
 * page), a copy-on-write break, a swap-in, and the fault-in that {@code pin_user_pages} does for pages the process
 * never touched ({@code FOLL_TOUCH}/{@code faultin_page} in mm/gup.c), so a cold registration costs more than a warm
 * one. It reads the host's {@code pgfault} and {@code pgmajfault} counters around the work and advances the fabric's
 * clock by {@link CostModel#hostFaultsNs}. Not thread safe (as the model).
 */
final class HostFaultClock
{
    private final Host host;
    private final long minorBefore;
    private final long majorBefore;

    private HostFaultClock(final Host host)
    {
        this.host = host;
        this.majorBefore = host.counter(VmEvent.PGMAJFAULT);
        this.minorBefore = host.counter(VmEvent.PGFAULT) - majorBefore;
    }

    /** Starts counting the faults of {@code host}. */
    static HostFaultClock start(final Host host)
    {
        return new HostFaultClock(host);
    }

    /** @return minor faults (page allocated and zeroed, or copied) since the start. */
    long minorFaults()
    {
        return host.counter(VmEvent.PGFAULT) - host.counter(VmEvent.PGMAJFAULT) - minorBefore;
    }

    /** @return major faults (page read from swap) since the start. */
    long majorFaults()
    {
        return host.counter(VmEvent.PGMAJFAULT) - majorBefore;
    }

    /** @return the simulated time of the faults since the start. */
    long faultsNs(final CostModel cost)
    {
        return cost.hostFaultsNs(minorFaults(), majorFaults());
    }

    /**
     * Runs CPU work of a process ({@code what}: "touch", "write", "read") and advances the clock by the faults it
     * took, with a "cpu_fault" span when there were any.
     */
    static <T> T cpu(final SimFabric fabric, final Host host, final String hostName, final String what,
        final Supplier<T> work)
    {
        final HostFaultClock c = start(host);
        final T result = work.get();
        final long ns = c.faultsNs(fabric.costModel());
        if (ns > 0)
        {
            fabric.cpuSpan(hostName, what, ns, Map.of("minor_faults", c.minorFaults(), "major_faults",
                c.majorFaults()));
        }
        return result;
    }
}
