package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.KeyRig.PAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.simnic.KeyRig.Footprint;
import dev.rnicsim.simnic.KeyRig.Pair;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * The rules of fast registration (FRWR), one example each: ib_alloc_mr's checks, ib_map_mr_sg's page limit, a
 * REG_MR work request that makes the MR VALID under a new key byte, REG_MR refused while VALID, from a QP of another
 * PD, with another index or no pages, LOCAL_INV and SEND_WITH_INV back to INVALID, and the counters and trace of
 * each step. Every refused call is checked to change nothing.
 */
class FastRegRulesTest
{
    private static final Set<Access> RW = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE);

    private static VerbsException verbsFailure(final ThrowingCallable call)
    {
        final Throwable t = catchThrowable(call);
        assertThat(t).as("the verb throws a VerbsException").isInstanceOf(VerbsException.class);
        return (VerbsException)t;
    }

    private static void assertErrno(final VerbsException e, final String verb, final Errno errno)
    {
        assertThat(e.verb()).isEqualTo(verb);
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(errno);
        assertThat(e.errno()).isEqualTo(errno.code());
    }

    /** Maps {@code length} bytes at {@code addr} and registers them under the next key; returns the completion. */
    private static WorkCompletion register(final KeyRig k, final QueuePair qp, final FastRegMr mr, final long addr,
        final long length, final Set<Access> access)
    {
        mr.mapSg(addr, length);
        return k.post(qp, SendWr.regMr(k.nextWrId(), mr, SendWr.incRkey(mr.lkey()), access));
    }

    /** Posts a REG_MR on a new QP of b's PD that must complete LOC_QP_OP_ERR and change nothing. */
    private static void assertRegRefused(final KeyRig k, final QueuePair qp, final FastRegMr mr, final int newKey,
        final Set<Access> access)
    {
        final int key = mr.lkey();
        final boolean valid = mr.isValid();
        final Footprint before = k.footprintB();

        final WorkCompletion wc = k.post(qp, SendWr.regMr(k.nextWrId(), mr, newKey, access));

        assertThat(wc.status()).as("REG_MR: %s", ((SimQp)qp).lastLocalFailure()).isEqualTo(WcStatus.LOC_QP_OP_ERR);
        assertThat(qp.state()).isEqualTo(QpState.ERR);
        assertThat(mr.lkey()).isEqualTo(key);
        assertThat(mr.rkey()).isEqualTo(key);
        assertThat(mr.isValid()).isEqualTo(valid);
        assertThat(k.footprintB()).isEqualTo(before);
    }

    // ------------------------------------------------------------------ ib_alloc_mr

    @Test
    void allocMrIsEopnotsuppWithoutMemMgtExtensions()
    {
        final KeyRig k = KeyRig.of(KeyRig.without(DeviceProfiles.connectx5(), DeviceCap.MEM_MGT_EXTENSIONS));
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(() -> k.rig.pdB.allocMr(4)), "ib_alloc_mr", Errno.EOPNOTSUPP);

        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(((SimPd)k.rig.pdB).fastRegMrs()).isEmpty();
    }

    @Test
    void allocMrIsEinvalBelowOnePage()
    {
        final KeyRig k = KeyRig.connectx5();
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(() -> k.rig.pdB.allocMr(0)), "ib_alloc_mr", Errno.EINVAL);
        assertErrno(verbsFailure(() -> k.rig.pdB.allocMr(-1)), "ib_alloc_mr", Errno.EINVAL);

        assertThat(k.footprintB()).isEqualTo(before);
    }

    @Test
    void allocMrReservesTheMttEntriesAndStartsInvalid()
    {
        final KeyRig k = KeyRig.connectx5();
        final long mtt = k.deviceB().counter(SimCounter.MTT_ENTRIES_IN_USE);
        final long live = k.deviceB().counter(SimCounter.MR_LIVE);

        final FastRegMr mr = k.rig.pdB.allocMr(8);

        assertThat(mr.maxNumSg()).isEqualTo(8);
        assertThat(mr.isValid()).isFalse();
        assertThat(mr.lkey()).isEqualTo(mr.rkey());
        assertThat(mr.pd()).isSameAs(k.rig.pdB);
        assertThat(k.deviceB().counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mtt + 8);
        assertThat(k.deviceB().counter(SimCounter.MR_LIVE)).isEqualTo(live + 1);
        assertThat(k.deviceB().tables().isFastReg(mr.lkey())).isTrue();
        final long buf = k.rig.bufferB(PAGE);
        k.assertWriteRefused(buf, mr.rkey(), 8);

        mr.close();
        mr.close();

        assertThat(mr.isClosed()).isTrue();
        assertThat(k.deviceB().counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mtt);
        assertThat(k.deviceB().counter(SimCounter.MR_LIVE)).isEqualTo(live);
    }

    // ------------------------------------------------------------------ ib_map_mr_sg

    @Test
    void mapSgBeyondMaxNumSgIsEinvalAndPinsNothing()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(2);
        final long buf = k.rig.bufferB(4 * PAGE);
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(() -> mr.mapSg(buf, 3 * PAGE)), "ib_map_mr_sg", Errno.EINVAL);
        // Two pages of bytes, but three pages once the first byte is not page aligned.
        assertErrno(verbsFailure(() -> mr.mapSg(buf + 100, 2 * PAGE)), "ib_map_mr_sg", Errno.EINVAL);
        assertErrno(verbsFailure(() -> mr.mapSg(buf, 0)), "ib_map_mr_sg", Errno.EINVAL);

        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(mr.mapSg(buf + 100, 2 * PAGE - 100)).isEqualTo(2);
        assertThat(k.rig.processB().pinnedVmPages()).isEqualTo(before.pinnedVmPages() + 2);
    }

    @Test
    void mapSgOfUnmappedMemoryIsEfault()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(2);
        final long gone = k.rig.bufferB(2 * PAGE);
        k.rig.ctxB.memory().free(gone, 2 * PAGE);
        final Footprint before = k.footprintB();

        assertErrno(verbsFailure(() -> mr.mapSg(gone, PAGE)), "ib_map_mr_sg", Errno.EFAULT);

        assertThat(k.footprintB()).isEqualTo(before);
    }

    @Test
    void aNewMappingUnpinsThePreviousOneAndCloseUnpinsTheLast()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(4);
        final long buf = k.rig.bufferB(8 * PAGE);
        final long vmPin = k.rig.processB().pinnedVmPages();

        assertThat(mr.mapSg(buf, 4 * PAGE)).isEqualTo(4);
        assertThat(k.rig.processB().pinnedVmPages()).isEqualTo(vmPin + 4);
        assertThat(mr.mapSg(buf + 4 * PAGE, PAGE)).isEqualTo(1);
        assertThat(k.rig.processB().pinnedVmPages()).isEqualTo(vmPin + 1);
        assertThat(mr.addr()).isEqualTo(buf + 4 * PAGE);
        assertThat(mr.iova()).isEqualTo(buf + 4 * PAGE);
        assertThat(mr.lengthBytes()).isEqualTo(PAGE);

        mr.close();

        assertThat(k.rig.processB().pinnedVmPages()).isEqualTo(vmPin);
    }

    // ------------------------------------------------------------------ REG_MR

    @Test
    void regMrMakesTheMrValidUnderANewKeyByteOfTheSameIndex()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(4);
        final long buf = k.rig.bufferB(4 * PAGE);
        k.rig.processB().write(buf, RuleRig.pattern((int)(4 * PAGE), 21));
        final int oldKey = mr.lkey();
        final int newKey = SendWr.incRkey(oldKey);
        final long regs = k.deviceB().counter(SimCounter.FAST_REGISTRATIONS);
        final int from = k.trace.size();
        assertThat(mr.mapSg(buf + 100, 3 * PAGE)).isEqualTo(4);

        final WorkCompletion wc = k.post(k.rig.qpB, SendWr.regMr(k.nextWrId(), mr, newKey, RW));

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.REG_MR);
        assertThat(mr.isValid()).isTrue();
        assertThat(mr.lkey()).isEqualTo(newKey).isNotEqualTo(oldKey);
        assertThat(mr.rkey()).isEqualTo(newKey);
        assertThat(newKey >>> 8).isEqualTo(oldKey >>> 8);
        assertThat(mr.access()).isEqualTo(RW);
        assertThat(k.deviceB().counter(SimCounter.FAST_REGISTRATIONS)).isEqualTo(regs + 1);
        assertThat(k.trace.subList(from, k.trace.size())).filteredOn(e -> e.name().equals("reg_mr (fast)"))
            .singleElement().satisfies(e -> assertThat(e.args()).containsEntry("key", newKey)
                .containsEntry("mtt_entries", 4L));

        // Remote access through the new key: the bytes of the pages mapped, at the addresses mapped.
        assertThat(k.read(k.pair().a(), buf + 100 + 2 * PAGE, newKey, 256)).isEqualTo(WcStatus.SUCCESS);
        assertThat(k.scratchBytes(256)).isEqualTo(java.util.Arrays.copyOfRange(RuleRig.pattern((int)(4 * PAGE), 21),
            (int)(2 * PAGE + 100), (int)(2 * PAGE + 356)));
        k.assertWriteLands(buf + 100 + 3 * PAGE - 64, newKey, 64);
        k.assertWriteRefused(buf + 100 + 3 * PAGE - 63, newKey, 64);
        k.assertWriteRefused(buf + 99, newKey, 8);
        k.assertWriteRefused(buf + 100, oldKey, 8);
    }

    @Test
    void regMrGrantsOnlyTheRightsItNames()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(1);
        final long buf = k.rig.bufferB(PAGE);

        assertThat(register(k, k.rig.qpB, mr, buf, PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ))
            .status()).isEqualTo(WcStatus.SUCCESS);

        assertThat(k.read(k.pair().a(), buf, mr.rkey(), 16)).isEqualTo(WcStatus.SUCCESS);
        k.assertWriteRefused(buf, mr.rkey(), 16);
    }

    @Test
    void regMrWhileValidFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(2);
        final long buf = k.rig.bufferB(2 * PAGE);
        assertThat(register(k, k.rig.qpB, mr, buf, 2 * PAGE, RW).status()).isEqualTo(WcStatus.SUCCESS);
        final int key = mr.lkey();

        assertRegRefused(k, k.pair().b(), mr, SendWr.incRkey(key), RW);

        assertThat(mr.isValid()).isTrue();
        k.assertWriteLands(buf + PAGE, key, 32);
        // ib_map_mr_sg is refused too while the MR is VALID.
        assertErrno(verbsFailure(() -> mr.mapSg(buf, PAGE)), "ib_map_mr_sg", Errno.EINVAL);
        k.assertWriteLands(buf + PAGE, key, 32);
    }

    @Test
    void regMrFromAQpOfAnotherPdFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(2);
        final long buf = k.rig.bufferB(2 * PAGE);
        mr.mapSg(buf, 2 * PAGE);
        final Pair foreign = k.pair(k.rig.pdA, k.rig.ctxB.allocPd());

        assertRegRefused(k, foreign.b(), mr, SendWr.incRkey(mr.lkey()), RW);

        assertThat(mr.isValid()).isFalse();
        k.assertWriteRefused(buf, SendWr.incRkey(mr.lkey()), 8);
    }

    @Test
    void regMrWithAnotherIndexNoPagesOrBadRightsFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(2);
        final long buf = k.rig.bufferB(2 * PAGE);

        assertRegRefused(k, k.pair().b(), mr, SendWr.incRkey(mr.lkey()), RW);
        mr.mapSg(buf, 2 * PAGE);
        assertRegRefused(k, k.pair().b(), mr, mr.lkey() + 0x100, RW);
        assertRegRefused(k, k.pair().b(), mr, SendWr.incRkey(mr.lkey()), EnumSet.of(Access.REMOTE_WRITE));

        assertThat(register(k, k.pair().b(), mr, buf, 2 * PAGE, RW).status()).isEqualTo(WcStatus.SUCCESS);
    }

    // ------------------------------------------------------------------ invalidation

    @Test
    void localInvMakesTheMrInvalidAndItsKeyIsRefused()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(2);
        final long buf = k.rig.bufferB(2 * PAGE);
        assertThat(register(k, k.rig.qpB, mr, buf, 2 * PAGE, RW).status()).isEqualTo(WcStatus.SUCCESS);
        final int key = mr.lkey();
        k.assertWriteLands(buf, key, 16);
        final long invalidations = k.deviceB().counter(SimCounter.KEY_INVALIDATIONS);
        final int from = k.trace.size();

        final WorkCompletion wc = k.post(k.rig.qpB, SendWr.localInv(k.nextWrId(), key));

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.LOCAL_INV);
        assertThat(mr.isValid()).isFalse();
        assertThat(mr.lkey()).as("an invalidation keeps the key").isEqualTo(key);
        assertThat(k.deviceB().counter(SimCounter.KEY_INVALIDATIONS)).isEqualTo(invalidations + 1);
        assertThat(k.invalidateCauses(from)).containsExactly("invalidate_mr");
        k.assertWriteRefused(buf, key, 16);

        // Registered again under the next key byte; the previous key stays refused.
        assertThat(register(k, k.rig.qpB, mr, buf + PAGE, PAGE, RW).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(mr.lkey()).isEqualTo(SendWr.incRkey(key));
        k.assertWriteLands(buf + PAGE, mr.lkey(), 16);
        k.assertWriteRefused(buf + PAGE, key, 16);
        k.assertWriteRefused(buf, mr.lkey(), 16);
    }

    @Test
    void localInvOfAStaleFastRegKeyFails()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(1);
        final long buf = k.rig.bufferB(PAGE);
        final int first = mr.lkey();
        assertThat(register(k, k.rig.qpB, mr, buf, PAGE, RW).status()).isEqualTo(WcStatus.SUCCESS);
        final QueuePair qp = k.pair().b();
        final Footprint before = k.footprintB();

        assertThat(k.post(qp, SendWr.localInv(k.nextWrId(), first)).status()).isEqualTo(WcStatus.LOC_QP_OP_ERR);

        assertThat(k.footprintB()).isEqualTo(before);
        assertThat(mr.isValid()).isTrue();
        k.assertWriteLands(buf, mr.lkey(), 16);
    }

    @Test
    void sendWithInvInvalidatesAFastRegMr()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(1);
        final long buf = k.rig.bufferB(PAGE);
        assertThat(register(k, k.rig.qpB, mr, buf, PAGE, RW).status()).isEqualTo(WcStatus.SUCCESS);
        final int key = mr.rkey();
        final long rbuf = k.rig.bufferB(PAGE);
        final MemoryRegion rmr = k.rig.pdB.regMr(rbuf, PAGE, RuleRig.LOCAL);
        k.rig.qpB.postRecv(new RecvWr(31, List.of(RuleRig.sge(rmr, rbuf, 64))));
        final int from = k.trace.size();

        k.rig.qpA.postSend(SendWr.sendWithInv(32, List.of(RuleRig.sge(k.scratchMr, k.scratch, 8)), key));

        final List<WorkCompletion> all = k.drain();
        assertThat(KeyRig.only(all, k.rig.qpA, 32).status()).isEqualTo(WcStatus.SUCCESS);
        final WorkCompletion recv = KeyRig.only(all, k.rig.qpB, 31);
        assertThat(recv.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recv.withInv()).isTrue();
        assertThat(recv.invalidatedRkey()).isEqualTo(key);
        assertThat(mr.isValid()).isFalse();
        assertThat(k.invalidateCauses(from)).containsExactly("invalidate_mr");
        k.assertWriteRefused(buf, key, 8);
    }

    // ------------------------------------------------------------------ other verbs on a fast-registration MR

    @Test
    void aFastRegMrCannotBeReregistered()
    {
        final KeyRig k = KeyRig.connectx5();
        final FastRegMr mr = k.rig.pdB.allocMr(1);
        final Footprint before = k.footprintB();

        final Throwable t = catchThrowable(() -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0,
            RuleRig.LOCAL));

        assertThat(t).isInstanceOf(ReregException.class);
        assertThat(((ReregException)t).reregError()).isEqualTo(ReregException.ERR_INPUT);
        assertThat(((ReregException)t).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(k.footprintB()).isEqualTo(before);
    }

    @Test
    void closingAValidFastRegMrRefusesItsKeyAndFreesItsEntries()
    {
        final KeyRig k = KeyRig.connectx5();
        final long mtt = k.deviceB().counter(SimCounter.MTT_ENTRIES_IN_USE);
        final FastRegMr mr = k.rig.pdB.allocMr(2);
        final long buf = k.rig.bufferB(2 * PAGE);
        assertThat(register(k, k.rig.qpB, mr, buf, 2 * PAGE, RW).status()).isEqualTo(WcStatus.SUCCESS);
        final int key = mr.lkey();
        final long vmPin = k.rig.processB().pinnedVmPages();

        mr.close();

        assertThat(mr.isClosed()).isTrue();
        assertThat(k.rig.processB().pinnedVmPages()).isEqualTo(vmPin - 2);
        assertThat(k.deviceB().counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mtt);
        assertThat(k.deviceB().tables().isFastReg(key)).isFalse();
        assertThat(((SimPd)k.rig.pdB).fastRegMrs()).isEmpty();
        k.assertWriteRefused(buf, key, 8);
    }
}
