package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.XrcDomain;
import dev.rnicsim.verbs.XrcdFile;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * XRC domains named by a file, shared across the contexts (processes) of one device as the kernel shares them: one
 * {@code ib_xrcd} per device and inode ({@code ib_uverbs_open_xrcd}, {@code find_xrcd}, {@code xrcd_table_insert},
 * {@code ib_uverbs_dealloc_xrcd} and {@code xrcd_table_delete} in drivers/infiniband/core/uverbs_cmd.c). Every refused
 * call is checked to change nothing.
 */
class XrcSharedDomainTest
{
    private static final Set<Access> REMOTE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
    private static final XrcdFile FILE = new XrcdFile(2049, 131_075);
    private static final XrcdFile OTHER_FILE = new XrcdFile(2049, 131_076);

    /**
     * Two processes on device B open one file (as ibv_xsrq_pingpong's clients do); the target QP is made by the first,
     * the SRQ the message names by the second; A's XRC_SEND QP is connected to the first's target.
     */
    private static final class Shared
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final SimContext second = rig.deviceB.open(rig.deviceB.host().host().spawn("second-client"));
        final XrcDomain first;
        final XrcDomain other;
        final ProtectionDomain secondPd = second.allocPd();
        final CompletionQueue secondCq = second.createCq(16);
        final SharedReceiveQueue secondSrq;
        final QueuePair ini = rig.pdA.createQp(QpInitAttr.xrcSend(rig.cqA));
        final QueuePair tgt;
        final long src = rig.bufferA(4096);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4096, REMOTE);
        final long dst = second.memory().allocate(4096, Backing.BASE_PAGES);
        final MemoryRegion dstMr = secondPd.regMr(dst, 4096, REMOTE);

        Shared(final XrcdFile secondFile)
        {
            first = rig.ctxB.openXrcd(FILE, true, false);
            other = second.openXrcd(secondFile, true, false);
            secondSrq = secondPd.createXrcSrq(other, secondCq, new SrqAttr(8, 1, 0));
            tgt = rig.ctxB.createXrcRecvQp(first);
            tgt.connect(ini.address(), REMOTE);
            ini.connect(tgt.address(), EnumSet.noneOf(Access.class));
            rig.ctxA.process().write(src, "to the other client".getBytes());
            secondSrq.postRecv(List.of(RecvWr.of(7, new Sge(dst, 64, dstMr.lkey()))));
        }

        void sendToSecondSrq()
        {
            ini.postSend(SendWr.send(1, List.of(new Sge(src, 19, srcMr.lkey()))).withRemoteSrqn(secondSrq.srqNum()));
        }
    }

    @Test
    void shouldGiveTwoContextsThatOpenOneFileOneDomainSoATargetOfOneReachesAnSrqOfTheOther()
    {
        final Shared s = new Shared(FILE);
        assertThat(((SimXrcd)s.first).sameDomainAs((SimXrcd)s.other)).isTrue();
        assertThat(((SimXrcd)s.first).handlesOnDomain()).isEqualTo(2);
        assertThat(s.first.context()).isNotSameAs(s.other.context());

        s.sendToSecondSrq();

        assertThat(s.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        final List<WorkCompletion> recv = s.secondCq.poll(4);
        assertThat(recv).extracting(WorkCompletion::wrId).containsExactly(7L);
        assertThat(recv.get(0).byteLen()).isEqualTo(19);
        assertThat(s.second.process().read(s.dst, 19)).isEqualTo("to the other client".getBytes());
        assertThat(s.tgt.state()).as("the target accepted the request").isEqualTo(QpState.RTS);
    }

    @Test
    void shouldKeepDomainsOfDifferentFilesApartAndNakTheSrqOfTheOtherWithRemInvReqErr()
    {
        final Shared s = new Shared(OTHER_FILE);
        assertThat(((SimXrcd)s.first).sameDomainAs((SimXrcd)s.other)).isFalse();

        s.sendToSecondSrq();

        assertThat(s.rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_INV_REQ_ERR);
        assertThat(s.secondSrq.receivesPosted()).isEqualTo(1);
        assertThat(s.tgt.state()).isEqualTo(QpState.ERR);
    }

    @Test
    void shouldAnswerEagainWithoutCreateAndEinvalWithExclusiveAndChangeNothing()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final VerbsException none = catchThrowableOfType(VerbsException.class,
            () -> rig.ctxB.openXrcd(FILE, false, false));
        assertThat(none.errno()).isEqualTo(Errno.EAGAIN.code());
        assertThat(none.getMessage()).contains("O_CREAT").contains("ib_uverbs_open_xrcd");
        assertThat(rig.ctxB.xrcDomains()).isEmpty();
        assertThat(rig.deviceB.xrcdTable().useCount(FILE)).isZero();

        final XrcDomain created = rig.ctxB.openXrcd(FILE, true, true);
        final VerbsException exclusive = catchThrowableOfType(VerbsException.class,
            () -> rig.ctxB.openXrcd(FILE, true, true));
        assertThat(exclusive.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(exclusive.getMessage()).contains("O_EXCL");
        assertThat(rig.ctxB.xrcDomains()).containsExactly((SimXrcd)created);
        assertThat(rig.deviceB.xrcdTable().useCount(FILE)).isEqualTo(1);

        final XrcDomain found = rig.ctxB.openXrcd(FILE, false, false);
        assertThat(((SimXrcd)found).sameDomainAs((SimXrcd)created)).isTrue();
        assertThat(found).isNotSameAs(created);
        assertThat(rig.deviceB.xrcdTable().useCount(FILE)).isEqualTo(2);
    }

    @Test
    void shouldKeepOneTablePerDevice()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        rig.ctxB.openXrcd(FILE, true, false);
        final VerbsException otherDevice = catchThrowableOfType(VerbsException.class,
            () -> rig.ctxA.openXrcd(FILE, false, false));
        assertThat(otherDevice.errno()).as("the inode names a domain of device B only").isEqualTo(
            Errno.EAGAIN.code());
        assertThat(rig.deviceA.xrcdTable().useCount(FILE)).isZero();
    }

    @Test
    void shouldFreeTheDomainWithItsLastHandleInAnyContextAndRefuseABusyHandleWithEbusy()
    {
        final Shared s = new Shared(FILE);
        final VerbsException busy = catchThrowableOfType(VerbsException.class, s.other::close);
        assertThat(busy.errno()).isEqualTo(Errno.EBUSY.code());
        assertThat(busy.getMessage()).contains("1 XRC SRQ(s)").contains("made through this handle");
        assertThat(s.other.isClosed()).isFalse();
        assertThat(s.rig.deviceB.xrcdTable().useCount(FILE)).isEqualTo(2);

        // The first process leaves: its target goes, then its handle; the domain lives on for the second.
        s.tgt.close();
        s.first.close();
        assertThat(s.rig.deviceB.xrcdTable().useCount(FILE)).isEqualTo(1);
        final XrcDomain again = s.rig.ctxB.openXrcd(FILE, false, false);
        assertThat(((SimXrcd)again).sameDomainAs((SimXrcd)s.other)).as("the domain outlives the first handle")
            .isTrue();
        again.close();

        // The last handle frees it: the inode names no domain any more.
        s.secondSrq.close();
        s.other.close();
        assertThat(s.rig.deviceB.xrcdTable().useCount(FILE)).isZero();
        final VerbsException gone = catchThrowableOfType(VerbsException.class,
            () -> s.second.openXrcd(FILE, false, false));
        assertThat(gone.errno()).isEqualTo(Errno.EAGAIN.code());
    }

    @Test
    void shouldReleaseTheHandlesOfAClosingContext()
    {
        final Shared s = new Shared(FILE);
        s.second.close();
        assertThat(s.other.isClosed()).isTrue();
        assertThat(s.rig.deviceB.xrcdTable().useCount(FILE)).isEqualTo(1);
        s.rig.ctxB.close();
        assertThat(s.rig.deviceB.xrcdTable().useCount(FILE)).isZero();
    }
}
