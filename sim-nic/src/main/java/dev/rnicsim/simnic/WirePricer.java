package dev.rnicsim.simnic;

/**
 * The wire time of a message's packets, one after the other: {@link CostModel#wireNs} of the bytes up to the end of
 * each packet, which {@link CostModel#packetNsOfWire} turns into the packet's price. Each packet's value is the one
 * {@link CostModel#wireNs} gives; only the work differs. A link rate that is a whole number of Gbit/s (every built-in
 * profile's) keeps {@code 8 * bytes} as a quotient and a remainder by the rate, so a packet of the path MTU adds a
 * quotient and a remainder known from the first packet, with no division; any other rate, or a packet of another
 * size (the last one), takes {@link CostModel#wireNs}.
 *
 * <p>Why the two agree: {@code wireNs} divides {@code bytes * 8.0} (exact below 2^50) by the rate, correctly rounded,
 * and rounds up. When the rate {@code g} is a whole number below {@value #MAX_EXACT_RATE}, the true quotient is
 * either a whole number, which the division gives exactly, or at least {@code 1/g} away from one, much more than
 * the division's rounding error for messages below 2^40 bytes; so its ceiling is {@code ceil(8 * bytes / g)} computed
 * in integers.
 *
 * <p>Not thread safe: one per message in flight.
 */
final class WirePricer
{
    /** Largest whole link rate, in Gbit/s, priced in integers (far above any link's). */
    static final long MAX_EXACT_RATE = 1L << 13;
    /** Largest payload, in bytes, priced in integers (a message is at most 2^31 bytes). */
    private static final long MAX_EXACT_BYTES = 1L << 40;

    /** The payload bytes priced so far (-1: none yet), at which link rate, and their wire time in ns. */
    private long pricedBytes = -1;
    private double pricedGbps;
    private long pricedWireNs;
    /** The rate as a whole number of Gbit/s, or 0 when it is not one (or too large). */
    private long rate;
    /** {@code 8 * pricedBytes == quotient * rate + remainder}, {@code 0 <= remainder < rate}, when rate > 0. */
    private long quotient;
    private long remainder;
    /** The packet size the step below is for (-1: none yet), and {@code 8 * stepBytes} as a quotient and remainder. */
    private long stepBytes;
    private long stepQuotient;
    private long stepRemainder;

    /**
     * The price of the next packet of a message: {@link CostModel#packetNs}{@code (bytesBefore, packetBytes,
     * linkGbps)}.
     *
     * @param cost        the cost model.
     * @param bytesBefore payload bytes of the message's packets before this one.
     * @param packetBytes this packet's payload.
     * @param linkGbps    link rate in Gbit/s.
     * @return simulated ns.
     */
    long packetNs(final CostModel cost, final long bytesBefore, final long packetBytes, final double linkGbps)
    {
        final long wireBefore = bytesBefore == pricedBytes && linkGbps == pricedGbps ? pricedWireNs
            : restart(bytesBefore, linkGbps);
        final long after = bytesBefore + packetBytes;
        final long wireAfter;
        if (rate > 0 && after < MAX_EXACT_BYTES && packetBytes >= 0)
        {
            if (packetBytes != stepBytes)
            {
                stepBytes = packetBytes;
                stepQuotient = 8 * packetBytes / rate;
                stepRemainder = 8 * packetBytes % rate;
            }
            quotient += stepQuotient;
            remainder += stepRemainder;
            if (remainder >= rate)
            {
                remainder -= rate;
                quotient++;
            }
            wireAfter = remainder == 0 ? quotient : quotient + 1;
        }
        else
        {
            rate = 0;
            wireAfter = CostModel.wireNs(after, linkGbps);
        }
        pricedBytes = after;
        pricedGbps = linkGbps;
        pricedWireNs = wireAfter;
        return cost.packetNsOfWire(bytesBefore, wireBefore, wireAfter);
    }

    /** Starts over at {@code bytes} (a first packet, or a rate or position other than the last one priced). */
    private long restart(final long bytes, final double linkGbps)
    {
        final long whole = (long)linkGbps;
        rate = whole == linkGbps && whole > 0 && whole < MAX_EXACT_RATE && bytes >= 0 && bytes < MAX_EXACT_BYTES
            ? whole : 0;
        stepBytes = -1;
        if (rate > 0)
        {
            quotient = 8 * bytes / rate;
            remainder = 8 * bytes % rate;
            return remainder == 0 ? quotient : quotient + 1;
        }
        return CostModel.wireNs(bytes, linkGbps);
    }
}
