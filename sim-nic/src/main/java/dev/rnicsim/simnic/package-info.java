/**
 * The simulated RDMA device behind the verbs API: device profiles (built-in and read from {@code ibv_devinfo -v}
 * dumps), the driver's registration path with full undo, QPs and CQs, a fabric connecting devices on several
 * simulated hosts in one JVM, the simulated clock and the one calibrated {@link dev.rnicsim.simnic.CostModel},
 * counters in the shape of the sysfs port counters and hw_counters, and a registration trace.
 */
package dev.rnicsim.simnic;
