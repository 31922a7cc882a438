package dev.rnicsim.mtt;

/**
 * A physically contiguous, DMA-mapped run of a registered buffer: one entry of the umem's scatterlist
 * (drivers/infiniband/core/umem.c). The first run starts at the 4 KiB page that holds the buffer's first byte.
 *
 * <p>Immutable and thread safe.
 *
 * @param dmaAddr     DMA (bus) address of the first byte of the run, 4 KiB aligned.
 * @param lengthBytes length in bytes, a positive multiple of 4 KiB.
 */
public record DmaRun(long dmaAddr, long lengthBytes)
{
    /**
     * @throws TableException EINVAL when the address or length is negative, zero or not 4 KiB aligned.
     */
    public DmaRun
    {
        if (dmaAddr < 0 || lengthBytes <= 0 || (dmaAddr & 0xfff) != 0 || (lengthBytes & 0xfff) != 0
            || dmaAddr + lengthBytes < dmaAddr)
        {
            throw new TableException(Errno.EINVAL, "DMA run 0x" + Long.toHexString(dmaAddr) + "+" + lengthBytes
                + " must be 4096-aligned, non-empty and not overflow");
        }
    }
}
