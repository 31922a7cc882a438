package dev.rnicsim.hwnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The messages of the failures a user can fix: rdma-core installed but the kernel without RDMA support, no device,
 * the device files not accessible, the memlock limit too low. Each names the errno and what to do.
 *
 * <p>Stateless and thread safe.
 */
final class Diagnosis
{
    private Diagnosis()
    {
    }

    /**
     * @param errno what ibv_get_device_list left in errno when it returned NULL.
     * @return the exception explaining it.
     */
    static VerbsException deviceListFailed(final int errno)
    {
        final String verb = "ibv_get_device_list";
        if (errno == Errno.ENOSYS.code())
        {
            return new VerbsException(verb, errno, "no RDMA devices: the kernel has no RDMA support (ENOSYS from "
                + "ibv_get_device_list: " + (Files.isDirectory(Path.of("/sys/class/infiniband_verbs"))
                    ? "the uverbs ABI could not be read" : "/sys/class/infiniband_verbs does not exist")
                + "). Load the RDMA modules (ib_uverbs and the NIC's driver, e.g. mlx5_ib; or rdma_rxe / siw for a "
                + "software device) or run on a host with an RDMA NIC; containers need /sys/class/infiniband* and "
                + "/dev/infiniband from the host");
        }
        if (errno == Errno.EACCES.code() || errno == Errno.EPERM.code())
        {
            return new VerbsException(verb, errno, "no RDMA devices: permission denied reading the RDMA devices "
                + "under /sys/class/infiniband_verbs");
        }
        return new VerbsException(verb, errno, "no RDMA devices: ibv_get_device_list failed with errno " + errno);
    }

    /**
     * @return the exception for an empty device list.
     */
    static VerbsException noDevices()
    {
        return new VerbsException("ibv_get_device_list", Errno.ENODEV.code(), "no RDMA devices: the kernel has "
            + "RDMA support but lists no device that libibverbs can drive. Check 'rdma link' and 'ibv_devices'; load "
            + "the NIC's driver (e.g. mlx5_ib), install the user-space providers ('ibverbs-providers' on Debian, "
            + "part of 'rdma-core' on RHEL), or add a software device ('rdma link add rxe0 type rxe netdev eth0')");
    }

    /**
     * @param name       the device name.
     * @param uverbsName its uverbs character device, e.g. {@code uverbs0}.
     * @param errno      what ibv_open_device left in errno.
     * @return the exception explaining it.
     */
    static VerbsException openFailed(final String name, final String uverbsName, final int errno)
    {
        final String file = "/dev/infiniband/" + (uverbsName.isEmpty() ? "uverbs*" : uverbsName);
        if (errno == Errno.EACCES.code() || errno == Errno.EPERM.code())
        {
            return new VerbsException("ibv_open_device", errno, "rdma:" + name + ": permission denied on " + file
                + ": give this user read and write access to it (usually membership of the group owning it, e.g. "
                + "'rdma', set by rdma-core's udev rules), or run as root");
        }
        if (errno == Errno.ENOENT.code() || errno == Errno.ENODEV.code())
        {
            return new VerbsException("ibv_open_device", errno, "rdma:" + name + ": " + file + " is missing: the "
                + "device went away or ib_uverbs is not loaded (containers need /dev/infiniband from the host)");
        }
        return new VerbsException("ibv_open_device", errno, "rdma:" + name + ": ibv_open_device failed on " + file);
    }

    /**
     * The memlock part of an ENOMEM or EPERM from a verb that pins memory (reg_mr, create_cq, create_qp).
     *
     * @return a sentence naming RLIMIT_MEMLOCK's current soft and hard values.
     */
    static String memlock()
    {
        final long[] limit = Libc.memlockLimitBytes();
        final String now = limit == null ? "RLIMIT_MEMLOCK could not be read"
            : "RLIMIT_MEMLOCK=" + Libc.describeLimit(limit[0]) + " (soft), " + Libc.describeLimit(limit[1]) + " (hard)";
        return now + "; the pages of every MR, CQ and QP of the process count against it unless the process holds "
            + "CAP_IPC_LOCK: raise it with 'ulimit -l' or 'memlock' in /etc/security/limits.conf (LimitMEMLOCK= for "
            + "systemd services)";
    }
}
