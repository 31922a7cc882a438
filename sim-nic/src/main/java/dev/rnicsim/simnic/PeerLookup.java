package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpAddress;

/**
 * Who answers at a requester's remote address: the QP the address vector names, looked up through the fabric once per
 * address and kept while it is open (a live QP keeps its number on its device until it is destroyed), the peer it
 * talked to once that was destroyed (what {@link AckTimeout} names), and whether this QP, as a responder, is
 * connected to a given requester (rxe drops packets of other QPs in {@code check_addr}).
 *
 * <p>Not thread safe: one per {@link Requester}, driven by the fabric's {@link NicEngine}.
 */
final class PeerLookup
{
    private final SimQp qp;

    /** The remote address {@link #peerFound} was looked up for (the lookup's cache). */
    private QpAddress peerAddress;
    private SimQp peerFound;
    /** The peer this requester last found, once it was destroyed: what a request to its address then reaches
     * ({@link AckTimeout} names it), until the address changes or another QP takes the number. */
    private SimQp destroyedPeer;

    PeerLookup(final SimQp qp)
    {
        this.qp = qp;
    }

    /** @return the QP at the remote address, or null when there is none (or no remote address). */
    SimQp peer()
    {
        if (qp.remote == null)
        {
            return null;
        }
        // A live QP keeps its number on its device until it is destroyed, and a fabric keeps its devices: the peer
        // found for this address stays the answer while it is open.
        if (peerFound != null && !peerFound.closed && (peerAddress == qp.remote
            || peerFound.num == qp.remote.qpNum() && peerFound.device.gid() == qp.remote.gid()))
        {
            // The same address, or a new one naming the same live QP (a reconnect): its GID is its device's own.
            peerAddress = qp.remote;
            return peerFound;
        }
        if (peerFound != null && peerFound.closed)
        {
            destroyedPeer = peerFound;
        }
        final SimDevice d = qp.device.fabric().deviceByGid(qp.remote.gid());
        final SimQp found = d == null ? null : d.qp(qp.remote.qpNum());
        peerAddress = qp.remote;
        peerFound = found;
        return found;
    }

    /**
     * @return the QP this requester was talking to at its current remote address, destroyed since, or null when no
     *         such QP was seen (or a live one answers at the address now).
     */
    SimQp destroyedPeer()
    {
        final SimQp gone = peerFound != null && peerFound.closed ? peerFound : destroyedPeer;
        return gone != null && qp.remote != null && gone.num == qp.remote.qpNum()
            && gone.device.gid() == qp.remote.gid() ? gone : null;
    }

    /** The address and requester {@link #connectedTo} last answered true for (a QP's number and GID never change). */
    private QpAddress connectedAddress;
    private SimQp connectedRequester;

    /** An RC responder answers only the QP its address vector names (rxe drops other packets in check_addr). */
    boolean connectedTo(final SimQp requester)
    {
        final QpAddress remote = qp.remote;
        if (remote != null && remote == connectedAddress && requester == connectedRequester)
        {
            return true;
        }
        final boolean connected = remote != null && remote.qpNum() == requester.num
            && remote.gid().equals(requester.device.gid());
        if (connected)
        {
            connectedAddress = remote;
            connectedRequester = requester;
        }
        return connected;
    }
}
