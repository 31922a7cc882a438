/**
 * The simulated RDMA device behind the verbs API.
 *
 * <p>What will live here: the "driver" (umem: pin through the host model, merge runs, choose the page size),
 * the firmware's MR and MW state, device profiles (built in, or read from an {@code ibv_devinfo -v} dump),
 * QPs and CQs, a fabric between simulated hosts, the simulated clock and the one calibrated cost model that
 * turns counts from the lower modules into nanoseconds, counters and traces.
 */
package dev.rnicsim.simnic;
