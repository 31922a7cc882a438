package dev.rnicsim.simnic;

import dev.rnicsim.dma.PlacementListener;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import java.util.Arrays;

/**
 * A CPU of the host polling an 8-byte flag while a device's DMA writes land, the way a receiver waits for "data
 * ready" without a completion: after every chunk the device places, it reads the flag; the first time the flag holds
 * the awaited value it reads the data at once. {@link #torn()} then tells whether that read saw data that was not all
 * there yet (the flag overtook the data: a relaxed-ordering hazard).
 *
 * <p>Not thread safe.
 */
public final class FlagWatch implements PlacementListener, AutoCloseable
{
    private final SimDevice device;
    private final UserProcess process;
    private final long flagVa;
    private final long flagValue;
    private final long dataVa;
    private final int dataLength;
    private byte[] seenData;
    private long placementsBeforeFlag;
    private String stopped;

    FlagWatch(final SimDevice device, final UserProcess process, final long flagVa, final long flagValue,
        final long dataVa, final int dataLength)
    {
        this.device = device;
        this.process = process;
        this.flagVa = flagVa;
        this.flagValue = flagValue;
        this.dataVa = dataVa;
        this.dataLength = dataLength;
    }

    @Override
    public void placed(final PhysicalMemory memory, final long physAddr, final int lengthBytes)
    {
        if (seenData != null || stopped != null)
        {
            return;
        }
        placementsBeforeFlag++;
        try
        {
            if (readFlag() == flagValue)
            {
                seenData = process.read(dataVa, dataLength);
            }
        }
        catch (final RuntimeException e)
        {
            // The polling CPU's own fault (its flag or data unmapped, its process gone): it stops polling; the
            // device and the sender are not affected.
            stopped = e.getMessage();
            device.writeOrdering().removeListener(this);
        }
    }

    /**
     * @return why the poller stopped before seeing the flag (its memory could no longer be read), or null.
     */
    public String stoppedBecause()
    {
        return stopped;
    }

    private long readFlag()
    {
        final byte[] b = process.read(flagVa, Long.BYTES);
        long v = 0;
        for (int i = Long.BYTES - 1; i >= 0; i--)
        {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }

    /**
     * @return true once the poller saw the flag.
     */
    public boolean flagSeen()
    {
        return seenData != null;
    }

    /**
     * @return the data the poller read when it first saw the flag, or null.
     */
    public byte[] dataWhenFlagSeen()
    {
        return seenData == null ? null : seenData.clone();
    }

    /**
     * @return chunks placed before the flag was seen (all of them so far if it was not).
     */
    public long placementsBeforeFlag()
    {
        return placementsBeforeFlag;
    }

    /**
     * @return true when the poller saw the flag and the data it then read differs from the data now: it acted on
     * data that had not all landed (false when the data can no longer be read).
     */
    public boolean torn()
    {
        if (seenData == null)
        {
            return false;
        }
        try
        {
            return !Arrays.equals(seenData, process.read(dataVa, dataLength));
        }
        catch (final RuntimeException e)
        {
            // The data is no longer readable: what landed later cannot be compared; the read was not shown torn.
            return false;
        }
    }

    /** Stops watching. */
    @Override
    public void close()
    {
        device.writeOrdering().removeListener(this);
    }
}
