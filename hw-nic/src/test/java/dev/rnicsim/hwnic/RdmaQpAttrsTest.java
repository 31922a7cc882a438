package dev.rnicsim.hwnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The {@code struct ibv_qp_attr} that hw-nic's ibv_modify_qp writes and ibv_query_qp reads (libibverbs/verbs.h
 * layout): every member lands at its offset and reads back as it went in; a mask naming a state without one is
 * refused with EINVAL before anything reaches rdma-core. Needs no device.
 */
class RdmaQpAttrsTest
{
    @Test
    void shouldWriteEveryMemberOfIbvQpAttrAndReadItBack()
    {
        final QpAttr in = new QpAttr(QpState.RTR, QpState.INIT, EnumSet.of(Access.REMOTE_READ), 3, 1, 0x1234,
            new AhAttr("fe80:0000:0000:0000:0202:c9ff:fe00:0001", 0, 1, 2), QpAttr.MTU_4096, 14, 7, 6, 0x111,
            0x222, 4, 8, 12, 0x42, false);
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment seg = a.allocate(IbvStructs.IBV_QP_ATTR);
            RdmaQpAttrs.write(in, EnumSet.allOf(QpAttrMask.class), seg);
            assertThat(RdmaQpAttrs.read(seg)).isEqualTo(in);
        }
    }

    @Test
    void shouldRefuseAMaskNamingAStateThatIsNotGiven()
    {
        final QpAttr noState = new QpAttr(null, null, Set.of(), 0, 1, 0, null, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false);
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment seg = a.allocate(IbvStructs.IBV_QP_ATTR);
            final VerbsException e = catchThrowableOfType(VerbsException.class,
                () -> RdmaQpAttrs.write(noState, Set.of(QpAttrMask.STATE), seg));
            assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        }
    }
}
