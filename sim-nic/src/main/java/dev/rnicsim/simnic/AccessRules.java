package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import java.util.EnumSet;
import java.util.Set;

/**
 * The access-flag rules of a registration that depend on the device: the core's capability checks
 * ({@code ib_check_mr_access} in include/rdma/ib_verbs.h) and the driver's own mask of the flags it implements for an
 * MR (rxe: {@code RXE_ACCESS_SUPPORTED_MR}). The dependency rule (REMOTE_WRITE or REMOTE_ATOMIC need LOCAL_WRITE) is
 * {@link Access#checkDependencies}. Also the driver's own access check ({@link #checkDriverAccess}), which rights make
 * the pin writable ({@link #writable}) and when an MR gets an rkey ({@link #rkey}). Stateless.
 */
final class AccessRules
{
    /** Rights that make the pin FOLL_WRITE ({@code ib_access_writable}, include/rdma/ib_umem.h). */
    private static final Set<Access> WRITABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_ATOMIC, Access.MW_BIND);
    private static final Set<Access> REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    private AccessRules()
    {
    }

    /**
     * @return true when the rights make the pin FOLL_WRITE ({@code ib_access_writable}, include/rdma/ib_umem.h):
     *         LOCAL_WRITE, REMOTE_WRITE, REMOTE_ATOMIC or MW_BIND.
     */
    static boolean writable(final Set<Access> rights)
    {
        return !disjoint(rights, WRITABLE);
    }

    /**
     * @return the rkey of an MR of key {@code key}: 0 on a device that gives an rkey only with remote rights
     *         ({@link DeviceProfile#rkeyOnlyWithRemoteAccess()}) when the rights hold none, otherwise the key.
     */
    static int rkey(final DeviceProfile profile, final Set<Access> rights, final int key)
    {
        return profile.rkeyOnlyWithRemoteAccess() && disjoint(rights, REMOTE) ? 0 : key;
    }

    /** True when the flag set holds null (asked by iteration: immutable sets throw on contains(null)). */
    static boolean hasNull(final Set<?> set)
    {
        for (final Object o : set)
        {
            if (o == null)
            {
                return true;
            }
        }
        return false;
    }

    private static boolean disjoint(final Set<Access> a, final Set<Access> b)
    {
        for (final Access x : a)
        {
            if (b.contains(x))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * The driver's own access check, made in its {@code reg_user_mr} after the core's ({@code ib_check_mr_access})
     * and before anything is pinned: a flag outside {@link DriverTraits#acceptedAccess()} gets the driver's errno
     * (efa {@code efa_reg_mr}: EOPNOTSUPP, REMOTE_READ and REMOTE_WRITE only with the device's RDMA_READ and
     * RDMA_WRITE caps; mana {@code mana_ib_reg_user_mr}: EINVAL).
     */
    static void checkDriverAccess(final DeviceProfile profile, final Set<Access> rights, final String verb)
    {
        final DriverTraits t = profile.traits();
        final Set<Access> refused = t.refused(rights);
        if (refused.isEmpty())
        {
            return;
        }
        String why = "";
        if (refused.contains(Access.REMOTE_READ) && !t.rdmaRead())
        {
            why = "; REMOTE_READ needs the device's RDMA READ capability, which " + profile.name() + " lacks";
        }
        else if (refused.contains(Access.REMOTE_WRITE) && !t.rdmaWrite())
        {
            why = "; REMOTE_WRITE needs the device's RDMA WRITE capability, which " + profile.name() + " lacks";
        }
        throw Errors.of(verb, t.unsupportedAccessErrno(), "access " + refused + ": " + t.driver() + " accepts only "
            + t.acceptedAccess() + " (" + t.source() + ")" + why + "; drop the flag or use a device that has it");
    }

    /**
     * {@code ib_check_mr_access}'s capability checks: FLUSH_GLOBAL needs the device's FLUSH_GLOBAL capability and
     * FLUSH_PERSISTENT its FLUSH_PERSISTENT capability.
     *
     * @throws dev.rnicsim.verbs.VerbsException EOPNOTSUPP naming the flag and the capability the device lacks; EINVAL
     *                                          on a kernel without the flags
     *                                          ({@link ProviderRule#KERNEL_WITHOUT_FLUSH_ACCESS}).
     */
    static void checkFlushCaps(final DeviceProfile profile, final Set<Access> rights, final String verb)
    {
        if (profile.follows(ProviderRule.KERNEL_WITHOUT_FLUSH_ACCESS)
            && (rights.contains(Access.FLUSH_GLOBAL) || rights.contains(Access.FLUSH_PERSISTENT)))
        {
            throw Errors.of(verb, Errno.EINVAL, "access " + rights + ": the kernel of " + profile.name()
                + " predates IBV_ACCESS_FLUSH_GLOBAL/_PERSISTENT (bits 8 and 9 outside IB_ACCESS_SUPPORTED, "
                + "ib_check_mr_access); drop the FLUSH access flags or use a device whose kernel has them (rxe of "
                + "Linux 6.2 or later)");
        }
        final DeviceAttributes a = profile.attributes();
        for (final Access flag : new Access[] {Access.FLUSH_GLOBAL, Access.FLUSH_PERSISTENT})
        {
            final DeviceCap cap = flag == Access.FLUSH_GLOBAL ? DeviceCap.FLUSH_GLOBAL : DeviceCap.FLUSH_PERSISTENT;
            if (rights.contains(flag) && !a.has(cap))
            {
                throw Errors.of(verb, Errno.EOPNOTSUPP, "access " + flag + ": " + profile.name() + " lacks the "
                    + cap + " capability in device_cap_flags (ib_check_mr_access)"
                    + "; drop the flag or use a device that has the capability");
            }
        }
    }

    /**
     * The driver's mask of MR access flags, checked after the core's checks and before pinning.
     *
     * @throws dev.rnicsim.verbs.VerbsException EOPNOTSUPP for ZERO_BASED or HUGETLB on a driver whose mask lacks them;
     *                                          EINVAL for FLUSH_PERSISTENT where it needs persistent memory
     *                                          ({@link ProviderRule#FLUSH_PERSISTENT_NEEDS_PMEM}).
     */
    static void checkDriverMask(final DeviceProfile profile, final Set<Access> rights, final String verb)
    {
        if (profile.follows(ProviderRule.MR_ACCESS_WITHOUT_ZERO_BASED_OR_HUGETLB)
            && (rights.contains(Access.ZERO_BASED) || rights.contains(Access.HUGETLB)))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, "access " + rights + ": " + profile.driver() + " implements "
                + "neither ZERO_BASED nor HUGETLB for an MR (RXE_ACCESS_SUPPORTED_MR, rxe_reg_user_mr); register "
                + "without them and present virtual addresses");
        }
        if (profile.follows(ProviderRule.FLUSH_PERSISTENT_NEEDS_PMEM) && rights.contains(Access.FLUSH_PERSISTENT))
        {
            throw Errors.of(verb, Errno.EINVAL, "access FLUSH_PERSISTENT: " + profile.driver() + " takes it only "
                + "for pages of persistent memory (rxe_mr_fill_pages_from_sgt: \"Page can't be persistent\"), and "
                + "the simulated host has none; ask for FLUSH_GLOBAL instead");
        }
    }
}
