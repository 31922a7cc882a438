package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.UdSendWr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checks {@link WorkRequests#writeUd} makes before a datagram's {@code wr.ud} is written (ibv_post_send(3): a UD
 * QP posts SEND and SEND_WITH_IMM, each naming an address handle of its PD). They need no device; the datagram path
 * itself runs in the conformance suite through the project's libibverbs.
 */
class WorkRequestsTest
{
    /** An address handle of another backend: the binding has no {@code struct ibv_ah} for it. */
    private static final AddressHandle FOREIGN = new AddressHandle()
    {
        @Override
        public ProtectionDomain pd()
        {
            return null;
        }

        @Override
        public AhAttr attr()
        {
            return AhAttr.toGid("fe80::1");
        }

        @Override
        public boolean isClosed()
        {
            return false;
        }

        @Override
        public void close()
        {
        }
    };

    @Test
    void shouldRefuseADatagramThatIsNotASendWithEinvalAndWriteNothing()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment w = arena.allocate(WrStructs.IBV_SEND_WR);
            final UdSendWr write = new UdSendWr(SendWr.write(1, List.of(), 0x1000, 7), FOREIGN, 0x12, 0x11111111);
            assertThat(WorkRequests.writeUd(w, write, null)).startsWith("EINVAL").contains("RDMA_WRITE");
            assertThat(w.get(ADDRESS, WorkRequests.SEND_WR_UD_AH).address()).isZero();
            assertThat(w.get(JAVA_INT, WorkRequests.SEND_WR_UD_REMOTE_QPN)).isZero();
        }
    }

    @Test
    void shouldRefuseAnAddressHandleOfAnotherBackendWithEinvalAndWriteNothing()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment w = arena.allocate(WrStructs.IBV_SEND_WR);
            final UdSendWr send = new UdSendWr(SendWr.send(1, List.of()), FOREIGN, 0x12, 0x11111111);
            assertThat(WorkRequests.writeUd(w, send, null)).startsWith("EINVAL")
                .contains("not a live address handle of this backend");
            assertThat(w.get(JAVA_INT, WorkRequests.SEND_WR_UD_REMOTE_QKEY)).isZero();
        }
    }

    @Test
    void shouldPlaceTheUdMembersInsideTheWrUnionWhereTheRdmaMembersAre()
    {
        // struct ibv_send_wr: wr.ud {ah, remote_qpn, remote_qkey} overlays wr.rdma {remote_addr, rkey}; the layout
        // check compares both with the installed verbs.h.
        assertThat(WorkRequests.SEND_WR_UD_AH).isEqualTo(WrStructs.SEND_WR_RDMA_REMOTE_ADDR);
        assertThat(WorkRequests.SEND_WR_UD_REMOTE_QPN).isEqualTo(WrStructs.SEND_WR_RDMA_RKEY);
        assertThat(WorkRequests.SEND_WR_UD_REMOTE_QKEY).isEqualTo(WorkRequests.SEND_WR_UD_REMOTE_QPN + 4);
    }
}
