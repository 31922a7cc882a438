package dev.rnicsim.simnic;

/**
 * How reports write a range of addresses: {@code [0x1000, 0x1040)}, start inclusive, end exclusive, hex as {@code %x}
 * writes it. A range whose end passes 2^64 has no end to write (a 64-bit end would print small, below its start:
 * {@code [0xffffffffffffffe0, 0x20)}), so it is written as what it is: {@code addr 0xffffffffffffffe0 + 64 bytes
 * wraps past 2^64}. The kernel refuses such a range where it is given (ib_umem_get: {@code addr + size < addr} is
 * EINVAL; a work request's SGE or remote range past 2^64 fails the MR's bounds check); the report has to say it
 * plainly. A range that ends exactly at 2^64 is written {@code [0xffffffffffffffc0, 2^64)}.
 *
 * <p>Stateless.
 */
public final class AddressRangeText
{
    private AddressRangeText()
    {
    }

    /**
     * @param addr        the first address (unsigned).
     * @param lengthBytes the length (unsigned).
     * @return the range as a report writes it.
     */
    public static String of(final long addr, final long lengthBytes)
    {
        final long end = addr + lengthBytes;
        if (lengthBytes != 0 && end == 0)
        {
            return "[0x" + Long.toHexString(addr) + ", 2^64)";
        }
        if (wraps(addr, lengthBytes))
        {
            return "addr 0x" + Long.toHexString(addr) + " + " + Long.toUnsignedString(lengthBytes)
                + " bytes wraps past 2^64";
        }
        return "[0x" + Long.toHexString(addr) + ", 0x" + Long.toHexString(end) + ")";
    }

    /**
     * @param addr        the first address (unsigned).
     * @param lengthBytes the length (unsigned).
     * @return true when the range's last byte lies past 2^64 - 1.
     */
    public static boolean wraps(final long addr, final long lengthBytes)
    {
        final long end = addr + lengthBytes;
        return end != 0 && Long.compareUnsigned(end, addr) < 0;
    }
}
