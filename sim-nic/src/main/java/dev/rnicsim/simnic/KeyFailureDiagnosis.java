package dev.rnicsim.simnic;

import dev.rnicsim.dma.DmaResult;
import dev.rnicsim.mtt.KeyCheck;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptEntry;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcDiagnosis.Check;
import dev.rnicsim.verbs.WcStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The diagnosis of a refused key (an SGE's or a receive's lkey, or an rkey): the check that failed, the key's MPT
 * index and variant, what that index holds now and since when ({@link KeyHistory}), the range and the rights asked
 * against those registered, and the fix. What the words are made from is taken at the failure (values and immutable
 * records); the summary and the fix are made together, once, when the diagnosis is first read.
 *
 * <p>{@link Diagnoser} finds the key at fault and hands it here. The summary is made under this object's lock.
 */
final class KeyFailureDiagnosis
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
    private final Diagnoser.Who whoWords;
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

    private KeyFailureDiagnosis(final DeviceProfile profile, final String deviceName, final int variantBits,
        final int pd, final int qpn, final int key, final long index, final int access, final long addr,
        final long length, final KeyCheck check, final Diagnoser.Who who, final boolean local, final DmaResult r,
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

    /**
     * A refused key: the check, the key's index and variant and the summary now; the details (what the index holds
     * and since when, the ranges and rights, the fix) from what the device held at the failure, captured here and
     * written when read.
     */
    static WcDiagnosis of(final WcStatus status, final SimDevice device, final int pd, final int qpn, final int key,
        final int access, final long addr, final long length, final KeyCheck check, final Diagnoser.Who who,
        final DmaResult r)
    {
        final KeyHistory h = device.keyHistory();
        final long index = h.index(key);
        final KeyHistory.Event nowAt = h.last(index);
        final MptEntry own = device.tables().mpt().entry(key);
        final KeyHistory.Event mine = h.lastOf(key);
        final boolean local = who.namesLkey();
        final KeyAdvice advice = KeyAdvice.of(device, pd, key, local, addr, length, check, own, mine);
        final KeyFailureDiagnosis f = new KeyFailureDiagnosis(device.profile(), device.name(), h.variantBits(), pd,
            qpn, key, index, access, addr, length, check, who, local, r, nowAt, nowAt == null ? null
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
        return WcDiagnosis.lazy(kind, Diagnoser.vendorErr(device.profile(), status), key, index, h.variant(key),
            f::summary, f::details);
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
                final String offset = own == null ? null
                    : KeyAdvice.offsetAsAddress(addr, length, own.iova(), own.lengthBytes());
                fix = advice.rangeFix(offset != null ? offset : "fix: keep each access inside the MR or window "
                    + "(iova .. iova + length); register a larger range or split the transfer");
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
        return Diagnoser.reported(profile, details);
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
}
