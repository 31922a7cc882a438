package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcDiagnosis.Check;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the {@link WcDiagnosis} of a failed completion: the check that failed, the key at fault with its MPT index
 * and variant, what that index holds now and since when ({@link KeyHistory}), the range and the rights asked against
 * those registered, and the fix. Runs only on the failure path, right after the failure and before any state changes,
 * so that re-running the failed key check on the device's tables finds the same answer.
 *
 * <p>Stateless and thread safe (the devices it reads are not).
 */
final class Diagnoser
{
    private Diagnoser()
    {
    }

    /**
     * The mlx5 CQE error syndrome of a status, as the provider maps it back ({@code mlx5_handle_error_cqe} in rdma-core
     * providers/mlx5/cq.c; values from {@code enum MLX5_CQE_SYNDROME_*}).
     *
     * @param status a work-completion status.
     * @return the syndrome, or 0 for SUCCESS and statuses without one.
     */
    static int mlx5Syndrome(final WcStatus status)
    {
        return switch (status)
        {
            case LOC_LEN_ERR -> 0x01;
            case LOC_QP_OP_ERR -> 0x02;
            case LOC_PROT_ERR -> 0x04;
            case WR_FLUSH_ERR -> 0x05;
            case MW_BIND_ERR -> 0x06;
            case BAD_RESP_ERR -> 0x10;
            case LOC_ACCESS_ERR -> 0x11;
            case REM_INV_REQ_ERR -> 0x12;
            case REM_ACCESS_ERR -> 0x13;
            case REM_OP_ERR -> 0x14;
            case RETRY_EXC_ERR -> 0x15;
            case RNR_RETRY_EXC_ERR -> 0x16;
            case REM_ABORT_ERR -> 0x22;
            default -> 0;
        };
    }

    /**
     * The {@code vendor_err} a device's driver puts in the work completion: on a profile with
     * {@link ProviderRule#VENDOR_ERR_CQE_SYNDROME} (mlx4, mlx5) the CQE syndrome of the status; else 0 (rxe, siw,
     * irdma set no vendor error).
     *
     * @param profile the device's profile.
     * @param status  the completion's status.
     * @return the vendor_err value.
     */
    static int vendorErr(final DeviceProfile profile, final WcStatus status)
    {
        return profile.follows(ProviderRule.VENDOR_ERR_CQE_SYNDROME) ? mlx5Syndrome(status) : 0;
    }

    /**
     * @param device  the device that completes the work request.
     * @param details the diagnosis's lines.
     * @return the lines, led on a device without a CQE syndrome by what it reports instead.
     */
    private static List<String> reported(final SimDevice device, final List<String> details)
    {
        return reported(device.profile(), details);
    }

    static List<String> reported(final DeviceProfile profile, final List<String> details)
    {
        if (profile.follows(ProviderRule.VENDOR_ERR_CQE_SYNDROME))
        {
            return details;
        }
        final List<String> all = new ArrayList<>(details.size() + 1);
        all.add("vendor_err 0: " + profile.driver() + " reports the status only, with no CQE syndrome; the "
            + "check named here is the simulator's");
        all.addAll(details);
        return all;
    }

    /**
     * @param why    a diagnosis made for the requester's completion, or null.
     * @param status the status of the completion it goes with (the responder's may differ).
     * @return the diagnosis with that status's syndrome.
     */
    static WcDiagnosis withStatus(final WcDiagnosis why, final WcStatus status)
    {
        return why == null || why.syndrome() == 0 ? why : why.withSyndrome(mlx5Syndrome(status));
    }

