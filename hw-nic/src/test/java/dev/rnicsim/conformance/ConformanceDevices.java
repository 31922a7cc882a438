package dev.rnicsim.conformance;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.hwnic.RdmaVerbsProvider;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.Verbs;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;

/**
 * The devices the conformance suite runs on: every simulated device ({@code sim:*}) and every rdma-core device
 * present ({@code rdma:*}), all found through {@link Verbs#devices()}. When there is no rdma-core device, one
 * placeholder name stands for them, and each case run on it is skipped with the reason rdma-core gives (library
 * missing, no kernel support, no device). This is the only class of the suite that knows a backend, and only to
 * word that reason.
 */
final class ConformanceDevices
{
    /**
     * System property: a prefix of the device names to run on (ibverbs-conformance sets {@code rdma:}, where
     * hw-nic's own run covers the {@code sim:} devices); unset, every device.
     */
    static final String ONLY_PROPERTY = "rnicsim.conformance.devices";

    /** The placeholder for "every rdma-core device" when there is none. */
    static final String NO_RDMA_DEVICE = "rdma: (none present)";

    private ConformanceDevices()
    {
    }

    /**
     * @return the names to run each case on.
     */
    static List<String> names()
    {
        final List<String> sim = new ArrayList<>();
        final List<String> rdma = new ArrayList<>();
        for (final Device d : Verbs.devices())
        {
            (d.name().startsWith(RdmaVerbsProvider.PREFIX) ? rdma : sim).add(d.name());
        }
        final List<String> all = new ArrayList<>(sim);
        if (rdma.isEmpty())
        {
            all.add(NO_RDMA_DEVICE);
        }
        else
        {
            all.addAll(rdma);
        }
        final String only = System.getProperty(ONLY_PROPERTY, "");
        all.removeIf(n -> !n.startsWith(only));
        return all;
    }

    /**
     * @param name a name from {@link #names()}.
     * @return the device; the case is skipped (with rdma-core's reason) for the placeholder.
     */
    static Device device(final String name)
    {
        if (name.equals(NO_RDMA_DEVICE))
        {
            String reason;
            try
            {
                reason = "rdma-core lists the devices " + new RdmaVerbsProvider().listDevices() + " but Verbs does not";
            }
            catch (final VerbsException e)
            {
                reason = e.getMessage();
            }
            assumeTrue(false, "no rdma-core device to run the conformance suite on: " + reason);
        }
        return Verbs.device(name);
    }
}
