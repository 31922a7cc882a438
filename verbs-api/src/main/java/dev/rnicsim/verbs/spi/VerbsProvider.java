package dev.rnicsim.verbs.spi;

import dev.rnicsim.verbs.Device;
import java.util.List;

/**
 * A backend of the verbs API, found with {@link java.util.ServiceLoader}: the simulator ({@code sim}) or rdma-core
 * ({@code rdma}). A provider lists its devices; it must not fail when it has none.
 */
public interface VerbsProvider
{
    /**
     * @return the scheme that prefixes its device names, e.g. {@code sim}.
     */
    String scheme();

    /**
     * @return its devices; empty when none is present.
     */
    List<Device> devices();
}
