package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.verbs.MemoryWindow;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Where the bytes of a request through a memory window go in the target process. A window is bound in its MR's
 * address space, the iova (ibv_bind_mw(3): {@code bind_info.addr} lies within the MR as registered, at its iova for an
 * MR of {@code ibv_reg_mr_iova}); the device translates a window's rkey and address through the MR it is bound to, so
 * the process address is the MR's buffer plus the offset from the MR's iova, as for the MR's own rkey. The model
 * decides whether the access is allowed; this finds the bound MR of a window's current rkey.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class WindowTranslation
{
    private final List<SimMw> windows = new ArrayList<>();

    /** A window allocated by a process. */
    void add(final MemoryWindow mw)
    {
        if (mw instanceof SimMw w)
        {
            windows.add(w);
        }
    }

    /**
     * @return the process address of {@code iova} under a window's rkey on a device; {@code iova} itself when no
     *         live bound window of that device has the key (the model has refused such a request).
     */
    long translate(final FabricServer server, final int deviceIndex, final int rkey, final long iova)
    {
        if (windows.isEmpty())
        {
            return iova;
        }
        for (final Iterator<SimMw> it = windows.iterator(); it.hasNext();)
        {
            final SimMw w = it.next();
            if (w.isClosed())
            {
                it.remove();
                continue;
            }
            final SimMr mr = w.isBound() ? w.boundMr() : null;
            if (mr == null || w.rkey() != rkey || w.pd().context().device() != server.devices.get(deviceIndex))
            {
                continue;
            }
            final Session.MrInfo m = server.mrs.get(Verbs.mrKey(deviceIndex, mr.lkey()));
            return m == null ? iova : m.addr() + (iova - m.iova());
        }
        return iova;
    }
}
