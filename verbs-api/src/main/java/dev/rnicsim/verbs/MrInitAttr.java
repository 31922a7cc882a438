package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * The input of {@code ibv_reg_mr_ex} ({@code struct ibv_mr_init_attr} in verbs.h): the fields a {@code comp_mask}
 * selects. Two modes, exactly one of them: address mode ({@link #MASK_ADDR}: register {@code addr}, as
 * {@code ibv_reg_mr}/{@code ibv_reg_mr_iova}) and fd mode ({@link #MASK_FD}, with {@link #MASK_FD_OFFSET}: register a
 * dma-buf, as {@code ibv_reg_dmabuf_mr}); {@link #MASK_IOVA} gives the key-visible base address in either.
 *
 * <p>Immutable.
 *
 * @param compMask    which fields are valid: an OR of the MASK_ constants.
 * @param addr        first byte, in address mode.
 * @param lengthBytes bytes to register.
 * @param iova        the address accesses use, with {@link #MASK_IOVA}.
 * @param fd          the dma-buf's file descriptor, in fd mode.
 * @param fdOffset    first byte inside the dma-buf, with {@link #MASK_FD_OFFSET}.
 * @param access      access flags.
 */
public record MrInitAttr(long compMask, long addr, long lengthBytes, long iova, int fd, long fdOffset,
                         Set<Access> access)
{
    /** IBV_REG_MR_MASK_IOVA. */
    public static final long MASK_IOVA = 1;
    /** IBV_REG_MR_MASK_ADDR. */
    public static final long MASK_ADDR = 2;
    /** IBV_REG_MR_MASK_FD. */
    public static final long MASK_FD = 4;
    /** IBV_REG_MR_MASK_FD_OFFSET. */
    public static final long MASK_FD_OFFSET = 8;
    /** IBV_REG_MR_MASK_DMAH: a DMA handle (TPH processing hints); not modelled. */
    public static final long MASK_DMAH = 16;

    private static final long KNOWN = MASK_IOVA | MASK_ADDR | MASK_FD | MASK_FD_OFFSET | MASK_DMAH;

    /** Copies the access set so later changes by the caller do not reach it. */
    public MrInitAttr
    {
        access = access == null ? null : access.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(access));
    }

    /**
     * @return address mode: {@code addr}, {@code lengthBytes}, {@code access}.
     */
    public static MrInitAttr address(final long addr, final long lengthBytes, final Set<Access> access)
    {
        return new MrInitAttr(MASK_ADDR, addr, lengthBytes, 0, -1, 0, access);
    }

    /**
     * @return fd mode: a dma-buf range addressed by {@code iova}.
     */
    public static MrInitAttr dmabuf(final int fd, final long fdOffset, final long lengthBytes, final long iova,
        final Set<Access> access)
    {
        return new MrInitAttr(MASK_FD | MASK_FD_OFFSET | MASK_IOVA, 0, lengthBytes, iova, fd, fdOffset, access);
    }

    /**
     * @param newIova the key-visible base address.
     * @return this input with {@link #MASK_IOVA} and that iova.
     */
    public MrInitAttr withIova(final long newIova)
    {
        return new MrInitAttr(compMask | MASK_IOVA, addr, lengthBytes, newIova, fd, fdOffset, access);
    }

    /**
     * The library's checks of the comp_mask, before anything reaches the kernel: unknown bits, no mode or both modes,
     * an fd offset without an fd are EINVAL; a DMA handle is EOPNOTSUPP here (not modelled).
     *
     * @throws VerbsException naming the mask and the rule.
     */
    void check()
    {
        final String verb = "ibv_reg_mr_ex";
        if ((compMask & ~KNOWN) != 0)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "comp_mask 0x" + Long.toHexString(compMask)
                + " has unknown bits 0x" + Long.toHexString(compMask & ~KNOWN)
                + "; set only IBV_REG_MR_MASK_* bits");
        }
        final boolean addrMode = (compMask & MASK_ADDR) != 0;
        final boolean fdMode = (compMask & (MASK_FD | MASK_FD_OFFSET)) != 0;
        if (addrMode == fdMode)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "comp_mask 0x" + Long.toHexString(compMask)
                + (addrMode ? " selects both address mode (ADDR) and fd mode (FD, FD_OFFSET)"
                : " selects neither address mode (ADDR) nor fd mode (FD)") + ": give exactly one");
        }
        if (fdMode && (compMask & MASK_FD) == 0)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "FD_OFFSET without FD: fd mode needs the dma-buf fd");
        }
        if ((compMask & MASK_DMAH) != 0)
        {
            throw new VerbsException(verb, Errno.EOPNOTSUPP.code(), "DMAH (a DMA handle for TPH hints) is not "
                + "modelled; register without it");
        }
        if (access == null)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "access must be a set of Access flags");
        }
    }
}
