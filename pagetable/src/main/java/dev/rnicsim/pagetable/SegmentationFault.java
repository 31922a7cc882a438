package dev.rnicsim.pagetable;

/**
 * An access by virtual address that a CPU would turn into SIGSEGV: no VMA covers the address, or the VMA's
 * protection forbids the access. Its errno is {@link Errno#EFAULT}, what a system call given such an address
 * returns.
 *
 * <p>Immutable.
 */
public final class SegmentationFault extends KernelException
{
    private static final long serialVersionUID = 1L;

    private final long faultAddress;

    /**
     * @param faultAddress the virtual address that faulted.
     * @param reason       why, e.g. "no VMA maps it" or "write to a VMA without PROT_WRITE".
     */
    public SegmentationFault(final long faultAddress, final String reason)
    {
        super(Errno.EFAULT, "SIGSEGV at 0x" + Long.toHexString(faultAddress) + ": " + reason);
        this.faultAddress = faultAddress;
    }

    /**
     * @return the virtual address that faulted.
     */
    public long faultAddress()
    {
        return faultAddress;
    }
}
