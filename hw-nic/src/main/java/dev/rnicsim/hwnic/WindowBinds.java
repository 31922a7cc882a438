package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * {@code ibv_bind_mw} (ibv_bind_mw(3)) as verbs.h inlines it, for {@link RdmaQp#bindMw}: the library checks, then
 * the call through the context's ops table ({@link RegistrationVerbs#bindMw}).
 *
 * <p>Thread safe: stateless (the QP is not).
 */
final class WindowBinds
{
    private WindowBinds()
    {
    }

    /**
     * {@code ibv_bind_mw}: verbs.h's inline checks (EINVAL for a window that is not type 1, EINVAL for no MR with
     * an address or length, EPERM when the MR's and the window's PDs differ, compared on the native structs as
     * verbs.h does), then {@code context->ops.bind_mw}, which posts the bind and stores the new rkey in the window.
     *
     * @param qp    the QP that posts the bind (open).
     * @param mw    a type 1 window of the QP's context.
     * @param wrId  the bind's work request id.
     * @param flags its send flags.
     * @param info  the MR, range and rights.
     * @return the window's new rkey.
     * @throws VerbsException EINVAL and EPERM from the inline checks, or the errno the provider gave.
     */
    static int bind(final RdmaQp qp, final MemoryWindow mw, final long wrId, final Set<SendFlag> flags,
        final MwBindInfo info)
    {
        final String verb = "ibv_bind_mw";
        final RdmaPd pd = qp.pd();
        if (!(mw instanceof RdmaMw m) || m.isClosed())
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "mw is not a live window of this backend: " + mw);
        }
        if (m.pd().context() != pd.context())
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the window belongs to another device context than"
                + " this QP");
        }
        if (info == null || flags == null || RdmaPd.hasNull(flags))
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "mw_bind and its send flags must be given");
        }
        if (m.type() != MwType.TYPE_1)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "ibv_bind_mw binds type 1 windows; bind a type 2 "
                + "window with a posted BIND_MW work request (verbs.h ibv_bind_mw)");
        }
        if (info.mr() == null && (info.addr() != 0 || info.lengthBytes() != 0))
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "no MR but addr=0x" + Long.toHexString(info.addr())
                + " length=" + info.lengthBytes() + " (verbs.h ibv_bind_mw)");
        }
        MemorySegment mr = MemorySegment.NULL;
        if (info.mr() != null)
        {
            if (!(info.mr() instanceof RdmaMr r) || r.isClosed())
            {
                throw new VerbsException(verb, Errno.EINVAL.code(), "the MR is not a registered MR of this backend: "
                    + info.mr());
            }
            if (r.nativePd() != m.nativePd())
            {
                throw new VerbsException(verb, Errno.EPERM.code(), "the MR and the window are in different PDs "
                    + "(verbs.h ibv_bind_mw)");
            }
            mr = r.segment();
        }
        int bits = 0;
        for (final SendFlag f : flags)
        {
            bits |= f.bit();
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment bind = a.allocate(WrStructs.IBV_MW_BIND);
            bind.set(JAVA_LONG, WrStructs.MW_BIND_WR_ID, wrId);
            bind.set(JAVA_INT, WrStructs.MW_BIND_SEND_FLAGS, bits);
            WorkRequests.bindInfo(bind.asSlice(WrStructs.MW_BIND_BIND_INFO, WrStructs.IBV_MW_BIND_INFO), mr, info);
            final Errnos.Result r = pd.context().lib().registration().bindMw(pd.context().segment(), qp.segment(),
                m.segment(), bind);
            if (r.value() != 0)
            {
                throw new VerbsException(verb, r.errno(), "window rkey=0x" + Integer.toHexString(m.rkey()) + " on QP 0x"
                    + Integer.toHexString(qp.qpNum()) + " in " + qp.state());
            }
        }
        return m.rkey();
    }
}
