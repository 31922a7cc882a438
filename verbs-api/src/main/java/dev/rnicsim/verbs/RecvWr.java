package dev.rnicsim.verbs;

import java.util.List;

/**
 * A receive work request ({@code struct ibv_recv_wr}): where the next incoming SEND (or the immediate of a WRITE
 * with immediate) lands.
 *
 * @param wrId   the caller's identifier, returned in the completion.
 * @param sgList the buffers, in order; may be empty for a receive that only takes an immediate.
 */
public record RecvWr(long wrId, List<Sge> sgList)
{
    /**
     * @throws IllegalArgumentException when sgList or an element is null.
     */
    public RecvWr
    {
        sgList = Given.list(sgList, "sgList", "give the receive buffers' SGEs (an empty list for none)");
    }

    /**
     * @param wrId the caller's identifier.
     * @param sges the buffers.
     * @return the work request.
     */
    public static RecvWr of(final long wrId, final Sge... sges)
    {
        return new RecvWr(wrId, List.of(sges));
    }

    /**
     * @return total bytes the buffers can take.
     */
    public long totalBytes()
    {
        long total = 0;
        for (final Sge s : sgList)
        {
            total += s.lengthBytes();
        }
        return total;
    }
}
