package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * A null where the Java API needs a value is the caller's mistake: it gets the errno or the
 * IllegalArgumentException that names the argument and what to pass, never a NullPointerException from inside, and
 * the QP keeps working after it.
 */
class NullArgumentsTest
{
    @Test
    void aNullWorkRequestIsRefusedWithEinvalAtItsPositionAndTheQpKeepsWorking()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice d = fabric.addHost("a").addDevice("sim:a/mlx5_0", DeviceProfiles.connectx5());
        try (Context c = d.open())
        {
            final ProtectionDomain pd = c.allocPd();
            final CompletionQueue cq = c.createCq(16);
            final QueuePair a = pd.createQp(QpInitAttr.rc(cq));
            final QueuePair b = pd.createQp(QpInitAttr.rc(cq));
            a.connect(b.address(), EnumSet.noneOf(Access.class));
            b.connect(a.address(), EnumSet.noneOf(Access.class));
            assertThatThrownBy(() -> a.postSend((SendWr) null)).isInstanceOf(PostException.class)
                .hasMessageContaining("EINVAL").hasMessageContaining("the work request is null");
            assertThatThrownBy(() -> b.postRecv((RecvWr) null)).isInstanceOf(PostException.class)
                .hasMessageContaining("EINVAL").hasMessageContaining("the work request is null");
            b.postRecv(RecvWr.of(1));
            a.postSend(SendWr.send(2, java.util.List.of()));
            assertThat(cq.poll(4)).as("the SEND and its receive, after the refused calls").hasSize(2);
        }
    }

    @Test
    void aNullHostOrDeviceArgumentNamesWhatIsMissing()
    {
        final SimFabric fabric = new SimFabric();
        assertThatThrownBy(() -> fabric.addHost(null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("the host name is null; give a name");
        final SimHost h = fabric.addHost("a");
        assertThatThrownBy(() -> h.addDevice("sim:a/mlx5_0", null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("the profile of sim:a/mlx5_0 is null; ");
        assertThat(h.devices()).as("nothing was added").isEmpty();
    }
}
