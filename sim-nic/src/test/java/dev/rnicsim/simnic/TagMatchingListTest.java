package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rules of {@link TagMatchingList} and {@link TagMatchingCaps}, one test per rule. */
class TagMatchingListTest
{
    private static final List<Sge> BUF = List.of(new Sge(0x1000, 256, 7));

    private static TagMatchingList list(final int maxNumTags, final int maxOps)
    {
        return TagMatchingList.create(DeviceProfiles.connectx5(), "mlx5_0", maxNumTags, maxOps, true);
    }

    private static TagMatchingList.Op add(final long wrId, final long tag, final int flags, final int unexpected)
    {
        return new TagMatchingList.Op(wrId, TagMatchingList.OP_ADD, flags, unexpected, 0, 100 + wrId, BUF, tag,
            0xffff);
    }

    private static TagMatchingList.Op op(final int opcode, final int flags, final int unexpected, final int handle)
    {
        return new TagMatchingList.Op(9, opcode, flags, unexpected, handle, 0, List.of(), 0, 0);
    }

    private static int errnoOf(final Runnable r)
    {
        try
        {
            r.run();
            return 0;
        }
        catch (final VerbsException e)
        {
            return e.errno();
        }
    }

    @Test
    void onlyDevicesWithTagMatchingReportTmCaps()
    {
        final TagMatchingCaps cx5 = TagMatchingCaps.of(DeviceProfiles.connectx5());
        assertThat(cx5.flags()).isEqualTo(TagMatchingCaps.CAP_RC);
        assertThat(cx5.maxNumTags()).isEqualTo((1 << cx5.logTagMatchingListSz()) - 1);
        assertThat(cx5.maxOps()).as("2^log_max_qp_sz").isEqualTo(DeviceProfiles.connectx5().attributes().maxQpWr());
        assertThat(cx5.maxSge()).isEqualTo(1);
        assertThat(cx5.maxRndvHdrSizeBytes()).isEqualTo(64);
        assertThat(TagMatchingCaps.of(ConnectXProfiles.connectx4())).isEqualTo(TagMatchingCaps.NONE);
        assertThat(TagMatchingCaps.of(DeviceProfiles.rxe()).supported()).isFalse();
    }

    @Test
    void creationNeedsMlx5AnExtendedCqAndAListTheDeviceHolds()
    {
        final int max = TagMatchingCaps.of(DeviceProfiles.connectx5()).maxNumTags();
        assertThat(errnoOf(() -> TagMatchingList.create(DeviceProfiles.rxe(), "rxe0", 1, 1, true)))
            .isEqualTo(Errno.EOPNOTSUPP.code());
        assertThat(errnoOf(() -> TagMatchingList.create(DeviceProfiles.connectx5(), "mlx5_0", 1, 1, false)))
            .as("a plain CQ").isEqualTo(Errno.EINVAL.code());
        assertThat(errnoOf(() -> list(0, 1))).isEqualTo(Errno.EINVAL.code());
        assertThat(errnoOf(() -> list(max, 1))).as("2^L - 1 fits").isZero();
        assertThat(errnoOf(() -> list(max + 1, 1))).as("ilog2(2^L) + 1 > L").isEqualTo(Errno.EINVAL.code());
        assertThat(errnoOf(() -> TagMatchingList.create(ConnectXProfiles.connectx4(), "mlx5_0", 1, 1, true)))
            .as("log_tag_matching_list_sz 0").isEqualTo(Errno.EINVAL.code());
        assertThat(errnoOf(() -> list(1, DeviceProfiles.connectx5().attributes().maxQpWr() + 1)))
            .isEqualTo(Errno.EINVAL.code());
    }

