package dev.rnicsim.scenarios.explorer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.simnic.DeviceObserver;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Records the work requests the devices execute during a step, as they execute: opcode, SGEs, the remote address
 * and rkey (split into MPT index and variant with the responder's variant bits, with what the responder's MPT holds
 * at that index now), and the status the requester's completion gets. Not thread safe: the fabric calls it on its
 * one simulation thread.
 */
final class WorkRequests implements DeviceObserver
{
    /** Most work requests kept for one step (a repeat block may post thousands). */
    static final int MAX_PER_STEP = 32;
    /** Most SGEs shown per work request. */
    private static final int MAX_SGES = 4;

    private final Set<SimDevice> watched = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The QP of each recorded request, named when the step ends (the names are the step's). */
    private final IdentityHashMap<ObjectNode, SimQp> pending = new IdentityHashMap<>();
    private ArrayNode current = JsonNodeFactory.instance.arrayNode();
    private int dropped;
    private StateSnapshot names;

    /**
     * Watches every device of the step's fabric not yet watched.
     *
     * @param devices the fabric's devices.
     */
    void watch(final Iterable<SimDevice> devices)
    {
        for (final SimDevice d : devices)
        {
            if (watched.add(d))
            {
                d.addObserver(this);
            }
        }
    }

    /**
     * @param snapshot names for the step's objects.
     * @return the work requests recorded since the last call (and how many were left out), then starts anew.
     */
    ObjectNode drain(final StateSnapshot snapshot)
    {
        this.names = snapshot;
        final ObjectNode out = JsonNodeFactory.instance.objectNode();
        for (final JsonNode n : current)
        {
            final ObjectNode wr = (ObjectNode)n;
            final SimQp qp = pending.remove(wr);
            final String name = qp == null ? null : snapshot.nameOf(qp);
            wr.put("qp", name == null ? "-" : name);
        }
        pending.clear();
        out.set("wrs", current);
        out.put("wrsDropped", dropped);
        current = JsonNodeFactory.instance.arrayNode();
        dropped = 0;
        return out;
    }

    @Override
    public void transferred(final SimQp qp, final SendWr wr, final SimQp peer, final RecvWr recv)
    {
        final ObjectNode n = record(qp, wr);
        if (n != null)
        {
            n.put("status", "SUCCESS");
        }
    }

    @Override
    public void failed(final SimQp qp, final SendWr wr, final DmaResult result)
    {
        final ObjectNode n = record(qp, wr);
        if (n != null)
        {
            n.put("status", result.requester().name());
            n.put("check", result.keyCheck().name());
            n.put("detail", result.detail());
        }
    }

    private ObjectNode record(final SimQp qp, final SendWr wr)
    {
        if (current.size() >= MAX_PER_STEP)
        {
            dropped++;
            return null;
        }
        final ObjectNode n = current.addObject();
        pending.put(n, qp);
        n.put("qpNum", qp.qpNum());
        n.put("device", qp.simDevice().name());
        n.put("opcode", wr.opcode().name());
        n.put("wrId", wr.wrId());
        n.put("bytes", wr.totalBytes());
        final ArrayNode sges = n.putArray("sges");
        final int bits = qp.simDevice().tables().mpt().config().variantBits();
        for (int i = 0; i < wr.sgList().size() && i < MAX_SGES; i++)
        {
            final Sge s = wr.sgList().get(i);
            final ObjectNode o = sges.addObject();
            o.put("addr", StateSnapshot.hex(s.addr()));
            o.put("lengthBytes", s.lengthBytes());
            o.put("lkey", StateSnapshot.hex32(s.lkey()));
            o.put("index", MKey.index(s.lkey(), bits));
            o.put("variant", MKey.variant(s.lkey(), bits));
        }
        final SimDevice remote = qp.remoteDevice();
        if ((wr.rkey() != 0 || wr.remoteAddr() != 0) && remote != null)
        {
            final int rbits = remote.tables().mpt().config().variantBits();
            final long index = MKey.index(wr.rkey(), rbits);
            n.put("remoteDevice", remote.name());
            n.put("remoteAddr", StateSnapshot.hex(wr.remoteAddr()));
            n.put("rkey", StateSnapshot.hex32(wr.rkey()));
            n.put("rkeyIndex", index);
            n.put("rkeyVariant", MKey.variant(wr.rkey(), rbits));
            n.put("slot", slot(remote, index, wr.rkey()));
        }
        return n;
    }

    /** What the responder's MPT holds at an index now, in words. */
    private String slot(final SimDevice remote, final long index, final int rkey)
    {
        final int bits = remote.tables().mpt().config().variantBits();
        for (final StateSnapshot.Keyed k : StateSnapshot.keys(remote))
        {
            if (MKey.index(k.key(), bits) == index)
            {
                final String name = names == null ? null : names.nameOf(k.owner());
                return k.key() == rkey ? "live: " + k.kind() + (name == null ? "" : " " + name)
                    : "holds another key " + StateSnapshot.hex32(k.key()) + " (variant " + MKey.variant(k.key(), bits)
                    + ") of " + k.kind() + (name == null ? "" : " " + name) + ": the variants differ";
            }
        }
        return "free: no live MR or window has this index";
    }
}
