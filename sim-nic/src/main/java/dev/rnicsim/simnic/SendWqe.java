package dev.rnicsim.simnic;

import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.UdSendWr;

/**
 * A WQE on the send queue: the work request, its inline payload, the destination of a UD send (null on connected
 * QPs), its place in posting order.
 */
record SendWqe(SendWr wr, byte[] inline, UdSendWr ud, long seq)
{
}