    @Test
    void addHandsOutHandlesInOrderAndSignaledOpsComplete()
    {
        final TagMatchingList l = list(7, 10);
        final TagMatchingList.Posted p = l.post(List.of(add(1, 1, TagMatchingList.FLAG_SIGNALED, 0),
            add(2, 2, 0, 0), op(TagMatchingList.OP_SYNC, TagMatchingList.FLAG_SIGNALED, 0, 0)));
        assertThat(p.refused()).isNull();
        assertThat(p.handles()).containsExactly(0, 1, -1);
        assertThat(p.completions()).containsExactly(new TagMatchingList.Done(1, TagMatchingList.WC_TM_ADD, true, false),
            new TagMatchingList.Done(9, TagMatchingList.WC_TM_SYNC, true, false));
        assertThat(l.tagsListed()).isEqualTo(2);
    }

    @Test
    void aFullListAndTooManySgesAndABadOpcodeEndThePostAtThatOp()
    {
        final TagMatchingList l = list(3, 10);
        final TagMatchingList.Posted full = l.post(List.of(add(1, 1, 0, 0), add(2, 2, 0, 0), add(3, 3, 0, 0),
            add(4, 4, 0, 0)));
        assertThat(full.handles()).hasSize(3);
        assertThat(full.refused().errno()).isEqualTo(Errno.ENOMEM.code());
        assertThat(full.refused().badWrIndex()).isEqualTo(3);
        final TagMatchingList l2 = list(3, 10);
        final TagMatchingList.Op twoSges = new TagMatchingList.Op(1, TagMatchingList.OP_ADD, 0, 0, 0, 1,
            List.of(BUF.get(0), BUF.get(0)), 1, 1);
        assertThat(l2.post(List.of(twoSges)).refused().errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(l2.post(List.of(op(3, 0, 0, 0))).refused().errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(l2.tagsListed()).as("nothing of a refused op is done").isZero();
    }

    @Test
    void morePostedOperationsThanMaxOpsOverflowTheCommandQueue()
    {
        final TagMatchingList l = list(7, 2);
        final List<TagMatchingList.Op> ops = new ArrayList<>();
        for (int i = 0; i < 3; i++)
        {
            ops.add(op(TagMatchingList.OP_SYNC, 0, 0, 0));
        }
        final TagMatchingList.Posted p = l.post(ops);
        assertThat(p.handles()).hasSize(2);
        assertThat(p.refused().errno()).isEqualTo(Errno.ENOMEM.code());
    }

    @Test
    void aDelOfAConsumedTagCompletesWithTmErrAndAHandlePastTheListIsEinval()
    {
        final TagMatchingList l = list(7, 10);
        l.post(List.of(add(1, 5, 0, 0)));
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 5).kind()).isEqualTo(TagMatchingList.Kind.EAGER);
        final TagMatchingList.Posted del = l.post(List.of(op(TagMatchingList.OP_DEL, TagMatchingList.FLAG_SIGNALED, 0,
            0)));
        assertThat(del.completions().get(0).ok()).as("IBV_WC_TM_ERR").isFalse();
        assertThat(l.post(List.of(op(TagMatchingList.OP_DEL, 0, 0, 8))).refused().errno())
            .isEqualTo(Errno.EINVAL.code());
        l.post(List.of(add(2, 6, 0, 0)));
        final TagMatchingList.Posted ok = l.post(List.of(op(TagMatchingList.OP_DEL, TagMatchingList.FLAG_SIGNALED, 0,
            1)));
        assertThat(ok.completions().get(0).ok()).isTrue();
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 6).kind()).as("deleted").isEqualTo(
            TagMatchingList.Kind.UNEXPECTED);
    }

    @Test
    void aTagMatchesUnderItsMaskInTheOrderTagsWereAddedAndLeavesTheList()
    {
        final TagMatchingList l = list(7, 10);
        l.post(List.of(add(1, 0x34, 0, 0), new TagMatchingList.Op(2, TagMatchingList.OP_ADD, 0, 0, 0, 202, BUF, 0x34,
            0xff)));
        final TagMatchingList.Arrival first = l.arrive(TagMatchingList.TMH_EAGER, 0x1234);
        assertThat(first.kind()).as("0x1234 & 0xffff != 0x34").isEqualTo(TagMatchingList.Kind.EAGER);
        assertThat(first.entry().recvWrId()).isEqualTo(202);
        final TagMatchingList.Arrival rndv = l.arrive(TagMatchingList.TMH_RNDV, 0x34);
        assertThat(rndv.kind()).isEqualTo(TagMatchingList.Kind.RNDV);
        assertThat(rndv.entry().recvWrId()).isEqualTo(101);
        assertThat(l.tagsListed()).isZero();
        assertThat(l.arrive(TagMatchingList.TMH_NO_TAG, 0x34).kind()).isEqualTo(TagMatchingList.Kind.NO_TAG);
        assertThat(l.arrive(TagMatchingList.TMH_FIN, 0).kind()).isEqualTo(TagMatchingList.Kind.NO_TAG);
        assertThat(l.unexpectedDelivered()).isZero();
    }

    @Test
    void aTagAddedBehindTheDevicesUnexpectedCountAsksForSyncAndWaitsForIt()
    {
        final TagMatchingList l = list(7, 10);
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 1).kind()).isEqualTo(TagMatchingList.Kind.UNEXPECTED);
        final TagMatchingList.Posted behind = l.post(List.of(add(1, 1, TagMatchingList.FLAG_SIGNALED, 0)));
        assertThat(behind.completions().get(0).syncReq()).as("IBV_WC_TM_SYNC_REQ").isTrue();
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 1).kind()).as("held until the counts agree")
            .isEqualTo(TagMatchingList.Kind.UNEXPECTED);
        l.post(List.of(op(TagMatchingList.OP_SYNC, TagMatchingList.FLAG_SIGNALED | TagMatchingList.FLAG_TM_SYNC, 2,
            0)));
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 1).kind()).isEqualTo(TagMatchingList.Kind.EAGER);
        final TagMatchingList.Posted inStep = l.post(List.of(add(2, 2, TagMatchingList.FLAG_SIGNALED, 0)));
        assertThat(inStep.completions().get(0).syncReq()).as("the provider keeps the last synced count").isFalse();
    }

    @Test
    void anUnexpectedMessageAsksForSyncOnceTheDeviceIsTooFarAhead()
    {
        final TagMatchingList l = list(7, 10);
        for (int i = 0; i < TagMatchingList.MAX_SYNC_DIFF; i++)
        {
            assertThat(l.arrive(TagMatchingList.TMH_EAGER, 9).syncReq()).isFalse();
        }
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 9).syncReq()).isTrue();
        l.post(List.of(op(TagMatchingList.OP_SYNC, TagMatchingList.FLAG_TM_SYNC, TagMatchingList.MAX_SYNC_DIFF + 1,
            0)));
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 9).syncReq()).isFalse();
    }

    @Test
    void aMatchNeedsNoOrdinaryReceiveAndAnUnmatchedMessageWithoutOneCountsNothing()
    {
        final TagMatchingList l = list(7, 10);
        l.post(List.of(add(1, 5, 0, 0)));
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 6, false)).as("unmatched, no receive: RNR NAK").isNull();
        assertThat(l.unexpectedDelivered()).as("an RNR NAK delivers nothing").isZero();
        final TagMatchingList.Arrival matched = l.arrive(TagMatchingList.TMH_EAGER, 5, false);
        assertThat(matched.kind()).as("a match takes no ordinary receive").isEqualTo(TagMatchingList.Kind.EAGER);
        assertThat(l.tagsListed()).isZero();
        l.restore(matched.entry());
        assertThat(l.tagsListed()).as("a match whose request failed at the requester lists its tag again").isOne();
        assertThat(l.arrive(TagMatchingList.TMH_RNDV, 5, false).entry().recvWrId()).isEqualTo(101);
        assertThat(l.arrive(TagMatchingList.TMH_EAGER, 6, true).kind()).isEqualTo(TagMatchingList.Kind.UNEXPECTED);
        assertThat(l.unexpectedDelivered()).isOne();
    }

    @Test
    void aDeviceWithoutTagMatchingNamesItInTheRefusal()
    {
        assertThatThrownBy(() -> TagMatchingList.create(ConnectXProfiles.connectx4(), "mlx5_0", 4, 4, true))
            .hasMessageContaining("the device has no tag matching").hasMessageContaining("tm_caps");
    }
}
