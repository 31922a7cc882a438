package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.MKey;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What a diagnosis says about the common key mistakes beyond the check ({@link KeyAdvice}): a key this device never
 * issued (made up, or another device's) and the key to use instead, a window that is no longer bound and since
 * which call, the right that is missing, how far an access overshoots, an MR's key given to LOCAL_INV. The status
 * stays the device's in every case.
 */
class KeyAdviceTest
{
    private static final Set<Access> READ_WRITE = EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE);

    /** An RDMA WRITE of 64 bytes from the scratch buffer under {@code lkey} to b's {@code remoteAddr}. */
    private static WorkCompletion writeWithLkey(final KeyRig k, final int lkey, final long localAddr,
        final long remoteAddr, final int rkey)
    {
        return k.post(k.pair().a(), SendWr.write(k.nextWrId(), List.of(new Sge(localAddr, 64, lkey)), remoteAddr,
            rkey));
    }

    private static WorkCompletion writeTo(final KeyRig k, final long remoteAddr, final int rkey, final int length)
    {
        return k.post(k.pair().a(), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch,
            length)), remoteAddr, rkey));
    }

    @Test
    void aMadeUpLkeyShouldBeCalledNeverIssuedAndTheLkeyOfTheMrCoveringTheAddressOffered()
    {
        final KeyRig k = KeyRig.connectx5();
        final long target = k.rig.bufferB(PAGE);
        final MemoryRegion dst = k.rig.pdB.regMr(target, PAGE, RuleRig.REMOTE_ALL);

        final WorkCompletion wc = writeWithLkey(k, 0x00abcd00, k.scratch, target, dst.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        final WcDiagnosis d = wc.diagnosis();
        assertThat(d.check()).isEqualTo(WcDiagnosis.Check.KEY_INDEX);
        assertThat(d.details()).last().asString()
            .startsWith("fix: 0x00abcd00 was never issued on sim:a/dev0: use the lkey "
                + MKey.toHex(k.scratchMr.lkey()) + " of the MR of ")
            .contains(String.format("which covers [0x%x, 0x%x)", k.scratch, k.scratch + 64))
            .doesNotContain("deregister");
    }

    @Test
    void aMadeUpLkeyOverMemoryNoMrCoversShouldSayToRegisterIt()
    {
        final KeyRig k = KeyRig.connectx5();
        final long target = k.rig.bufferB(PAGE);
        final MemoryRegion dst = k.rig.pdB.regMr(target, PAGE, RuleRig.REMOTE_ALL);
        final long unregistered = k.rig.bufferA(PAGE);

        final WorkCompletion wc = writeWithLkey(k, 0x00abcd00, unregistered, target, dst.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        assertThat(wc.diagnosis().text()).contains("fix: 0x00abcd00 was never issued on sim:a/dev0: no MR of PD ")
            .contains("register that memory (ibv_reg_mr) in the QP's PD and use the new MR's lkey");
    }

    @Test
    void anLkeyOfAnotherDeviceShouldNameTheDeviceThatIssuedIt()
    {
        final KeyRig k = KeyRig.connectx5();
        final long target = k.rig.bufferB(4 * PAGE);
        // b's third and fourth MRs take indices a has never used
        k.rig.pdB.regMr(target, PAGE, RuleRig.REMOTE_ALL);
        k.rig.pdB.regMr(target + PAGE, PAGE, RuleRig.REMOTE_ALL);
        final MemoryRegion onB = k.rig.pdB.regMr(target + 2 * PAGE, PAGE, RuleRig.REMOTE_ALL);
        assertThat(k.rig.deviceA.tables().mpt().entry(onB.lkey())).isNull();

        final WorkCompletion wc = writeWithLkey(k, onB.lkey(), k.scratch, target, onB.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        assertThat(wc.diagnosis().text()).contains("was never issued on sim:a/dev0; it is a key of sim:b/dev0, where "
            + "it names MR of 4096 bytes").contains("a key is valid only on the device that issued it")
            .contains("use the lkey " + MKey.toHex(k.scratchMr.lkey()));
    }

    @Test
    void aWindowWhoseMrWasDeregisteredShouldBeCalledNoLongerBoundNotShortOfARight()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final KeyRig.Pair p = k.pair();
        final int rkey = SendWr.incRkey(mw.rkey());
        assertThat(k.post(p.b(), SendWr.bindMw(k.nextWrId(), mw, rkey, new MwBindInfo(mr, buf, PAGE, READ_WRITE)))
            .status()).isEqualTo(WcStatus.SUCCESS);
        k.rig.fabric.origin("app.c:88 (ibv_dereg_mr)");
        mr.close(); // connectx5 lets it go with the window bound
        k.rig.fabric.origin(null);

        final WorkCompletion wc = k.post(p.a(), SendWr.read(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr,
            k.scratch, 64)), buf, rkey));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        final WcDiagnosis d = wc.diagnosis();
        assertThat(d.check()).isEqualTo(WcDiagnosis.Check.STATE);
        assertThat(d.summary()).contains("names a type 2 window that is no longer bound: its MR was deregistered "
            + "(invalidated at app.c:88 (ibv_dereg_mr))").doesNotContain("lacks");
        assertThat(d.details()).last().asString().startsWith("fix: unbind or deallocate the windows of an MR before "
            + "deregistering it").contains("bind it again to a live MR");
        assertThat(d.details()).noneMatch(l -> l.startsWith("registered: "));
    }

    @Test
    void aWindowInvalidatedByLocalInvShouldSaySo()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 2 * PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final KeyRig.Pair p = k.pair();
        final int rkey = SendWr.incRkey(mw.rkey());
        assertThat(k.post(p.b(), SendWr.bindMw(k.nextWrId(), mw, rkey, new MwBindInfo(mr, buf, PAGE, READ_WRITE)))
            .status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.post(p.b(), SendWr.localInv(k.nextWrId(), rkey)).status()).isEqualTo(WcStatus.SUCCESS);

        final WorkCompletion wc = k.post(p.a(), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr,
            k.scratch, 8)), buf, rkey));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().check()).isEqualTo(WcDiagnosis.Check.STATE);
        assertThat(wc.diagnosis().summary()).contains("no longer bound: a LOCAL_INV or a SEND_WITH_INV from the "
            + "peer invalidated it (invalidated by invalidate_mw (key event #");
        assertThat(wc.diagnosis().text()).contains("fix: a peer must stop using a window's rkey once it is "
            + "invalidated");
    }

    @Test
    void aWindowNeverBoundShouldSaySo()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);

        final WorkCompletion wc = writeTo(k, buf, mw.rkey(), 8);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("names a type 2 window that was never bound");
        assertThat(wc.diagnosis().text()).contains("fix: bind the window to an MR first");
    }

    @Test
    void aMissingRightShouldBeNamedInTheFixWithTheMrsRegistration()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        k.rig.fabric.origin("app.c:12 (ibv_reg_mr)");
        final MemoryRegion mr = k.rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        k.rig.fabric.origin(null);

        final WorkCompletion wc = writeTo(k, buf, mr.rkey(), 8);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().check()).isEqualTo(WcDiagnosis.Check.RIGHTS);
        assertThat(wc.diagnosis().summary()).endsWith("(its MR registered at app.c:12 (ibv_reg_mr))");
        assertThat(wc.diagnosis().details()).last().asString().isEqualTo("fix: register the MR with [REMOTE_WRITE] "
            + "and LOCAL_WRITE, which remote writes and atomics need, or change it with "
            + "ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS)");
    }

    @Test
    void anAccessPastTheEndShouldSayByHowMuchAndWhichMrCoversIt()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(2 * PAGE);
        final MemoryRegion small = k.rig.pdB.regMr(buf, PAGE, RuleRig.REMOTE_ALL);
        final MemoryRegion whole = k.rig.pdB.regMr(buf, 2 * PAGE, RuleRig.REMOTE_ALL);

        final WorkCompletion wc = writeTo(k, buf + PAGE - 6, small.rkey(), 64);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).endsWith("(4096 bytes): 58 bytes past its end");
        assertThat(wc.diagnosis().details()).last().asString().endsWith("the rkey " + MKey.toHex(whole.rkey())
            + " of the MR of 8192 bytes at iova 0x" + Long.toHexString(buf) + " (registered by ibv_reg_mr (key event"
            + " #" + k.deviceB().keyHistory().firstOf(whole.lkey()).sequence() + ")) covers the whole range asked: "
            + "use that key");
    }

    @Test
    void anMrOfAnotherPdShouldBeNamedWithItsRegistration()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        k.rig.fabric.origin("app.c:40 (ibv_reg_mr)");
        final MemoryRegion mr = k.rig.ctxB.allocPd().regMr(buf, PAGE, RuleRig.REMOTE_ALL);
        k.rig.fabric.origin(null);

        final WorkCompletion wc = writeTo(k, buf, mr.rkey(), 8);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).containsPattern("belongs to PD \\d+ \\(its MR registered at app.c:40 "
            + "\\(ibv_reg_mr\\)\\) but the QP's PD is \\d+");
    }

    @Test
    void localInvOfAnOrdinaryMrsKeyShouldNameTheMrAndHowToRevokeIt()
    {
        final KeyRig k = KeyRig.connectx5();

        final WorkCompletion wc = k.post(k.pair().a(), SendWr.localInv(k.nextWrId(), k.scratchMr.lkey()));

        assertThat(wc.status()).isEqualTo(WcStatus.LOC_QP_OP_ERR);
        assertThat(wc.diagnosis().check()).isEqualTo(WcDiagnosis.Check.LOCAL_OPERATION);
        assertThat(wc.diagnosis().summary()).contains("rkey 0x" + Integer.toHexString(k.scratchMr.lkey())
            + " is the key of an ordinary MR (MR of ").contains("which no work request can invalidate")
            .doesNotContain("fix:");
        assertThat(wc.diagnosis().details()).last().asString().startsWith("fix: revoke an MR's keys with "
            + "ibv_dereg_mr");
    }

    @Test
    void aKeyOfAnotherProcessesPdShouldNameBothProcesses()
    {
        final KeyRig k = KeyRig.connectx5();
        final SimContext other = k.rig.deviceB.open(k.rig.deviceB.host().host().spawn("other"));
        final long buf = other.memory().allocate(PAGE, Backing.BASE_PAGES);
        final MemoryRegion mr = other.allocPd().regMr(buf, PAGE, RuleRig.REMOTE_ALL);

        final WorkCompletion wc = writeTo(k, buf, mr.rkey(), 8);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().check()).isEqualTo(WcDiagnosis.Check.PD);
        assertThat(wc.diagnosis().details()).last().asString().containsPattern("fix: the key's PD \\d+ is process "
            + "\\d+'s \\(other\\), the QP's PD \\d+ process \\d+'s \\(responder\\): a key serves only the QPs of its "
            + "own PD, and PDs are per process");
    }

    @Test
    void localInvOfATypeOneWindowShouldSayHowToUnbindIt()
    {
        final KeyRig k = KeyRig.connectx5();
        final MemoryRegion mr = k.rig.pdB.regMr(k.rig.bufferB(PAGE), PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_1);
        final KeyRig.Pair p = k.pair();
        final int rkey = k.bind1(p.b(), mw, new MwBindInfo(mr, mr.addr(), PAGE, READ_WRITE));

        final WorkCompletion wc = k.post(p.b(), SendWr.localInv(k.nextWrId(), rkey));

        assertThat(wc.status()).isEqualTo(WcStatus.LOC_QP_OP_ERR);
        assertThat(wc.diagnosis().summary()).endsWith("names a type 1 window, which cannot be invalidated "
            + "(rxe_invalidate_mw)");
        assertThat(wc.diagnosis().details()).last().asString().startsWith("fix: unbind a type 1 window with "
            + "ibv_bind_mw of length 0");
    }

    @Test
    void anRkeyReplacedByReregShouldNameTheCallAndTheNewKey()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(16 * PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 4 * PAGE, RuleRig.REMOTE_ALL);
        final int old = mr.rkey();
        k.rig.fabric.origin("app.c:70 (ibv_rereg_mr)");
        mr.rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, buf, 16 * PAGE, EnumSet.noneOf(Access.class));
        k.rig.fabric.origin(null);
        assertThat(mr.rkey()).as("connectx5 gives a larger translation new keys").isNotEqualTo(old);

        final WorkCompletion wc = writeTo(k, buf, old, 8);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().details()).last().asString().startsWith("fix: ibv_rereg_mr gave the MR new keys "
            + "(invalidated at app.c:70 (ibv_rereg_mr)) and the old ones stopped translating: use the rkey "
            + MKey.toHex(mr.rkey()) + " of the MR of 65536 bytes");
    }

    @Test
    void aReceiveBufferWithoutLocalWriteShouldBeNamedSo()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryRegion readOnly = k.rig.pdB.regMr(buf, PAGE, EnumSet.noneOf(Access.class));
        final KeyRig.Pair p = k.pair();
        p.b().postRecv(dev.rnicsim.verbs.RecvWr.of(k.nextWrId(), RuleRig.sge(readOnly, buf, 64)));

        final WorkCompletion wc = k.post(p.a(), SendWr.send(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr,
            k.scratch, 8))));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_OP_ERR);
        assertThat(wc.diagnosis().details()).last().asString().isEqualTo("fix: register the receive buffer's MR "
            + "with [LOCAL_WRITE] (the device writes each message it receives into it), or change it with "
            + "ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS)");
    }

    @Test
    void aWindowOfAnotherQpShouldNameTheQpToBindItThrough()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final KeyRig.Pair owner = k.pair();
        final int rkey = SendWr.incRkey(mw.rkey());
        assertThat(k.post(owner.b(), SendWr.bindMw(k.nextWrId(), mw, rkey, new MwBindInfo(mr, buf, PAGE,
            READ_WRITE))).status()).isEqualTo(WcStatus.SUCCESS);
        final KeyRig.Pair other = k.pair();

        final WorkCompletion wc = k.post(other.a(), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr,
            k.scratch, 8)), buf, rkey));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().check()).isEqualTo(WcDiagnosis.Check.WINDOW_QP);
        assertThat(wc.diagnosis().details()).last().asString().isEqualTo("fix: a type 2 window serves only the QP "
            + "it was bound through: bind it through QP 0x" + Integer.toHexString(other.b().qpNum()) + ", the QP "
            + "this peer's requests arrive on");
    }

    @Test
    void aLocalInvalidationRunLaterShouldBeRecordedAtTheLineThatPostedIt()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final KeyRig.Pair p = k.pair();
        final int rkey = SendWr.incRkey(mw.rkey());
        k.rig.fabric.origin("app.c:20 (post BIND_MW)");
        p.b().postSend(SendWr.bindMw(k.nextWrId(), mw, rkey, new MwBindInfo(mr, buf, PAGE, READ_WRITE)));
        k.rig.fabric.origin("app.c:21 (post LOCAL_INV)");
        final long inv = k.nextWrId();
        p.b().postSend(SendWr.localInv(inv, rkey));
        k.rig.fabric.origin("app.c:30 (poll)");
        assertThat(k.completionOf(p.b(), inv).status()).isEqualTo(WcStatus.SUCCESS);
        k.rig.fabric.origin(null);

        assertThat(k.deviceB().keyHistory().events(k.deviceB().keyHistory().index(rkey)))
            .extracting(KeyHistory.Event::describe)
            .containsExactly("allocated by ibv_alloc_mw (key event #2)", "bound at app.c:20 (post BIND_MW)",
                "invalidated at app.c:21 (post LOCAL_INV)");
    }

    @Test
    void aMadeUpVariantOfALiveIndexShouldBeCalledNeverIssuedNotStale()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, PAGE, RuleRig.REMOTE_ALL);
        final int madeUp = mr.rkey() ^ 0x5;

        final WorkCompletion wc = writeTo(k, buf, madeUp, 8);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().check()).isEqualTo(WcDiagnosis.Check.KEY_VARIANT);
        assertThat(wc.diagnosis().summary()).contains(MKey.toHex(madeUp) + " on sim:b/dev0 was never issued on this "
            + "device: MPT index").doesNotContain("is stale");
        assertThat(wc.diagnosis().details()).last().asString().startsWith("fix: " + MKey.toHex(madeUp) + " was "
            + "never issued on sim:b/dev0: use the rkey " + MKey.toHex(mr.rkey()));
    }

    @Test
    void aWindowsKeyFromBeforeItsBindShouldBeCalledSoWithTheKeyToUse()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(PAGE);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, PAGE, KeyRig.bindable());
        final MemoryWindow mw = k.rig.pdB.allocMw(MwType.TYPE_2);
        final int allocated = mw.rkey();
        final KeyRig.Pair p = k.pair();
        final int bound = SendWr.incRkey(allocated);
        assertThat(k.post(p.b(), SendWr.bindMw(k.nextWrId(), mw, bound, new MwBindInfo(mr, buf, PAGE, READ_WRITE)))
            .status()).isEqualTo(WcStatus.SUCCESS);

        final WorkCompletion wc = k.post(p.a(), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr,
            k.scratch, 8)), buf, allocated));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("is not the key the window at its index is bound under: the "
            + "index holds key " + MKey.toHex(bound));
        assertThat(wc.diagnosis().details()).last().asString().startsWith("fix: a bind gives the window a new rkey")
            .endsWith("hand the peer that one, " + MKey.toHex(bound));
    }
}
