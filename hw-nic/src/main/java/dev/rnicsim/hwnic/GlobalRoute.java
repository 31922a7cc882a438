package dev.rnicsim.hwnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.VerbsException;
import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * The global route header's addressing that QPs and address handles share on RoCE (and on InfiniBand across subnets):
 * a GID as 16 bytes and the hop limit. Stateless.
 */
final class GlobalRoute
{
    /** Hop limit of the global route header on RoCE. */
    static final int HOP_LIMIT = 64;

    private GlobalRoute()
    {
    }

    /**
     * @param text a GID as {@link QpAddress#gid()} holds it: eight groups of hex digits (any IPv6 literal form).
     * @return its 16 bytes.
     */
    static byte[] gidBytes(final String text)
    {
        final InetAddress a;
        try
        {
            a = InetAddress.ofLiteral(text);
        }
        catch (final IllegalArgumentException | NullPointerException e)
        {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL.code(), "remote gid '" + text + "' is no GID "
                + "(expected an IPv6 literal such as fe80:0000:0000:0000:0202:c9ff:fe00:0001)", e);
        }
        final byte[] raw = a.getAddress();
        if (a instanceof Inet4Address)
        {
            final byte[] mapped = new byte[16];
            mapped[10] = (byte)0xff;
            mapped[11] = (byte)0xff;
            System.arraycopy(raw, 0, mapped, 12, 4);
            return mapped;
        }
        return raw;
    }
}
