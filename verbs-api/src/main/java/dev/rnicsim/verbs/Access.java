package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * Memory access rights of an MR, a memory window or a QP, with the bit values of {@code enum ibv_access_flags}
 * (rdma-core libibverbs/verbs.h), so that a set converts to and from the integer the C API takes.
 *
 * <p>Local read is always allowed and has no flag. The dependency rule (REMOTE_WRITE or REMOTE_ATOMIC needs
 * LOCAL_WRITE, {@code ib_check_mr_access} in drivers/infiniband/core, EINVAL otherwise) is checked by
 * {@link #checkDependencies(Set, String)}.
 *
 * <p>Immutable and thread safe.
 */
public enum Access
{
    /** IBV_ACCESS_LOCAL_WRITE (0x1): the device may write the memory for local operations (receives, READ
     * responses, atomic results). */
    LOCAL_WRITE(0x1),
    /** IBV_ACCESS_REMOTE_WRITE (0x2): a peer may RDMA WRITE into the memory. Needs LOCAL_WRITE. */
    REMOTE_WRITE(0x2),
    /** IBV_ACCESS_REMOTE_READ (0x4): a peer may RDMA READ the memory. */
    REMOTE_READ(0x4),
    /** IBV_ACCESS_REMOTE_ATOMIC (0x8): a peer may run atomics on the memory. Needs LOCAL_WRITE. */
    REMOTE_ATOMIC(0x8),
    /** IBV_ACCESS_MW_BIND (0x10): memory windows may be bound to the MR. */
    MW_BIND(0x10),
    /** IBV_ACCESS_ZERO_BASED (0x20): addresses presented with the key are byte offsets from the MR start. */
    ZERO_BASED(0x20),
    /** IBV_ACCESS_ON_DEMAND (0x40): on-demand paging; no pinning. Needs device ODP support. */
    ON_DEMAND(0x40),
    /** IBV_ACCESS_HUGETLB (0x80): with ON_DEMAND, the range is backed by huge pages only. */
    HUGETLB(0x80),
    /** IBV_ACCESS_FLUSH_GLOBAL (0x100). */
    FLUSH_GLOBAL(0x100),
    /** IBV_ACCESS_FLUSH_PERSISTENT (0x200). */
    FLUSH_PERSISTENT(0x200),
    /** IBV_ACCESS_RELAXED_ORDERING (1 &lt;&lt; 20, the first optional bit): never makes registration fail. */
    RELAXED_ORDERING(1 << 20);

    private final int bit;

    Access(final int bit)
    {
        this.bit = bit;
    }

    /**
     * @return the flag's value in {@code enum ibv_access_flags}.
     */
    public int bit()
    {
        return bit;
    }

    /**
     * @param access a set of rights; may be empty.
     * @return the OR of their bits, as the C API takes it.
     */
    public static int toBits(final Set<Access> access)
    {
        int bits = 0;
        for (final Access a : access)
        {
            bits |= a.bit;
        }
        return bits;
    }

    /**
     * @param bits an OR of flag values.
     * @return the flags set in {@code bits}.
     * @throws VerbsException EINVAL naming the bits that are no {@code ibv_access_flags} value.
     */
    public static EnumSet<Access> fromBits(final int bits)
    {
        final EnumSet<Access> set = EnumSet.noneOf(Access.class);
        int rest = bits;
        for (final Access a : values())
        {
            if ((bits & a.bit) != 0)
            {
                set.add(a);
                rest &= ~a.bit;
            }
        }
        if (rest != 0)
        {
            throw new VerbsException("access", Errno.EINVAL.code(), "access bits 0x" + Integer.toHexString(rest)
                + " are no ibv_access_flags value"
                + "; pass only IBV_ACCESS_* bits");
        }
        return set;
    }

    /**
     * The one place the S9 rule is checked: REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE is refused
     * ({@code ib_check_mr_access}, drivers/infiniband/core/uverbs_cmd.c; ibv_reg_mr(3)).
     *
     * @param access the rights asked for.
     * @param verb   the verb, named in the error.
     * @throws VerbsException EINVAL when the rule is broken.
     */
    public static void checkDependencies(final Set<Access> access, final String verb)
    {
        if ((access.contains(REMOTE_WRITE) || access.contains(REMOTE_ATOMIC)) && !access.contains(LOCAL_WRITE))
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "access=" + access
                + ": REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE (ib_check_mr_access)"
                + "; add LOCAL_WRITE");
        }
    }
}
