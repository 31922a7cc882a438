package dev.rnicsim.simnic;

import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WrOpcode;
import java.util.List;

/**
 * The {@code hw_counters} directory a driver gives each port under {@code /sys/class/infiniband/DEV/ports/1/}, in
 * the driver's own names and order, as a device-profile property ({@link DeviceProfile#hwCounters()}): drivers
 * name and count their events differently.
 *
 * <ul>
 * <li>{@link #MLX5}: the Q counters of {@code drivers/infiniband/hw/mlx5/counters.c} (basic, out of sequence,
 * retransmission and extended error counters, then the congestion counters). Counting as the driver's commit
 * messages describe them: {@code out_of_buffer} each request dropped for lack of a receive WQE,
 * {@code rnr_nak_retry_err} each RNR NAK received while the retry limit was not exceeded,
 * {@code local_ack_timeout_err} each ACK-timer expiry while the retry limit was not exceeded,
 * {@code req_rnr_retries_exceeded} and {@code req_transport_retries_exceeded} each work request that exhausted its
 * retries, {@code req_remote_access_errors} each remote-access NAK the requester receives,
 * {@code resp_remote_access_errors} each one the responder sends.</li>
 * <li>{@link #RXE}: {@code rxe_counter_descs[]} of {@code drivers/infiniband/sw/rxe/rxe_hw_counters.c}, counted
 * where rxe counts them: {@code rcvd_rnr_err} in the completer's check_ack for every RNR NAK,
 * {@code send_rnr_err} in the responder for every RNR NAK sent, {@code completer_retry_err} for each transport
 * retry and {@code retry_exceeded_err} / {@code retry_rnr_exceeded_err} when the retries run out,
 * {@code rdma_sends} in the completer's do_complete for SEND opcodes, {@code rdma_recvs} in the responder's
 * do_complete for successful receives, {@code sent_pkts} / {@code rcvd_pkts} per packet, ACKs and NAKs included
 * ({@code rxe_xmit_packet} and {@code rxe_rcv} count every packet).</li>
 * <li>{@link #NONE}: drivers whose counters the simulator does not model (their directory is shown empty).</li>
 * </ul>
 *
 * The model has no packet loss, reordering or congestion: sequence-error, duplicate, link and CNP/ECN counters
 * stay 0, and packets count the data packets (ACKs and NAKs are not packets in the model). Immutable.
 */
public enum HwCounters
{
    /** mlx5 (ConnectX-4 and later, BlueField). */
    MLX5("drivers/infiniband/hw/mlx5/counters.c", List.of("rx_write_requests", "rx_read_requests",
        "rx_atomic_requests", "out_of_buffer", "out_of_sequence", "duplicate_request", "rnr_nak_retry_err",
        "packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err", "resp_local_length_error",
        "resp_cqe_error", "req_cqe_error", "req_remote_invalid_request", "req_remote_access_errors",
        "resp_remote_access_errors", "resp_cqe_flush_error", "req_cqe_flush_error",
        "req_transport_retries_exceeded", "req_rnr_retries_exceeded", "rp_cnp_ignored", "rp_cnp_handled",
        "np_ecn_marked_roce_packets", "np_cnp_sent")),
    /** rxe (Soft-RoCE). */
    RXE("drivers/infiniband/sw/rxe/rxe_hw_counters.c", List.of("sent_pkts", "rcvd_pkts", "duplicate_request",
        "out_of_seq_request", "rcvd_rnr_err", "send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err",
        "retry_rnr_exceeded_err", "completer_retry_err", "send_err", "link_downed", "rdma_sends", "rdma_recvs")),
    /** A driver whose hw_counters are not modelled. */
    NONE("", List.of());

    private final String source;
    private final List<String> names;

    HwCounters(final String source, final List<String> names)
    {
        this.source = source;
        this.names = names;
    }

    /** @return the file names of the hw_counters directory, in the driver's order. */
    public List<String> names()
    {
        return names;
    }

    /** @return the kernel source that declares them (empty for {@link #NONE}). */
    public String source()
    {
        return source;
    }

    /**
     * @param name a counter name of any driver set.
     * @return true when some driver set has it.
     */
    public static boolean known(final String name)
    {
        return MLX5.names.contains(name) || RXE.names.contains(name);
    }

