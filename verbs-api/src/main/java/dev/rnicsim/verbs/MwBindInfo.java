package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * What a bind gives a memory window ({@code struct ibv_mw_bind_info}).
 *
 * @param mr          the MR the window opens onto (null, with address and length 0, to unbind a type 1 window).
 * @param addr        first byte of the window, in the MR's address space (its iova).
 * @param lengthBytes window length in bytes; 0 unbinds a type 1 window.
 * @param access      the window's rights: REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC, ZERO_BASED.
 */
public record MwBindInfo(MemoryRegion mr, long addr, long lengthBytes, Set<Access> access)
{
    /**
     * @throws IllegalArgumentException when access or a flag of it is null.
     */
    public MwBindInfo
    {
        Given.list(access, "access", "give the window's rights (an empty set for none)");
        access = access.isEmpty() ? Set.of() : java.util.Collections.unmodifiableSet(EnumSet.copyOf(access));
    }

    /**
     * @return the bind that unbinds a type 1 window (no MR, length 0).
     */
    public static MwBindInfo unbind()
    {
        return new MwBindInfo(null, 0, 0, Set.of());
    }
}