    /** A failure of the DMA engine's checks (requester SGEs, responder rkey or receive buffers, lengths). */
    static WcDiagnosis dma(final SimQp qp, final SendWr wr, final SimQp peer, final RecvWr recv, final DmaResult r,
        final WcStatus status)
    {
        final Posted posted = Posted.of(qp, wr);
        if (r.requester() == DmaStatus.LOC_PROT_ERR || r.keyCheck() != KeyCheck.VALID && !r.responderError())
        {
            final int access = wr.opcode() == WrOpcode.RDMA_READ || wr.opcode().isAtomic() ? AccessFlags.LOCAL_WRITE
                : 0;
            final List<Sge> sgl = wr.sgList();
            final int bad = badSge(qp.simDevice(), qp.simPd().pdNum(), -1, access, sgl, r.keyCheck());
            final Sge s = sgl.get(bad);
            return KeyFailureDiagnosis.of(status, qp.simDevice(), qp.simPd().pdNum(), -1, s.lkey(), access,
                s.addr(), s.lengthBytes(), r.keyCheck(), new Who(posted, Who.SGE, bad, 0, s.lkey(), null), r);
        }
        if (r.keyCheck() != KeyCheck.VALID && r.responder() == DmaStatus.LOC_PROT_ERR && recv != null)
        {
            final List<Sge> sgl = recv.sgList();
            final int bad = badSge(peer.simDevice(), peer.simPd().pdNum(), peer.num(), AccessFlags.LOCAL_WRITE, sgl,
                r.keyCheck());
            final Sge s = sgl.get(bad);
            return KeyFailureDiagnosis.of(status, peer.simDevice(), peer.simPd().pdNum(), peer.num(), s.lkey(),
                AccessFlags.LOCAL_WRITE, s.addr(), s.lengthBytes(), r.keyCheck(), new Who(posted, Who.RECEIVE, bad,
                recv.wrId(), s.lkey(), null), r);
        }
        if (r.keyCheck() != KeyCheck.VALID)
        {
            final int access = switch (wr.opcode())
            {
                case RDMA_READ -> AccessFlags.REMOTE_READ;
                case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> AccessFlags.REMOTE_ATOMIC;
                case FLUSH -> PlacementOps.flushRight(wr);
                default -> AccessFlags.REMOTE_WRITE;
            };
            final long length = wr.opcode().isAtomic() || wr.opcode() == WrOpcode.ATOMIC_WRITE ? Long.BYTES
                : wr.opcode() == WrOpcode.FLUSH ? PlacementOps.flushLength(wr) : wr.totalBytes();
            return KeyFailureDiagnosis.of(status, peer.simDevice(), peer.simPd().pdNum(), peer.num(), wr.rkey(),
                access, wr.remoteAddr(), length, r.keyCheck(), new Who(posted, Who.RKEY, 0, 0, wr.rkey(),
                peer.simDevice().name()), r);
        }
        final Check check = status == WcStatus.LOC_LEN_ERR || r.responder() == DmaStatus.LOC_LEN_ERR ? Check.LENGTH
            : Check.INVALID_REQUEST;
        final DeviceProfile profile = qp.simDevice().profile();
        return WcDiagnosis.lazy(check, vendorErr(profile, status), 0, -1, -1, () -> posted + ": " + r.detail(),
            () -> reported(profile, List.of("engine: " + r.detail(), check == Check.LENGTH ? "fix: keep messages "
            + "within max_msg_sz and post receives at least as large as the message" : "fix: give the responder QP "
            + "the right in qp_access_flags (modify to INIT), or align atomics to 8 bytes")));
    }

    /**
     * The key a refused access named, as its diagnosis words it ({@code <posted>: local sge[0] lkey 0x...},
     * {@code <posted>: the responder's receive wr_id 7 sge[0] lkey 0x...}, {@code <posted>: rkey 0x... on mlx5_1}):
     * the values taken at the failure, the words made when read.
     */
    static final class Who
    {
        static final int SGE = 0;
        static final int RECEIVE = 1;
        static final int RKEY = 2;

        private final Posted posted;
        private final int kind;
        private final int sge;
        private final long recvWrId;
        private final int key;
        private final String deviceName;
        private String text;

        Who(final Posted posted, final int kind, final int sge, final long recvWrId, final int key,
            final String deviceName)
        {
            this.posted = posted;
            this.kind = kind;
            this.sge = sge;
            this.recvWrId = recvWrId;
            this.key = key;
            this.deviceName = deviceName;
        }

        /** True when the words name an lkey (what {@code toString().contains("lkey")} answers, without them). */
        boolean namesLkey()
        {
            return kind != RKEY || posted.names("lkey") || deviceName.contains("lkey");
        }

        @Override
        public String toString()
        {
            if (text == null)
            {
                text = posted + switch (kind)
                {
                    case SGE -> ": local sge[" + sge + "] lkey " + MKey.toHex(key);
                    case RECEIVE -> ": the responder's receive wr_id " + Long.toUnsignedString(recvWrId) + " sge[" + sge + "] lkey "
                        + MKey.toHex(key);
                    default -> ": rkey " + MKey.toHex(key) + " on " + deviceName;
                };
            }
            return text;
        }
    }

