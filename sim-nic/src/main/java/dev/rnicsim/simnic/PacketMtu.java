package dev.rnicsim.simnic;

import dev.rnicsim.verbs.WrOpcode;

/**
 * The payload of one packet of an RC or UC message: the path MTU of the QP that sends it. Every packet of a message
 * but the last carries exactly path MTU bytes, the last the rest (IBA 9.7.1 and 9.7.4.1: FIRST and MIDDLE packets
 * carry PMTU bytes of payload, the LAST or ONLY packet 1 to PMTU). The requester cuts a WRITE or SEND at its own
 * path_mtu (rxe {@code rxe_requester}: {@code mtu = get_mtu(qp)}, the QP's {@code mtu} for RC/UC, set from the
 * path_mtu of {@code ibv_modify_qp} in {@code rxe_qp_from_attr}); the READ responses are cut by the responder at its
 * own path_mtu (rxe {@code read_reply}: {@code mtu = qp->mtu}). The path_mtu is the one a modify gave the QP: the
 * one-call connect sets the port's active_mtu (1024 on a 1500-byte RoCE netdev, 4096 on InfiniBand), a C program its
 * own at RTR ({@link ProgramRtr}). The fabric's {@link SimFabric#pathMtuBytes()} caps it (the link's MTU) and stands
 * in for a QP no modify gave a path_mtu.
 */
public final class PacketMtu
{
    private PacketMtu()
    {
    }

    /**
     * @param qp the QP that sends the packets.
     * @return its packets' payload in bytes: its path_mtu, at most the fabric's.
     */
    public static int bytes(final SimQp qp)
    {
        return Math.min(RoceWire.pathMtuBytes(qp), qp.device.fabric().pathMtuBytes());
    }

    /**
     * @param requester the requester QP.
     * @param responder its connected peer, or null when unknown.
     * @param opcode    the message's opcode.
     * @return the payload of the message's data packets: the responder's path MTU for an RDMA READ (its responses
     *         carry the data), the requester's otherwise.
     */
    public static int ofMessage(final SimQp requester, final SimQp responder, final WrOpcode opcode)
    {
        return opcode == WrOpcode.RDMA_READ && responder != null ? bytes(responder) : bytes(requester);
    }
}
