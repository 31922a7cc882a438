package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChainArbitrary;

/**
 * The other retirements of a key as chain actions, to mix with {@link EngineActions}' messages in flight: a type 2
 * memory window bound, rebound and invalidated by work requests on the responder's QP, deallocated, queued WRITEs
 * through it, and a forked child exiting. With them, the invariant every step checks ({@link DmaInvariant}: no DMA
 * through a key after its dereg, dealloc, LOCAL_INV or unbind returned or completed) meets every kind of retirement.
 *
 * <p>The window (on side B) is bound to an MR of its own ({@code mrW}, 4 pages, MW_BIND and REMOTE_WRITE); the
 * binds and invalidations are unsignaled (no completion unless they fail).
 */
public final class RetirementActions
{
    private static final long WINDOW_MR_BYTES = 4 * 4096;

    private RetirementActions()
    {
    }

    /** The window of a chain and the MR it binds to; an attachment of the state. */
    public static final class Window
    {
        private MemoryRegion mr;
        private long mrAddr;
        private MemoryWindow mw;
        private long boundAddr;
        private long boundBytes;
        private int rkey;
        private int binds;

        /**
         * @return the rkey the window was last bound with (retired or not), or 0 before the first bind.
         */
        public int rkey()
        {
            return rkey;
        }

        /**
         * @return bind work requests posted (the first bind and the rebinds).
         */
        public int binds()
        {
            return binds;
        }
    }

    /**
     * Adds the window actions and {@link #exitChild()} (and {@link VerbsActions#fork()} so that there are children).
     *
     * @param chains the chain arbitrary.
     * @return it, with the actions.
     */
    public static ActionChainArbitrary<VerbsState> withRetirements(final ActionChainArbitrary<VerbsState> chains)
    {
        return chains.withAction(2, bind()).withAction(3, queuedWindowWrite()).withAction(1, invalidate())
            .withAction(1, dealloc()).withAction(1, VerbsActions.fork()).withAction(1, exitChild());
    }

    /**
     * {@code bind mw0 qp_b mrW+OFF SIZE}: binds (or rebinds, retiring the window's previous rkey) the window to a
     * range of its MR, allocating both the first time.
     *
     * @return the action.
     */
    public static Action<VerbsState> bind()
    {
        return VerbsActions.action("bind window", RetirementActions::hasType2Windows, s -> Arbitraries.integers()
            .between(0, 3).flatMap(page -> Arbitraries.integers().between(1, 4 - page).map(pages ->
                VerbsActions.step("bind mw0 qp_b mrW+" + page * 4096 + " " + pages * 4096 + "  # unsignaled",
                    st -> bindWindow(st, page * 4096L, pages * 4096L)))));
    }

    private static void bindWindow(final VerbsState st, final long offset, final long bytes)
    {
        final Window w = st.attachment(Window.class, Window::new);
        final TestNic nic = st.nic();
        try
        {
            if (w.mr == null)
            {
                w.mrAddr = nic.alloc(TestNic.Side.B, WINDOW_MR_BYTES);
                w.mr = nic.reg(TestNic.Side.B, w.mrAddr, WINDOW_MR_BYTES, Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.MW_BIND);
            }
            if (w.mw == null || w.mw.isClosed())
            {
                w.mw = nic.pd(TestNic.Side.B).allocMw(MwType.TYPE_2);
            }
            nic.ensureConnected();
            final int newRkey = SendWr.incRkey(w.mw.rkey());
            nic.qp(TestNic.Side.B).postSend(List.of(SendWr.bindMw(nic.nextWrId(), w.mw, newRkey, new MwBindInfo(w.mr,
                w.mrAddr + offset, bytes, EnumSet.of(Access.REMOTE_WRITE))).withFlags(Set.of())));
            w.rkey = newRkey;
            w.binds++;
            w.boundAddr = w.mrAddr + offset;
            w.boundBytes = bytes;
        }
        catch (final VerbsException | KernelException e)
        {
            st.record("  -> " + e.getMessage());
        }
    }

    /**
     * {@code post write qp_a sgl=src:LEN remote=mw0+OFF  # queued}: a WRITE through the window's last rkey, which
     * may have been retired since (then the WRITE fails; the invariant says it placed nothing).
     *
     * @return the action.
     */
    public static Action<VerbsState> queuedWindowWrite()
    {
        return VerbsActions.action("queued window write", s -> s.attachment(Window.class, Window::new).rkey != 0,
            s -> Arbitraries.longs().between(1, 3 * 4096L).map(len -> VerbsActions.step("post write qp_a sgl=src:"
                + len + " remote=mw0  # queued", st ->
                {
                    final Window w = st.attachment(Window.class, Window::new);
                    final long n = Math.min(len, Math.min(w.boundBytes, st.source().lengthBytes()));
                    if (n > 0)
                    {
                        final EngineActions.Queued q = st.attachment(EngineActions.Queued.class,
                            EngineActions.Queued::new);
                        q.queued(st.nic().queueWrite(st.source(), st.source().addr(), n, w.boundAddr, w.rkey),
                            st.nic().qp(TestNic.Side.A).qpNum());
                    }
                })));
    }

    /**
     * {@code post local_inv qp_b rkey=mw0  # unsignaled}: invalidates the window's rkey.
     *
     * @return the action.
     */
    public static Action<VerbsState> invalidate()
    {
        return VerbsActions.action("invalidate window", s -> s.attachment(Window.class, Window::new).rkey != 0
            && s.nic().device(TestNic.Side.B).profile().attributes().has(DeviceCap.MEM_MGT_EXTENSIONS),
            s -> Arbitraries.just(VerbsActions.step("post local_inv qp_b rkey=mw0  # unsignaled", st ->
            {
                final Window w = st.attachment(Window.class, Window::new);
                if (w.mw != null && !w.mw.isClosed())
                {
                    st.nic().ensureConnected();
                    st.nic().qp(TestNic.Side.B).postSend(List.of(SendWr.localInv(st.nic().nextWrId(), w.rkey)
                        .withFlags(Set.<SendFlag>of())));
                }
            })));
    }

    /**
     * {@code dealloc mw0}: deallocates the window (its key dies with it).
     *
     * @return the action.
     */
    public static Action<VerbsState> dealloc()
    {
        return VerbsActions.action("dealloc window", s -> s.attachment(Window.class, Window::new).mw != null,
            s -> Arbitraries.just(VerbsActions.step("dealloc mw0", st ->
            {
                final Window w = st.attachment(Window.class, Window::new);
                if (w.mw != null && !w.mw.isClosed())
                {
                    try
                    {
                        w.mw.close();
                    }
                    catch (final VerbsException e)
                    {
                        st.record("  -> " + e.getMessage());
                    }
                }
            })));
    }

    /**
     * {@code exit childN}: the youngest forked child still running exits (its copy-on-write pages go back).
     *
     * @return the action.
     */
    public static Action<VerbsState> exitChild()
    {
        return VerbsActions.action("exit child", s -> true, s -> Arbitraries.just(VerbsActions.step("exit child",
            st -> st.nic().exitChild())));
    }

    private static boolean hasType2Windows(final VerbsState s)
    {
        final var a = s.nic().device(TestNic.Side.B).profile().attributes();
        return a.maxMw() > 0 && a.has(DeviceCap.MEM_WINDOW) && (a.has(DeviceCap.MEM_WINDOW_TYPE_2A)
            || a.has(DeviceCap.MEM_WINDOW_TYPE_2B));
    }
}