    /** The index of the SGE whose check fails (NOT_PRESENT: the first on-demand one), else of the first SGE. */
    private static int badSge(final SimDevice device, final int pd, final int qpn, final int access,
        final List<Sge> sgl, final KeyCheck failed)
    {
        for (int i = 0; i < sgl.size(); i++)
        {
            final Sge s = sgl.get(i);
            if (s.lengthBytes() == 0)
            {
                continue;
            }
            final KeyCheck c = device.tables().check(s.lkey(), pd, qpn, access, device.keyAddress(s.lkey(),
                s.addr()), s.lengthBytes());
            if (c != KeyCheck.VALID && (c == failed || failed == KeyCheck.NOT_PRESENT)
                || failed == KeyCheck.NOT_PRESENT && device.tables().isOnDemand(s.lkey()))
            {
                return i;
            }
        }
        return 0;
    }

    /** The send exhausted rnr_retry: no receive at the peer, or an ODP page fault that kept answering RNR NAK. */
    static WcDiagnosis rnr(final SimQp qp, final SendWr wr, final int rnrRetry, final String why)
    {
        return rnr(qp, wr, rnrRetry, why, "fix: post receives before the peer sends, or set rnr_retry=7 (retry "
            + "forever)");
    }

    /**
     * The send exhausted rnr_retry while the responder resolved a page fault of an ODP MR: the responder answers RNR
     * NAK until the fault is handled (mlx5 odp.c, IBA 9.7.5.2.8), so a receive has nothing to do with it; an ODP
     * target needs rnr_retry above 0 (its users are told so: "ODP utilizes RNR", rnr_retry_count must be non-zero).
     */
    static WcDiagnosis rnrOdp(final SimQp qp, final SendWr wr, final int rnrRetry, final String why)
    {
        return rnr(qp, wr, rnrRetry, why, "fix: an ODP responder answers RNR NAK while it resolves a page fault: "
            + "connect with rnr_retry above 0 (7: retry forever) and a min_rnr_timer the fault fits in, or prefetch "
            + "the pages at the responder (ibv_advise_mr), or register them without ODP");
    }

    private static WcDiagnosis rnr(final SimQp qp, final SendWr wr, final int rnrRetry, final String why,
        final String fix)
    {
        return new WcDiagnosis(Check.RECEIVER_NOT_READY, vendorErr(qp.simDevice().profile(),
            WcStatus.RNR_RETRY_EXC_ERR), 0, -1, -1, posted(qp, wr) + ": the responder answered RNR NAK "
            + (rnrRetry + 1) + (rnrRetry == 0 ? " time" : " times") + " (rnr_retry=" + rnrRetry + "): " + why,
            reported(qp.simDevice(), List.of(fix)));
    }

    /** No ACK: the peer QP is gone, not connected back, or not in RTR/RTS. */
    static WcDiagnosis noAck(final SimQp qp, final SendWr wr, final int retryCnt, final String why)
    {
        return new WcDiagnosis(Check.NO_ACK, vendorErr(qp.simDevice().profile(), WcStatus.RETRY_EXC_ERR), 0, -1, -1,
            posted(qp, wr) + ": no acknowledgement after retry_cnt=" + retryCnt + " retries: " + why,
            reported(qp.simDevice(), List.of("fix: connect both QPs to each other and move them to RTR/RTS before "
            + "posting")));
    }

    /**
     * No ACK, because the peer QP was destroyed while this one still had work for it: a destroyed QP answers nothing,
     * so the requester retries {@code retry_cnt} times and gives up (IBA 9.7.6.1.3). The usual cause is a teardown
     * without a disconnect handshake: one side destroys its QP (or exits) while the other still sends (UCX #844: the
     * disconnect protocol fixed its "transport retry counter exceeded").
     */
    static WcDiagnosis peerDestroyed(final SimQp qp, final SendWr wr, final int retryCnt, final SimQp gone)
    {
        return new WcDiagnosis(Check.NO_ACK, vendorErr(qp.simDevice().profile(), WcStatus.RETRY_EXC_ERR), 0, -1, -1,
            posted(qp, wr) + ": no acknowledgement after retry_cnt=" + retryCnt + " retries: the peer QP 0x"
            + Integer.toHexString(gone.num) + " on " + gone.device.name() + " was destroyed while this QP still had "
            + "work for it, and a destroyed QP answers nothing", reported(qp.simDevice(), List.of("fix: tear a "
            + "connection down so that neither side destroys its QP (or exits) while the other has work requests "
            + "outstanding to it: a disconnect handshake (stop posting, wait for the last completions, then tell the "
            + "peer), or move the QP to ERR and let the peer drain its flushed completions before destroying it")));
    }

