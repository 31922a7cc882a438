package dev.rnicsim.verbs;


/**
 * A send work request on a UD QP with its destination: the {@code wr.ud} member of {@code struct ibv_send_wr}.
 *
 * @param wr         the work request: SEND or SEND_WITH_IMM.
 * @param ah         the address handle of the remote port.
 * @param remoteQpn  the destination QP number (24 bits).
 * @param remoteQkey the Q_Key the destination QP must hold; with its high bit set the sending QP's own Q_Key is used
 *                   instead (IBA 10.2.5, C10-15).
 */
public record UdSendWr(SendWr wr, AddressHandle ah, int remoteQpn, int remoteQkey)
{
    /**
     * @throws IllegalArgumentException when wr or ah is null.
     */
    public UdSendWr
    {
        Given.required(wr, "wr", "give the SEND to carry");
        Given.required(ah, "ah", "give the address handle of the destination (ProtectionDomain.createAh)");
    }
}
