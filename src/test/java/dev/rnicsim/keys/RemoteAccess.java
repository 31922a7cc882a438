package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyWorld.run;

import dev.rnicsim.keys.WorldModel.KeyName;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.keys.WorldModel.Pair;
import dev.rnicsim.keys.WorldModel.PdM;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;

/**
 * RDMA READ, WRITE, fetch-and-add and compare-and-swap in a {@link KeyWorld}, from host alpha to app_b's memory with
 * any key ever issued: the responder's checks predicted from the model (key, PD, QP, rights, range, alignment), the
 * completion and the bytes compared; stale keys feed the key-reuse report. Not thread safe.
 */
final class RemoteAccess
{
    private final KeyWorld world;

    RemoteAccess(final KeyWorld world)
    {
        this.world = world;
    }

    // ------------------------------------------------------------------ actions: remote access

    /**
     * An RDMA READ, WRITE, fetch-and-add or compare-and-swap from qaN (pd_a) to [buf+off, +len) through the
     * responder qbN of pd_bN, with key kK.
     */
    void access(final KeyOps.Op op, final int pdIndex, final int keyN, final String buf, final long off,
        final int len, final String text, final long compareOrAdd, final long swap)
    {
        final Script.Line line = () -> KeyOps.accessLine(op, pdIndex, keyN, buf, off, len, compareOrAdd, swap);
        if (!(world.bound.contains(buf) && world.pdBound(pdIndex) && world.keyBound(keyN))
            && world.skipUnbound(line, buf, "pd_b" + pdIndex, "k" + keyN))
        {
            return;
        }
        final PdM pd = world.pds.get(pdIndex);
        if (!pd.live)
        {
            world.skipStep(line, "pd_b" + pdIndex + " is closed");
            return;
        }
        world.begin(line);
        if (!world.connections.ensurePair(pd))
        {
            world.step.lines.add("# not posted: no QP");
            return;
        }
        final Pair pair = pd.pair;
        final KeyName k = world.keys.get(keyN);
        final int key = k.value;
        final long remote = world.bufAddr(buf) + off;
        final boolean atomic = op == KeyOps.Op.FAA || op == KeyOps.Op.CAS;
        final int n = atomic ? 8 : len;
        final Access right = switch (op)
        {
            case READ -> Access.REMOTE_READ;
            case WRITE -> Access.REMOTE_WRITE;
            default -> Access.REMOTE_ATOMIC;
        };
        // The responder's checks: key (index, variant), PD, type 2 QP, rights, state, range; then alignment.
        final Object holder = world.holderOf(key);
        MrM target = null;
        if (holder instanceof MrM m && m.pd == pd && m.access.contains(right) && remote >= m.addr
            && n <= m.lengthBytes - (remote - m.addr) && remote - m.addr <= m.lengthBytes)
        {
            target = m;
        }
        else if (holder instanceof MwM w && w.pd == pd && w.bound && (w.type == MwType.TYPE_1 || w.qp == pair.qb)
            && w.rights.contains(right) && remote >= w.lo && n <= w.len - (remote - w.lo) && remote - w.lo <= w.len)
        {
            target = w.mr;
        }
        final String status = target == null ? "REM_ACCESS_ERR" : atomic && (remote & 7) != 0 ? "REM_INV_REQ_ERR"
            : "SUCCESS";
        recordStale(k, holder != null);
        // The requester's scratch: the data to write, or cleared to see what a READ or an atomic brings.
        final byte[] local = new byte[n];
        if (op == KeyOps.Op.WRITE)
        {
            System.arraycopy(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, local, 0, n);
        }
        else
        {
            Arrays.fill(local, (byte)'.');
        }
        world.line(() -> "write scratch \"" + new String(local, java.nio.charset.StandardCharsets.US_ASCII) + "\"");
        world.appA.write(world.scratch, local);
        System.arraycopy(local, 0, world.scratchModel, 0, n);
        world.line(() -> line.text() + "   # " + k.name + " = " + Script.key(key) + ": " + describeKey(k, holder));
        final long wrId = world.nextWrId++;
        final List<Sge> sgl = List.of(new Sge(world.scratch, n, world.smr.lkey()));
        final SendWr wr = switch (op)
        {
            case READ -> new SendWr(wrId, WrOpcode.RDMA_READ, sgl, EnumSet.of(SendFlag.SIGNALED), remote, key, 0, 0,
                0, 0);
            case WRITE -> new SendWr(wrId, WrOpcode.RDMA_WRITE, sgl, EnumSet.of(SendFlag.SIGNALED), remote, key, 0,
                0, 0, 0);
            case FAA -> new SendWr(wrId, WrOpcode.ATOMIC_FETCH_AND_ADD, sgl, EnumSet.of(SendFlag.SIGNALED), remote,
                key, 0, compareOrAdd, 0, 0);
            case CAS -> new SendWr(wrId, WrOpcode.ATOMIC_CMP_AND_SWP, sgl, EnumSet.of(SendFlag.SIGNALED), remote, key,
                0, compareOrAdd, swap, 0);
        };
        world.expectOutcome("ok", run(() -> pair.qa.postSend(List.of(wr))));
        world.connections.poll(world.cqA, "cq_a", status);
        if (!status.equals("SUCCESS"))
        {
            pair.broken = true;
            world.expectEqual(QpState.ERR, pair.qa.state(), "requester QP state after " + status);
            world.expectEqual(QpState.ERR, pair.qb.sim.state(), "responder QP state after " + status);
            final byte[] after = world.appA.read(world.scratch, n);
            if (!Arrays.equals(local, after))
            {
                throw world.failure(Mismatch.Kind.BYTES, "a refused " + op + " changed the requester's buffer to "
                    + Script.hex(after));
            }
            return;
        }
        final MrM m = target;
        switch (op)
        {
            case WRITE -> world.memory.mrWrite(m, remote, local);
            case READ ->
            {
                final byte[] expected = BetaMemory.mrRead(m, remote, n);
                System.arraycopy(expected, 0, world.scratchModel, 0, n);
                world.line(() -> "expect bytes scratch " + Script.hex(expected));
                final byte[] got = world.appA.read(world.scratch, n);
                if (!Arrays.equals(expected, got))
                {
                    throw world.failure(Mismatch.Kind.BYTES, "READ of " + n + " bytes at 0x"
                        + Long.toHexString(remote) + " through "
                        + m.name + " (" + k.name + ") gave " + Script.hex(got) + ", the model " + Script.hex(expected)
                        + " (the bytes of " + m.name + "'s pinned frames)");
                }
            }
            default ->
            {
                final byte[] before = BetaMemory.mrRead(m, remote, 8);
                final long original = java.nio.ByteBuffer.wrap(before).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                    .getLong();
                final long updated = op == KeyOps.Op.FAA ? original + compareOrAdd
                    : original == compareOrAdd ? swap : original;
                world.memory.mrWrite(m, remote, java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                    .putLong(updated).array());
                System.arraycopy(before, 0, world.scratchModel, 0, 8);
                world.line(() -> "expect bytes scratch " + Script.hex(before));
                final byte[] got = world.appA.read(world.scratch, 8);
                if (!Arrays.equals(before, got))
                {
                    throw world.failure(Mismatch.Kind.BYTES, op + " at 0x" + Long.toHexString(remote) + " returned "
                        + Script.hex(got)
                        + ", the model's original value " + Script.hex(before));
                }
            }
        }
    }

    static String describeKey(final KeyName k, final Object holder)
    {
        final String now = holder == null ? "names nothing" : "names " + WorldChecks.describe(holder);
        return "issued to " + k.issuer + ", " + now;
    }

    /** Feeds the key-reuse report: an access with an MR key whose MR no longer holds it. */
    private void recordStale(final KeyName k, final boolean validates)
    {
        if (k.mrKey && k.allocationsAtDeath >= 0 && k.value != 0)
        {
            final int index = MptModel.index(k.value);
            final int reuses = world.mpt.allocations(index) - k.allocationsAtDeath;
            ReuseStats.Holder holder = ReuseStats.Holder.FREE;
            for (final MrM m : world.mrList)
            {
                if (m.live && MptModel.index(m.key) == index)
                {
                    holder = ReuseStats.Holder.MR;
                }
            }
            for (final MwM w : world.mwList)
            {
                if (w.live && MptModel.index(w.tableKey) == index)
                {
                    holder = ReuseStats.Holder.WINDOW;
                }
            }
            world.stats.staleAccess(world.policy, reuses, holder, validates);
        }
    }
}
