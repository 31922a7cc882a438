package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaPort;
import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.FlushAndAtomicWrite;
import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.FlushPlacement;
import dev.rnicsim.verbs.FlushSelectivity;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;

/**
 * The work requests of the memory placement extensions (IBTA 1.6 annex A19) on a simulated QP: FLUSH
 * ({@code ibv_wr_flush}) and ATOMIC_WRITE ({@code ibv_wr_atomic_write}), as ibv_wr_post(3) describes them, and the
 * responder's message-length check of RDMA WRITE and READ where the provider leaves it to the responder. The
 * responder's checks themselves are {@link FlushAndAtomicWrite}'s.
 *
 * <p>What is refused when the work request is posted (a {@link PostException}, nothing queued):
 * <ul>
 * <li>a device without the operation's capability ({@code IB_UVERBS_DEVICE_FLUSH_GLOBAL}/{@code _PERSISTENT} for the
 * placement type, {@code IB_UVERBS_DEVICE_ATOMIC_WRITE}), or a QP that is not RC: EOPNOTSUPP. libibverbs posts these
 * operations only through the {@code ibv_wr_*} builders of a QP created with {@code IBV_QP_EX_WITH_FLUSH} or
 * {@code IBV_QP_EX_WITH_ATOMIC_WRITE} in its {@code send_ops_flags}, and {@code ibv_create_qp_ex} answers EOPNOTSUPP
 * for an operation the provider or QP type lacks (ibv_wr_post(3): "If the QP does not support all the requested work
 * request types then QP creation will fail"; rxe's kernel table {@code rxe_wr_opcode_info} allows both on RC only).
 * The simulator's QPs carry no {@code send_ops_flags}, so it answers at the post, with the same errno;</li>
 * <li>a gather list (neither operation reads local memory: a FLUSH has no payload, oA19-2; the 8 bytes of an ATOMIC
 * WRITE are taken from the work request) or a FLUSH without its operands: EINVAL.</li>
 * </ul>
 *
 * <p>Stateless.
 */
final class PlacementOps
{
    private PlacementOps()
    {
    }

    /**
     * The post-time checks of a FLUSH or ATOMIC_WRITE.
     *
     * @param profile the QP's device profile.
     * @param type    the QP's type.
     * @param wr      the work request.
     * @param index   its position in the posted list.
     * @throws PostException EOPNOTSUPP or EINVAL as the class comment says.
     */
    static void checkPost(final DeviceProfile profile, final QpType type, final SendWr wr, final int index)
    {
        final String verb = "ibv_post_send";
        final DeviceAttributes a = profile.attributes();
        final DeviceCap cap;
        if (wr.opcode() == WrOpcode.FLUSH)
        {
            if (!(wr.localOp() instanceof SendWr.Flush f))
            {
                throw new PostException(verb, Errno.EINVAL.code(), index, "FLUSH needs its length, placement type and"
                    + " selectivity: build it with SendWr.flush (ibv_wr_flush)");
            }
            cap = f.type() == FlushPlacement.GLOBAL ? DeviceCap.FLUSH_GLOBAL : DeviceCap.FLUSH_PERSISTENT;
        }
        else
        {
            cap = DeviceCap.ATOMIC_WRITE;
        }
        if (!a.has(cap))
        {
            throw new PostException(verb, Errno.EOPNOTSUPP.code(), index, wr.opcode() + ": " + profile.name()
                + " lacks IB_UVERBS_DEVICE_" + cap + " in device_cap_flags, so ibv_create_qp_ex refuses "
                + (wr.opcode() == WrOpcode.FLUSH ? "IBV_QP_EX_WITH_FLUSH" : "IBV_QP_EX_WITH_ATOMIC_WRITE")
                + " and no QP can post it; use a device that reports it (rxe of current kernels)");
        }
        if (type != QpType.RC)
        {
            throw new PostException(verb, Errno.EOPNOTSUPP.code(), index, wr.opcode() + " is an RC operation "
                + "(ibv_wr_post(3); rxe_wr_opcode_info), not one of a " + type + " QP; post it on an RC QP");
        }
        if (!wr.sgList().isEmpty())
        {
            throw new PostException(verb, Errno.EINVAL.code(), index, wr.opcode() + " takes no gather list: "
                + (wr.opcode() == WrOpcode.FLUSH ? "a FLUSH carries no payload (IBTA A19, oA19-2)"
                : "the 8 bytes travel in the work request (ibv_wr_atomic_write's atomic_wr)") + "; give no sgl (got "
                + wr.sgList() + ")");
        }
    }

    /**
     * Executes a FLUSH or ATOMIC_WRITE at the responder.
     *
     * @param wr             the work request.
     * @param remote         the responder's port, through its QP.
     * @param remotePd       the responder QP's PD.
     * @param remoteQpAccess the responder QP's access flags.
     * @param remoteAddr     the remote address in the key's address space.
     * @return the outcome.
     */
    static DmaResult run(final SendWr wr, final DmaPort remote, final int remotePd, final int remoteQpAccess,
        final long remoteAddr)
    {
        if (wr.opcode() == WrOpcode.ATOMIC_WRITE)
        {
            return FlushAndAtomicWrite.atomicWrite(remote, remotePd, remoteQpAccess, remoteAddr, wr.rkey(),
                wr.compareAdd());
        }
        final SendWr.Flush f = (SendWr.Flush)wr.localOp();
        return FlushAndAtomicWrite.flush(remote, remotePd, remoteQpAccess, remoteAddr, wr.rkey(), f.lengthBytes(),
            f.type() == FlushPlacement.GLOBAL ? AccessFlags.FLUSH_GLOBAL : AccessFlags.FLUSH_PERSISTENT,
            f.level() == FlushSelectivity.MR);
    }

