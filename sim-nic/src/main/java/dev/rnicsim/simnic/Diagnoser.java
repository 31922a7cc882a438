package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.dma.DmaStatus;
import dev.rnicsim.mtt.AccessFlags;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptEntry;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcDiagnosis.Check;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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

    private static List<String> reported(final DeviceProfile profile, final List<String> details)
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
            return keyFailure(status, qp.simDevice(), qp.simPd().pdNum(), -1, s.lkey(), access, s.addr(),
                s.lengthBytes(), r.keyCheck(), new Who(posted, Who.SGE, bad, 0, s.lkey(), null), r);
        }
        if (r.keyCheck() != KeyCheck.VALID && r.responder() == DmaStatus.LOC_PROT_ERR && recv != null)
        {
            final List<Sge> sgl = recv.sgList();
            final int bad = badSge(peer.simDevice(), peer.simPd().pdNum(), peer.num(), AccessFlags.LOCAL_WRITE, sgl,
                r.keyCheck());
            final Sge s = sgl.get(bad);
            return keyFailure(status, peer.simDevice(), peer.simPd().pdNum(), peer.num(), s.lkey(),
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
            return keyFailure(status, peer.simDevice(), peer.simPd().pdNum(), peer.num(), wr.rkey(), access,
                wr.remoteAddr(), length, r.keyCheck(), new Who(posted, Who.RKEY, 0, 0, wr.rkey(),
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
                    case RECEIVE -> ": the responder's receive wr_id " + recvWrId + " sge[" + sge + "] lkey "
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

    /**
     * A refused key: the check, the key's index and variant and the summary now; the details (what the index holds
     * and since when, the ranges and rights, the fix) from what the device held at the failure, captured here and
     * written when read.
     */
    private static WcDiagnosis keyFailure(final WcStatus status, final SimDevice device, final int pd, final int qpn,
        final int key, final int access, final long addr, final long length, final KeyCheck check, final Who who,
        final DmaResult r)
    {
        final KeyHistory h = device.keyHistory();
        final long index = h.index(key);
        final KeyHistory.Event nowAt = h.last(index);
        final MptEntry own = device.tables().mpt().entry(key);
        final KeyHistory.Event mine = h.lastOf(key);
        final boolean local = who.namesLkey();
        final KeyAdvice advice = KeyAdvice.of(device, pd, key, local, addr, length, check, own, mine);
        final KeyFailure f = new KeyFailure(device.profile(), device.name(), h.variantBits(), pd, qpn, key, index,
            access, addr, length, check, who, local, r, nowAt, nowAt == null ? null
            : device.tables().mpt().entry(nowAt.key()), own, mine, h.firstOf(key), h.events(index), advice);
        final Check kind = advice.windowType() != 0 ? Check.STATE : switch (check)
        {
            case NO_SUCH_INDEX -> Check.KEY_INDEX;
            case VARIANT_MISMATCH -> Check.KEY_VARIANT;
            case WRONG_PD -> Check.PD;
            case RIGHTS_MISSING -> Check.RIGHTS;
            case WRONG_STATE -> Check.STATE;
            case OUT_OF_RANGE -> Check.RANGE;
            case WRONG_QP -> Check.WINDOW_QP;
            default -> SimPeerMr.revokedBy(h.lastOf(key)) ? Check.REVOKED : Check.ODP_FAULT;
        };
        return WcDiagnosis.lazy(kind, vendorErr(device.profile(), status), key, index, h.variant(key), f::summary,
            f::details);
    }

    /**
     * What a key failure's words are made from: values and immutable records taken at the failure; the summary and
     * the fix are made together, once, when the diagnosis is first read.
     */
    private static final class KeyFailure
    {
        private final DeviceProfile profile;
        private final String deviceName;
        private final int variantBits;
        private final int pd;
        private final int qpn;
        private final int key;
        private final long index;
        private final int access;
        private final long addr;
        private final long length;
        private final KeyCheck check;
        private final Who whoWords;
        private final boolean local;
        private final DmaResult r;
        private final KeyHistory.Event nowAt;
        private final MptEntry now;
        private final MptEntry own;
        private final KeyHistory.Event mine;
        private final KeyHistory.Event born;
        private final List<KeyHistory.Event> events;
        private final KeyAdvice advice;
        private String[] made;

        KeyFailure(final DeviceProfile profile, final String deviceName, final int variantBits, final int pd,
            final int qpn, final int key, final long index, final int access, final long addr, final long length,
            final KeyCheck check, final Who who, final boolean local, final DmaResult r,
            final KeyHistory.Event nowAt, final MptEntry now, final MptEntry own, final KeyHistory.Event mine,
            final KeyHistory.Event born, final List<KeyHistory.Event> events, final KeyAdvice advice)
        {
            this.profile = profile;
            this.deviceName = deviceName;
            this.variantBits = variantBits;
            this.pd = pd;
            this.qpn = qpn;
            this.key = key;
            this.index = index;
            this.access = access;
            this.addr = addr;
            this.length = length;
            this.check = check;
            this.whoWords = who;
            this.local = local;
            this.r = r;
            this.nowAt = nowAt;
            this.now = now;
            this.own = own;
            this.mine = mine;
            this.born = born;
            this.events = events;
            this.advice = advice;
        }

        /** The summary, made once. */
        synchronized String summary()
        {
            if (made == null)
            {
                made = summaryAndFix();
            }
            return made[0];
        }

        /** The details, ending with the fix made with the summary. */
        List<String> details()
        {
            summary();
            return details(made[1]);
        }

        /** The summary, and the line that says how to fix it. */
        private String[] summaryAndFix()
        {
            final String who = whoWords.toString();
            final String summary;
            final String fix;
            switch (check)
            {
                case NO_SUCH_INDEX ->
                {
                    final boolean noRkey = key == 0 && mine == null && profile.rkeyOnlyWithRemoteAccess();
                    summary = who + " names MPT index 0x" + Long.toHexString(index) + ", which holds nothing now"
                        + (noRkey ? ": 0 is the rkey " + profile.driver() + " gives an MR registered without "
                        + "remote rights (no rkey at all), never a key that names an MR"
                        : mine == null ? " and never held this key on this device (a key of another device, made up, "
                        + "or read from an MR whose registration failed)"
                        : ": the key's " + shortName(mine) + " was " + (born != null && born != mine ? born.describe()
                        + ", then " : "") + mine.describe());
                    fix = noRkey ? (local ? "fix: an SGE takes the MR's lkey (mr->lkey), not its "
                        + "rkey: the two are equal on mlx4, mlx5 and siw, so code that mixes them up works there and "
                        + "fails here"
                        : "fix: register the target MR with the remote right the operation needs (REMOTE_WRITE, "
                        + "REMOTE_READ or REMOTE_ATOMIC) and hand the peer its rkey")
                        : mine == null ? advice.neverIssuedFix(key, deviceName, local, pd, addr, length)
                        : advice.staleFix(check, mine, "fix: use the key of a live MR; deregister an MR only after its "
                        + "last work request completed, and tell peers when an rkey is revoked");
                }
                case VARIANT_MISMATCH ->
                {
                    final boolean neverIssued = advice.neverIssued();
                    final String[] beforeBind = advice.beforeBind(who, nowAt, mine);
                    final String holds = "MPT index 0x" + Long.toHexString(index) + " now holds " + (nowAt == null
                        ? "another variant" : "key " + MKey.toHex(nowAt.key()) + " (" + shortName(nowAt) + " "
                        + nowAt.describe() + ")");
                    summary = beforeBind != null ? beforeBind[0] : neverIssued ? who + " was never issued on this "
                        + "device: " + holds + ", and none of its keys so far was this one (a key of another device, "
                        + "made up, or read from an MR whose registration failed)"
                        : who + " is stale: " + holds + (mine == null ? "" : "; this key's " + shortName(mine)
                        + " was " + (born != null && born != mine ? born.describe() + ", then " : "")
                        + mine.describe());
                    fix = beforeBind != null ? beforeBind[1] : neverIssued ? advice.neverIssuedFix(key, deviceName,
                        local, pd, addr, length) : advice.staleFix(check, mine, "fix: the index was "
                        + "reused after the key's MR or window went away: use the current key, and never keep keys "
                        + "past deregistration (a recycled variant could even match again)");
                }
                case WRONG_PD ->
                {
                    summary = who + " belongs to PD " + (own == null ? "?" : own.pd()) + (born == null ? ""
                        : " (its " + shortName(born) + " " + born.describe() + ")") + " but the QP's PD is " + pd;
                    fix = advice.pdFix("fix: register the memory in the PD of the QP that uses it (or create the QP "
                        + "in the MR's PD)");
                }
                case RIGHTS_MISSING ->
                {
                    final String[] unbound = advice.unboundWindow(who, mine);
                    final int missing = access & ~(own == null ? 0 : own.access());
                    summary = unbound != null ? unbound[0] : who + " lacks " + Access.fromBits(missing) + ": asked "
                        + Access.fromBits(access) + ", granted " + (own == null ? "?" : Access.fromBits(own.access()))
                        + (born == null ? "" : " (its " + shortName(born) + " " + born.describe() + ")");
                    fix = unbound != null ? unbound[1] : KeyAdvice.rightsFix(missing, who,
                        born != null && "window".equals(shortName(born)));
                }
                case WRONG_STATE ->
                {
                    final String[] unbound = advice.unboundWindow(who, mine);
                    summary = unbound != null ? unbound[0] : who + " names an entry in state " + (own == null ? "?"
                        : own.state()) + ", not VALID" + (mine == null ? "" : " (" + mine.describe() + ")");
                    fix = unbound != null ? unbound[1] : "fix: register the fast-registration MR (post REG_MR) or bind "
                        + "the window before using its key";
                }
                case OUT_OF_RANGE ->
                {
                    summary = who + ": asked " + range(addr, length) + " (" + length + " bytes), registered "
                        + (own == null ? "?" : range(own.iova(), own.lengthBytes()) + " (" + own.lengthBytes()
                        + " bytes)" + KeyAdvice.overshoot(addr, length, own.iova(), own.lengthBytes()));
                    fix = advice.rangeFix("fix: keep each access inside the MR or window (iova .. iova + length); "
                        + "register a larger range or split the transfer");
                }
                case WRONG_QP ->
                {
                    summary = who + " names a type 2 window bound for another QP, not QP 0x" + Integer.toHexString(qpn)
                        + (mine == null ? "" : ": " + mine.object() + ", " + mine.describe());
                    fix = "fix: a type 2 window serves only the QP it was bound through: bind it through QP 0x"
                        + Integer.toHexString(qpn) + ", the QP this peer's requests arrive on";
                }
                default ->
                {
                    if (SimPeerMr.revokedBy(mine))
                    {
                        summary = who + " names an MR whose translation was revoked (" + mine.describe() + "): the "
                            + "key is live but reaches no page: " + r.detail();
                        fix = "fix: free GPU memory only after the last work request on its MR completed and the MR "
                            + "was deregistered; a peer must stop using the rkey before the buffer goes";
                        return new String[] {summary, fix};
                    }
                    summary = who + ": the device has no translation and the page fault failed: " + r.detail();
                    fix = "fix: map (and for writes, make writable) the memory behind an ODP MR before the peer uses "
                        + "it";
                }
            }
            return new String[] {summary, fix};
        }

        /** The lines after the summary, ending with the fix. */
        private List<String> details(final String fix)
        {
            final List<String> details = new ArrayList<>();
            details.add(String.format(Locale.ROOT, "key %s: MPT index 0x%x, variant 0x%x (%d variant bits) on %s",
                MKey.toHex(key), index, MKey.variant(key, variantBits), variantBits, deviceName));
            if (now != null && nowAt != null && nowAt.key() != key)
            {
                details.add("index 0x" + Long.toHexString(index) + " holds now: key " + MKey.toHex(nowAt.key()) + ", "
                    + nowAt.object() + ", " + nowAt.describe());
            }
            if (own != null && advice.windowType() == 0 && (check == KeyCheck.OUT_OF_RANGE
                || check == KeyCheck.RIGHTS_MISSING))
            {
                details.add(String.format(Locale.ROOT, "registered: %s, rights %s, PD %d", range(own.iova(),
                    own.lengthBytes()), Access.fromBits(own.access()), own.pd()));
                details.add(String.format(Locale.ROOT, "asked: %s, rights %s, PD %d", range(addr, length),
                    Access.fromBits(access), pd));
            }
            for (final KeyHistory.Event e : events)
            {
                details.add("history of index 0x" + Long.toHexString(index) + ": " + e.line());
            }
            details.add("engine: " + r.detail());
            details.add(fix);
            return reported(profile, details);
        }
    }

    /** @return {@code [0x<addr>, 0x<addr + length>)}, or how it wraps past 2^64 ({@link AddressRangeText}). */
    private static String range(final long addr, final long length)
    {
        return AddressRangeText.of(addr, length);
    }

    /** {@code MR} or {@code window}: what an event's key named. */
    private static String shortName(final KeyHistory.Event e)
    {
        // An MR's event has no text (its object() is "MR of ..."), nor has a bare key's ("key 0x..."): only a
        // window's text can name a window, and reading it spares formatting the MR's words.
        return e.mr() == null && e.text() != null && e.text().contains("window") ? "window" : "MR";
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
            () -> "wr_id " + wrId + " flushed: QP 0x" + Integer.toHexString(qpNum) + " is in ERR" + (cause == null
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
            return opcode + " wr_id " + wrId + " on QP 0x" + Integer.toHexString(qpNum)
                + (origin == null ? "" : " (" + origin + ")");
        }
    }
}