    /**
     * No ACK, because the address vector's dest_qp_num names a QP that no device of the fabric has: on a real
     * network such a request reaches no responder either and ends after retry_cnt retries (IBA 9.7.5.1.1). The
     * usual cause in a simulation is a number learnt from a program on another fabric.
     */
    static WcDiagnosis noQpOnFabric(final SimQp qp, final SendWr wr, final int retryCnt, final int destQpNum)
    {
        return new WcDiagnosis(Check.NO_ACK, vendorErr(qp.simDevice().profile(), WcStatus.RETRY_EXC_ERR), 0, -1, -1,
            posted(qp, wr) + ": no acknowledgement after retry_cnt=" + retryCnt + " retries: dest_qp_num 0x"
            + Integer.toHexString(destQpNum) + " names no QP on any device of this fabric", reported(qp.simDevice(),
            List.of("the number came from elsewhere: a program on another simulated fabric (each `rnicsim exec` "
            + "without --fabric runs on a fabric of its own) or a stale or mistyped QP number",
            "fix: start both programs with the same `rnicsim exec --fabric NAME`, or connect to a QP number of "
            + "this fabric")));
    }

    /** The fix of a flushed work request. */
    private static final List<String> FLUSHED_FIX = List.of("fix: look at the first error completion of the QP; "
        + "recover by moving it to RESET and connecting it again");

    /**
     * A work request flushed because its QP is in the error state.
     *
     * @param cause the first error of the QP (words made when read, as this diagnosis's), or null.
     */
    static WcDiagnosis flushed(final SimQp qp, final long wrId, final CharSequence cause)
    {
        final DeviceProfile profile = qp.simDevice().profile();
        final int qpNum = qp.num();
        return WcDiagnosis.lazy(Check.FLUSHED, vendorErr(profile, WcStatus.WR_FLUSH_ERR), 0, -1, -1,
            () -> "wr_id " + Long.toUnsignedString(wrId) + " flushed: QP 0x" + Integer.toHexString(qpNum) + " is in ERR" + (cause == null
            ? "" : " since " + cause), () -> reported(profile, FLUSHED_FIX));
    }

    /**
     * A local operation (bind, local invalidation, fast registration, SEND_WITH_INV's invalidation) failed.
     *
     * @param why why, ending with {@code ; fix: ...} when it says how to fix it (words made when read), or null.
     */
    static WcDiagnosis local(final SimQp qp, final SendWr wr, final WcStatus status, final CharSequence why)
    {
        final DeviceProfile profile = qp.simDevice().profile();
        final Posted posted = Posted.of(qp, wr);
        final LocalWords words = new LocalWords(posted, why);
        return WcDiagnosis.lazy(Check.LOCAL_OPERATION, vendorErr(profile, status), 0, -1, -1, words::summary,
            () -> reported(profile, words.fix()));
    }

    /** The words of a failed local operation: the reason before {@code ; fix: }, and the fix. */
    private record LocalWords(Posted posted, CharSequence why)
    {
        String summary()
        {
            final String w = why == null ? null : why.toString();
            final int fix = w == null ? -1 : w.lastIndexOf("; fix: ");
            return posted + ": " + (w == null ? "refused" : fix < 0 ? w : w.substring(0, fix));
        }

        List<String> fix()
        {
            final String w = why == null ? null : why.toString();
            final int fix = w == null ? -1 : w.lastIndexOf("; fix: ");
            return fix < 0 ? List.of() : List.of(w.substring(fix + 2));
        }
    }

    /**
     * Names the work request and where it was posted: its WQE's post site (under a manual engine the WQE runs at a
     * later script line, a {@code progress} or {@code poll}), else the origin now.
     */
    static String posted(final SimQp qp, final SendWr wr)
    {
        return Posted.of(qp, wr).toString();
    }

    /**
     * A work request and where it was posted, as {@link #posted} words it: the values taken when it failed, the
     * words made when read.
     *
     * @param opcode its opcode.
     * @param wrId   its wr_id.
     * @param qpNum  its QP's number.
     * @param origin its post site, else the origin at the failure, or null.
     */
    record Posted(WrOpcode opcode, long wrId, int qpNum, String origin)
    {
        static Posted of(final SimQp qp, final SendWr wr)
        {
            final String site = qp.requester.postSite(wr);
            return new Posted(wr.opcode(), wr.wrId(), qp.num(), site != null ? site : qp.simDevice().fabric().origin());
        }

        /** True when the words hold {@code text} (which no opcode name and no number does). */
        boolean names(final String text)
        {
            return origin != null && origin.contains(text);
        }

        @Override
        public String toString()
        {
            return opcode + " wr_id " + Long.toUnsignedString(wrId) + " on QP 0x" + Integer.toHexString(qpNum)
                + (origin == null ? "" : " (" + origin + ")");
        }
    }
}