    /**
     * @param wr a FLUSH.
     * @return the right its placement type needs ({@link AccessFlags} bit).
     */
    static int flushRight(final SendWr wr)
    {
        return wr.localOp() instanceof SendWr.Flush f && f.type() == FlushPlacement.PERSISTENT
            ? AccessFlags.FLUSH_PERSISTENT : AccessFlags.FLUSH_GLOBAL;
    }

    /**
     * @param wr a FLUSH.
     * @return the length of its range (0 for the whole MR, whose range is not checked).
     */
    static long flushLength(final SendWr wr)
    {
        return wr.localOp() instanceof SendWr.Flush f && f.level() == FlushSelectivity.RANGE ? f.lengthBytes() : 0;
    }

    /**
     * The message-length check. Where the provider leaves it to the responder
     * ({@link ProviderRule#MESSAGE_LENGTH_CHECKED_BY_RESPONDER}), an RDMA WRITE or READ longer than 2^31 reaches the
     * responder, which NAKs its first packet as an invalid request; a WRITE's requester builds that first packet from
     * its gather list first (rxe_req.c {@code finish_packet}), so a bad lkey of the first bytes still answers first.
     * Elsewhere the requester refuses a message longer than its port's {@code max_msg_sz} (ibv_query_port(3); mlx4,
     * mlx5 and irdma report 2^30) with IBV_WC_LOC_LEN_ERR, and nothing is sent.
     *
     * @param requester the requesting device.
     * @param pd        the requester QP's PD number.
     * @param wr        the work request.
     * @param packetBytes the payload of its first packet at most: the requester's path MTU ({@link PacketMtu}).
     * @return the refusal, or null when the check does not apply or passes.
     */
    static DmaResult responderLength(final SimDevice requester, final int pd, final SendWr wr,
        final int packetBytes)
    {
        final long length = wr.totalBytes();
        if (!requester.profile().follows(ProviderRule.MESSAGE_LENGTH_CHECKED_BY_RESPONDER))
        {
            final long maxMsgSz = requester.portAttributes().maxMsgSzBytes();
            if (length > maxMsgSz && wr.opcode() != WrOpcode.FLUSH)
            {
                return DmaResult.local(dev.rnicsim.dma.DmaStatus.LOC_LEN_ERR, KeyCheck.VALID, "message of " + length
                    + " bytes > the port's max_msg_sz=" + maxMsgSz + " (" + requester.profile().name() + "); split it");
            }
            return null;
        }
        if (wr.opcode() != WrOpcode.RDMA_WRITE && wr.opcode() != WrOpcode.RDMA_WRITE_WITH_IMM
            && wr.opcode() != WrOpcode.RDMA_READ || length <= FlushAndAtomicWrite.MAX_DMA_LENGTH_BYTES)
        {
            return null;
        }
        if (wr.opcode() != WrOpcode.RDMA_READ && !wr.sgList().isEmpty())
        {
            final Sge first = wr.sgList().get(0);
            final long bytes = Math.min(first.lengthBytes(), packetBytes);
            final KeyCheck check = requester.tables().check(first.lkey(), pd, -1, 0,
                requester.keyAddress(first.lkey(), first.addr()), bytes);
            if (bytes > 0 && check != KeyCheck.VALID && check != KeyCheck.NOT_PRESENT)
            {
                return null;
            }
        }
        return FlushAndAtomicWrite.checkDmaLength(length, wr.opcode() == WrOpcode.RDMA_READ ? "RDMA READ"
            : "RDMA WRITE");
    }

    /**
     * Whether a failed gather-list key check of a SEND or WRITE completes with IBV_WC_LOC_QP_OP_ERR rather than
     * IBV_WC_LOC_PROT_ERR. rxe's requester maps its copy error: -EFAULT to LOC_PROT_ERR, anything else to
     * LOC_QP_OP_ERR (rxe_req.c, after {@code finish_packet}); {@code copy_data}'s {@code lookup_mr} failing (unknown
     * or stale key, other PD, invalid state) is -EINVAL, and {@code mr_check_range} is -EINVAL in current kernels
     * (rxe_mr.c) where older ones gave -EFAULT ({@link ProviderRule#GATHER_RANGE_ERRORS_AS_QP_OP_ERR}).
     *
     * @param profile the requester's profile.
     * @param check   the failed check.
     * @return true for LOC_QP_OP_ERR.
     */
    static boolean gatherErrorIsQpOpErr(final DeviceProfile profile, final KeyCheck check)
    {
        if (!profile.follows(ProviderRule.LOCAL_KEY_ERRORS_AS_QP_OP_ERR))
        {
            return false;
        }
        return switch (check)
        {
            case NO_SUCH_INDEX, VARIANT_MISMATCH, WRONG_PD, WRONG_STATE -> true;
            case OUT_OF_RANGE -> profile.follows(ProviderRule.GATHER_RANGE_ERRORS_AS_QP_OP_ERR);
            default -> false;
        };
    }
}
