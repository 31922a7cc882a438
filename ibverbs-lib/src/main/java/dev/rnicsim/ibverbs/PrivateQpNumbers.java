package dev.rnicsim.ibverbs;

/**
 * Where a fabric that a run starts for itself alone (no {@code --fabric}) begins its QP numbers. On a real network
 * each host's device allocates its own 24-bit QP numbers (IBA 10.2.4), so the number a peer on another host sends
 * over TCP names no QP of this host; two runs without {@code --fabric} are two such hosts, and numbering both from
 * the same start would let a client's QP, told the server's number, connect to a QP of its own fabric (often
 * itself) and report a success no real stack gives. Each private fabric therefore starts in a 4096-QP block of its
 * own, chosen by the pid its name ends with: two private fabrics share a block once in 4095 pairs, and never when
 * their pids are fewer than 4095 apart. Named fabrics, scripts and the Java API keep the first number
 * {@link dev.rnicsim.simnic.SimFabric#FIRST_QP_NUM}.
 */
final class PrivateQpNumbers
{
    /** QPs per block: a private fabric numbers its first 4096 QPs apart from every other private fabric's. */
    static final int BLOCK_QPS = 0x1000;
    /** Blocks a private fabric may start in: 1 to 0xfff, so every number stays within 24 bits. */
    static final int BLOCKS = 0xfff;

    private PrivateQpNumbers()
    {
    }

    /**
     * @param fabricName a private fabric's name ({@code exec-PID} for {@code rnicsim exec}).
     * @return its first QP number: the offset of {@link dev.rnicsim.simnic.SimFabric#FIRST_QP_NUM} in its block, the
     *         block chosen by the number the name ends with (the pid) or, for a name ending otherwise, its hash.
     */
    static int firstOf(final String fabricName)
    {
        int digits = fabricName.length();
        while (digits > 0 && Character.isDigit(fabricName.charAt(digits - 1)) && fabricName.length() - digits < 18)
        {
            digits--;
        }
        final long key = digits < fabricName.length() ? Long.parseLong(fabricName.substring(digits))
            : fabricName.hashCode();
        final int block = 1 + (int)Math.floorMod(key, (long)BLOCKS);
        return block * BLOCK_QPS + dev.rnicsim.simnic.SimFabric.FIRST_QP_NUM;
    }
}
