package dev.rnicsim.testkit;

import dev.rnicsim.dma.DmaObserver;
import dev.rnicsim.dma.DmaPort;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptEntry;
import dev.rnicsim.mtt.MptState;
import dev.rnicsim.simnic.DeviceObserver;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimMr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The invariant of key retirement, checked on every DMA access the devices make: once {@code ibv_dereg_mr},
 * {@code ibv_dealloc_mw}, a LOCAL_INV or an unbind has returned (or completed), no DMA reads or writes memory
 * through that key ({@code ibv_dereg_mr(3)}; IBA vol. 1 ch. 10.6). The checker looks at the device's own tables as
 * each access happens: the key it went through must name a live MPT entry in the VALID state whose range holds the
 * bytes. A message whose first packet was checked under one registration of a key must not place a later packet
 * under another registration of the same 32-bit key (a key that came back after its variant wrapped): that is a
 * stale key reaching memory it was never checked for, and the report says after how many registrations of the key's
 * index it came back.
 *
 * <p>{@link TestNic} attaches one to both devices; every chain step of {@link VerbsActions} and
 * {@link EngineActions} ends with {@link #assertHeld(String)}. Not thread safe.
 */
public final class DmaInvariant implements DmaObserver, DeviceObserver
{
    /** Most violations kept (the first ones tell the story). */
    private static final int MAX_KEPT = 16;

    private final Map<Object, SimDevice> devicesByTables = new IdentityHashMap<>();
    private final Map<SimDevice, Map<Integer, Integer>> registrationsOfKey = new IdentityHashMap<>();
    private final Map<SimDevice, Map<Long, Integer>> registrationsOfIndex = new IdentityHashMap<>();
    private final Map<Object, Opened> messages = new WeakHashMap<>();
    private final List<String> violations = new ArrayList<>();
    private long accesses;
    private long violationCount;

    private record Opened(SimDevice device, int key, int registration, int indexRegistration)
    {
    }

    private DmaInvariant()
    {
    }

    /**
     * Watches the DMA of the given devices from now on (replacing any DMA observer they had).
     *
     * @param devices the devices.
     * @return the checker.
     */
    public static DmaInvariant attach(final SimDevice... devices)
    {
        final DmaInvariant d = new DmaInvariant();
        for (final SimDevice device : devices)
        {
            d.devicesByTables.put(device.tables(), device);
            d.registrationsOfKey.put(device, new HashMap<>());
            d.registrationsOfIndex.put(device, new HashMap<>());
            device.dmaEngine().observer(d);
            device.addObserver(d);
        }
        return d;
    }

    /**
     * @return DMA accesses checked so far.
     */
    public long accesses()
    {
        return accesses;
    }

    /**
     * @return the violations found so far (the first {@value #MAX_KEPT}), oldest first.
     */
    public List<String> violations()
    {
        return List.copyOf(violations);
    }

    /**
     * @param step what just ran (a script line), named in the failure.
     * @throws AssertionError when a DMA access broke the invariant since the last call.
     */
    public void assertHeld(final String step)
    {
        if (!violations.isEmpty())
        {
            final String first = violations.get(0);
            final long n = violationCount;
            violations.clear();
            violationCount = 0;
            throw new AssertionError("after `" + step + "`: " + n + " DMA access" + (n == 1 ? "" : "es")
                + " broke the key-retirement invariant; the first: " + first);
        }
    }

    @Override
    public void accessed(final DmaPort port, final int key, final long iova, final long physAddr,
        final long lengthBytes, final boolean write)
    {
        accesses++;
        final SimDevice device = devicesByTables.get(port.tables());
        if (device == null)
        {
            return;
        }
        final MptEntry e = port.tables().mpt().entry(key);
        final String what = String.format(Locale.ROOT, "DMA %s %d bytes at iova 0x%x (phys 0x%x) through key 0x%08x "
            + "on %s", write ? "wrote" : "read", lengthBytes, iova, physAddr, key, device.name());
        if (e == null)
        {
            violation(what + ": the key names no live MPT entry (deregistered or deallocated); no DMA may use a key "
                + "after ibv_dereg_mr or ibv_dealloc_mw returned");
            return;
        }
        if (e.state() != MptState.VALID)
        {
            violation(what + ": the key is " + e.state() + " (invalidated or unbound); no DMA may use a key after "
                + "its LOCAL_INV or unbind completed");
            return;
        }
        final KeyCheck c = port.tables().check(key, e.pd(), port.qpn(), 0, iova, lengthBytes);
        if (c != KeyCheck.VALID && c != KeyCheck.NOT_PRESENT)
        {
            violation(what + ": outside what the key grants now (" + c + ")");
        }
    }

    @Override
    public void opened(final Object message, final DmaPort port, final int key)
    {
        final SimDevice device = devicesByTables.get(port.tables());
        if (device != null)
        {
            messages.put(message, new Opened(device, key, registrations(device, key), indexRegistrations(device,
                key)));
        }
    }

    @Override
    public void packet(final Object message, final DmaPort port, final int key)
    {
        final Opened o = messages.get(message);
        if (o == null)
        {
            return;
        }
        final int now = registrations(o.device(), key);
        if (now != o.registration())
        {
            final int reuses = indexRegistrations(o.device(), key) - o.indexRegistration();
            violation(String.format(Locale.ROOT, "a packet of a message whose first packet was checked under "
                + "rkey 0x%08x on %s is placed under a later registration of the same key: MPT index 0x%x was "
                + "registered %d time%s since, and its %d-bit variant came back to 0x%x (a stale key after the "
                + "variant wrapped reaches memory it was never checked for)", key, o.device().name(),
                MKey.index(key, variantBits(o.device())), reuses, reuses == 1 ? "" : "s", variantBits(o.device()),
                MKey.variant(key, variantBits(o.device()))));
        }
    }

    @Override
    public void registered(final SimMr mr)
    {
        count(mr.pd().context().device(), mr.lkey());
        if (mr.rkey() != mr.lkey())
        {
            count(mr.pd().context().device(), mr.rkey());
        }
    }

    @Override
    public void reregistered(final SimMr mr, final int oldLkey)
    {
        if (mr.lkey() != oldLkey)
        {
            registered(mr);
        }
    }

    private void count(final SimDevice device, final int key)
    {
        final Map<Integer, Integer> byKey = registrationsOfKey.get(device);
        if (byKey != null)
        {
            byKey.merge(key, 1, Integer::sum);
            registrationsOfIndex.get(device).merge(MKey.index(key, variantBits(device)), 1, Integer::sum);
        }
    }

    private int registrations(final SimDevice device, final int key)
    {
        return registrationsOfKey.get(device).getOrDefault(key, 0);
    }

    private int indexRegistrations(final SimDevice device, final int key)
    {
        return registrationsOfIndex.get(device).getOrDefault(MKey.index(key, variantBits(device)), 0);
    }

    private static int variantBits(final SimDevice device)
    {
        return device.tables().mpt().config().variantBits();
    }

    private void violation(final String why)
    {
        violationCount++;
        if (violations.size() < MAX_KEPT)
        {
            violations.add(why);
        }
    }
}
