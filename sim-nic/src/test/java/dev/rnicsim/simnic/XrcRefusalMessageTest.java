package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import org.junit.jupiter.api.Test;

/**
 * The EINVAL of an XRC verb handed a CQ or domain that is not a live one of its context says which of the reasons
 * holds (another context, closed, none) in the user's terms, never a Java class name and identity hash.
 */
class XrcRefusalMessageTest
{
    @Test
    void shouldNameTheOtherContextsDeviceWhenAnXrcSrqGetsACqOfAnotherContext()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final XrcDomain domain = rig.ctxB.openXrcd();
        final int before = rig.deviceB.objects().srqsLive();

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> rig.pdB.createXrcSrq(domain, rig.cqA, new SrqAttr(4, 1, 0)));

        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.getMessage()).contains("not a live CQ of this context")
            .contains("belongs to another context (device " + rig.ctxA.device().name() + ")")
            .doesNotContain("SimCq").doesNotContain("@").contains("ibv_create_cq on the same context");
        assertThat(rig.deviceB.objects().srqsLive()).isEqualTo(before);
        assertThat(((SimXrcd)domain).srqs()).isEmpty();
    }

    @Test
    void shouldSayTheDomainIsClosedWhenAnXrcSrqGetsAClosedDomain()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final XrcDomain domain = rig.ctxB.openXrcd();
        final CompletionQueue cq = rig.ctxB.createCq(16);
        domain.close();

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> rig.pdB.createXrcSrq(domain, cq, new SrqAttr(4, 1, 0)));

        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.getMessage()).contains("not a live XRC domain").contains("it is closed")
            .doesNotContain("SimXrcd").doesNotContain("@");
    }
}
