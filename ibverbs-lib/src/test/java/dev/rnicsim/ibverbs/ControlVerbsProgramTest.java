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
 * src/test/c/control_verbs.c, compiled against the distribution's {@code <infiniband/verbs.h>} and run on this
 * module's library: completion channels a program waits on with poll(2) and no verb call, ibv_rereg_mr, memory
 * windows of both types (ibv_bind_mw, the BIND_MW and LOCAL_INV work requests), the QP's state after an error
 * completion, ibv_dealloc_pd's EBUSY and the extended CQ (ibv_create_cq_ex, ibv_start_poll and the read_*
 * accessors), shared receive queues, and a request the device refuses after ibv_post_send returned (an
 * error completion, as hardware gives), each with the answer of a real stack.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a program that hangs fails its test instead of the build
class ControlVerbsProgramTest
{
    @TempDir
    Path dir;

    static Stream<Arguments> devices()
    {
        return Stream.of(Arguments.of("mlx5_0", DeviceProfiles.connectx5()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void everyControlVerbAnswersAsARealStack(final String hcaId, final DeviceProfile profile) throws Exception
    {
        final Path exe = Programs.compile(dir, "src/test/c/control_verbs.c", "control_verbs");
        try (Programs p = new Programs(dir, hcaId, profile))
        {
            final Programs.Run r = p.run(false, exe.toString());
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok channel-nonblock: no event yet: -1 with EAGAIN")
                .contains("ok channel-poll: the channel's fd became readable")
                .contains("ok channel-poll: ibv_get_cq_event names the CQ and its context")
                .contains("ok rereg-access: the bytes arrived with the rkey after rereg")
                .contains("ok rereg-input: CHANGE_TRANSLATION without an address")
                .contains("ok rereg-move: the 32 bytes arrived at the new translation")
                .contains("ok mw1-bind: the 16 bytes arrived through the window")
                .contains("ok mw2-bind: the bytes arrived through the window")
                .contains("ok mw2-inv: completion remote access error")
                .contains("ok qp-err: the requester's QP is in ERR after the error completion")
                .contains("ok pd-busy: ibv_dealloc_pd of a PD with MRs: EBUSY")
                .contains("ok pd-free")
                .contains("ok cq-ex: read_opcode, read_byte_len, read_qp_num, read_imm_data and read_wc_flags")
                .contains("ok cq-ex: ibv_next_poll: nothing more")
                .contains("ok cq-ex-flags: a field mlx5 does not fill: NULL with EOPNOTSUPP")
                .contains("ok srq-recv: the SRQ's receives completed in order on the QP that took them")
                .contains("ok srq-recv: each SEND's bytes are in its receive buffer")
                .contains("ok srq-limit: ibv_query_srq shows the limit set")
                .contains("ok srq-resize: resizing: EINVAL")
                .contains("ok srq-sge: more SGEs than max_sge: EINVAL, bad_wr the request")
                .contains("ok srq-busy: ibv_destroy_srq once its QP is gone: 0")
                .contains("ok atomic-access: posted: mlx5 enables atomics on every QP of a device with atomic_cap "
                    + "ATOMIC_HCA")
                .contains("ok atomic-access: completion remote invalid request error")
                .contains("ok post-refused: the request completed with IBV_WC_LOC_QP_OP_ERR")
                .contains("ok post-refused: completion Work Request Flushed Error")
                .contains("ok ud-qp: ibv_create_qp of a UD QP")
                .contains("ok ud-ah: ibv_create_ah for the port's LID")
                .contains("ok ud-ah: ibv_create_ah for no port: EINVAL")
                .contains("ok ud-ah: ibv_destroy_ah")
                .contains("ok ud-qp: ibv_destroy_qp of the UD QP");
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
