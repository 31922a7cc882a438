package dev.rnicsim.simnic;

import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.UdSendWr;

/**
 * A WQE on the send queue: the work request, its inline payload, the destination of a UD send (null on connected
 * QPs), its place in posting order and its post site: the {@link SimFabric#origin()} when it was posted (a script
 * line), or null. Under a manual engine the WQE runs later, at another origin; what reports on it names the post site.
 */
record SendWqe(SendWr wr, byte[] inline, UdSendWr ud, long seq, String postSite)
{
}