    /**
     * @param d    a device.
     * @param name a counter file name of {@link #MLX5} or {@link #RXE}.
     * @return its value on the device; counters of events the model has no cause for read 0.
     */
    public static long value(final SimDevice d, final String name)
    {
        return switch (name)
        {
            case "sent_pkts" -> d.counter(SimCounter.PORT_XMIT_PACKETS) + d.counter(SimCounter.ACKS_SENT);
            case "rcvd_pkts" -> d.counter(SimCounter.PORT_RCV_PACKETS) + d.counter(SimCounter.ACKS_RECEIVED);
            case "rcvd_rnr_err" -> d.counter(SimCounter.RNR_NAK_RETRY_ERR) + d.counter(SimCounter.RNR_RETRIES_EXCEEDED);
            case "send_rnr_err" -> d.counter(SimCounter.OUT_OF_BUFFER) + d.counter(SimCounter.ODP_RNR_NAKS);
            case "retry_exceeded_err" -> d.counter(SimCounter.TRANSPORT_RETRIES_EXCEEDED);
            case "retry_rnr_exceeded_err" -> d.counter(SimCounter.RNR_RETRIES_EXCEEDED);
            case "completer_retry_err" -> d.counter(SimCounter.LOCAL_ACK_TIMEOUT_ERR);
            case "rdma_sends" -> d.counter(SimCounter.SENDS_COMPLETED);
            case "rdma_recvs" -> d.counter(SimCounter.RECVS_COMPLETED);
            default ->
            {
                for (final SimCounter c : SimCounter.values())
                {
                    if (c.label().equals(name))
                    {
                        yield d.counter(c);
                    }
                }
                yield 0;
            }
        };
    }

    /**
     * A work request whose peer never answered: the request went out {@code retryCount + 1} times and the ACK timer
     * expired after each, the first {@code retryCount} times followed by a retransmission, the last ending the request
     * with IBV_WC_RETRY_EXC_ERR (IBA 9.7.6.1.3; rxe_comp.c counts {@code completer_retry_err} per retry and
     * {@code retry_exceeded_err} once). The transmissions are packets on the link: PortXmitPkts and PortXmitData
     * (4-byte words, a packet's payload at most the path MTU) count each, and rxe's {@code sent_pkts} with them.
     *
     * @param requesterQp the requester QP (its device counts, its path MTU sizes the packet).
     * @param retryCount the QP's retry_cnt.
     * @param wr         the work request whose (first outstanding) packet was never acknowledged.
     */
    static void noAck(final SimQp requesterQp, final int retryCount, final SendWr wr)
    {
        final long transmissions = retryCount + 1L;
        final boolean request = wr.opcode() == WrOpcode.RDMA_READ || wr.opcode().isAtomic();
        final SimDevice requester = requesterQp.device;
        final long payload = request ? 0 : Math.min(wr.totalBytes(), PacketMtu.bytes(requesterQp));
        requester.count(SimCounter.PORT_XMIT_PACKETS, transmissions);
        requester.count(SimCounter.PORT_XMIT_DATA, transmissions * payload / 4);
        requester.count(SimCounter.LOCAL_ACK_TIMEOUT_ERR, retryCount);
        requester.count(SimCounter.TRANSPORT_RETRIES_EXCEEDED, 1);
    }

    /**
     * A work request that ran out of rnr_retry: {@code retried} RNR NAKs were answered with a retry, one more
     * ended it with IBV_WC_RNR_RETRY_EXC_ERR.
     */
    static void rnrExhausted(final SimDevice requester, final long retried)
    {
        requester.count(SimCounter.RNR_NAK_RETRY_ERR, retried);
        requester.count(SimCounter.RNR_RETRIES_EXCEEDED, 1);
    }

    /** rxe counts rdma_sends in the completer's do_complete for SEND opcodes, errors included, flushes not. */
    static void sendCompleted(final SimDevice requester, final WrOpcode opcode, final WcStatus status)
    {
        if (status != WcStatus.WR_FLUSH_ERR && (opcode == WrOpcode.SEND || opcode == WrOpcode.SEND_WITH_IMM
            || opcode == WrOpcode.SEND_WITH_INV))
        {
            requester.count(SimCounter.SENDS_COMPLETED, 1);
        }
    }
}
