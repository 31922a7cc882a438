package dev.rnicsim.scenarios.errno;

import java.util.List;

/**
 * Errno paths of XRC objects used out of order: a CQ that only an XRC SRQ holds (ib_destroy_cq_user counts the SRQ
 * as a user). Stateless.
 */
final class ErrnoWalkXrcAttack
{
    private ErrnoWalkXrcAttack()
    {
    }

    /** @return the cases. */
    static List<ErrnoWalk.Case> cases()
    {
        return List.of(new ErrnoWalk.Case("a close of a CQ only an XRC SRQ uses", ErrnoWalk.TWO_HOSTS
            + "xrcd x app_b\nsrq xsrq pd_b xrcd=x cq=cq_b\nclose qp_b\n", "close cq_b", "EBUSY",
            List.of("QP(s) or XRC SRQ(s) still use this CQ", "destroy them first")));
    }
}
