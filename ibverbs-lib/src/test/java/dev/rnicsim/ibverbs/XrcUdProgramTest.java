package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * src/test/c/xrc_ud.c on this module's library: a request posted before its peer QP connects (held for the
 * requester's retry window, as the transport retries it), XRC domains opened by file (EAGAIN, O_EXCL, one domain per
 * file and device), an XRC SEND into an XRC SRQ and one naming an SRQ outside the target's domain,
 * {@code ibv_close_xrcd}'s EBUSY per handle (uverbs_free_xrcd), {@code ibv_init_ah_from_wc} and
 * {@code ibv_create_ah_from_wc} answering a datagram's sender (on InfiniBand and on RoCE v2, whose GRH names UDP), a dropped datagram whose bytes never reach a
 * later receive, a memory window of an MR registered at an iova other than its address, and an SRQ resize as the
 * device's profile answers it.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class XrcUdProgramTest
{
    @TempDir
    Path dir;

    static Stream<Arguments> devices()
    {
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5()), Arguments.of("rxe0", DeviceProfiles.rxe()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void xrcAddressHandlesFromCompletionsAndDroppedDatagramsAnswerAsARealStack(final String hcaId,
        final DeviceProfile profile) throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/xrc_ud.c", "xrc_ud");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok peer-late: the SEND's bytes are in the receive buffer")
                .contains("ok peer-never: completion transport retry counter exceeded")
                .contains("ok ud-drop: the receive holds the second datagram's bytes, not the dropped one's")
                .contains("ok ah-from-wc: ibv_init_ah_from_wc: a global path to the sender's GID")
                .contains("ok ah-from-wc: the reply arrived from the responder's QP")
                .contains("ok ah-grh: a multicast destination GID: EINVAL")
                .contains("ok ah-grh: a GRH of another protocol: EPROTONOSUPPORT")
                .contains("ok mw-iova: the 16 bytes landed at the MR's buffer + 1032")
                .contains(profile.attributes().has(dev.rnicsim.verbs.DeviceCap.SRQ_RESIZE)
                    ? "ok srq-resize: a device that resizes SRQs: 0"
                    : "ok srq-resize: a device without IBV_DEVICE_SRQ_RESIZE: EINVAL")
                .contains(profile.attributes().has(dev.rnicsim.verbs.DeviceCap.SRQ_RESIZE)
                    ? "ok srq-resize: ibv_query_srq: the SRQ resized to max_wr 15"
                    : "ok srq-resize: ibv_query_srq: the SRQ unchanged");
            if (profile.attributes().has(dev.rnicsim.verbs.DeviceCap.XRC))
            {
                assertThat(r.out())
                    .contains("ok xrcd-open: a file no domain has, without O_CREAT: EAGAIN")
                    .contains("ok xrcd-open: O_EXCL on a file with a domain: EINVAL")
                    .contains("ok xrcd-open: the same file again: its domain")
                    .contains("ok xrc-send: the RECV completed on the SRQ's CQ, naming the XRC_RECV QP")
                    .contains("ok xrc-send: the 48 bytes are in the SRQ's buffer")
                    .contains("ok xrc-srqn: completion remote invalid request error")
                    .contains("ok xrcd-close: a handle of a domain other handles hold: 0")
                    .contains("ok xrcd-close: the handle of a live SRQ: EBUSY")
                    .contains("ok xrcd-close: the handle of a live XRC_RECV QP: EBUSY")
                    .contains("ok xrcd-close: the SRQ's handle once the SRQ is gone: 0")
                    .contains("ok xrcd-close: the last handle once its QP is gone: 0");
            }
            else
            {
                assertThat(r.out()).contains("ok xrc-none: a device without IBV_DEVICE_XRC: EOPNOTSUPP");
            }
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
