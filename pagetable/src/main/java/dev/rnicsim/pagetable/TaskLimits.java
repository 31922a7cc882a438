package dev.rnicsim.pagetable;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a process carries beside its address space that decides how much memory it may lock or pin: RLIMIT_MEMLOCK
 * (the task's {@code signal->rlim}), CAP_IPC_LOCK (its {@code cred}), and its environment (execve's envp, where a
 * library such as libibverbs reads {@code RDMAV_FORK_SAFE}). A child inherits a copy of all three at fork
 * ({@code copy_signal}, {@code copy_creds} in kernel/fork.c).
 *
 * <p>Not thread safe: part of one {@link UserProcess}.
 */
final class TaskLimits
{
    private long rlimitMemlockBytes = UserProcess.DEFAULT_RLIMIT_MEMLOCK_BYTES;
    private boolean capIpcLock;
    private final Map<String, String> environment = new LinkedHashMap<>();

    long rlimitMemlockBytes()
    {
        return rlimitMemlockBytes;
    }

    /** setrlimit(2) of RLIMIT_MEMLOCK: {@link UserProcess#rlimitMemlockBytes(long)}. */
    void rlimitMemlockBytes(final long bytes)
    {
        if (bytes < 0 && bytes != UserProcess.RLIM_INFINITY)
        {
            throw new KernelException(Errno.EINVAL, "RLIMIT_MEMLOCK=" + bytes + " is negative"
                + "; give a limit of 0 or more, or 'unlimited'");
        }
        this.rlimitMemlockBytes = bytes;
    }

    boolean capIpcLock()
    {
        return capIpcLock;
    }

    void capIpcLock(final boolean held)
    {
        this.capIpcLock = held;
    }

    Map<String, String> environment()
    {
        return Collections.unmodifiableMap(environment);
    }

    /** setenv(3): {@link UserProcess#setenv}. */
    void setenv(final String variable, final String value)
    {
        Objects.requireNonNull(value, "value");
        if (variable == null || variable.isEmpty() || variable.indexOf('=') >= 0)
        {
            throw new KernelException(Errno.EINVAL, "environment variable name '" + variable
                + "' is empty or holds '=' (setenv(3))"
                + "; use a name without '=' (setenv(3) rule)");
        }
        environment.put(variable, value);
    }

    /** A child's copy at fork. */
    void inheritFrom(final TaskLimits parent)
    {
        rlimitMemlockBytes = parent.rlimitMemlockBytes;
        capIpcLock = parent.capIpcLock;
        environment.putAll(parent.environment);
    }

    /**
     * mm/mlock.c {@code can_do_mlock}: a process may lock or pin memory at all when it holds CAP_IPC_LOCK or its
     * RLIMIT_MEMLOCK is above 0.
     *
     * @throws KernelException EPERM when it may not.
     */
    void checkCanDoMlock()
    {
        if (!capIpcLock && rlimitMemlockBytes == 0)
        {
            throw new KernelException(Errno.EPERM, "RLIMIT_MEMLOCK=0 and no CAP_IPC_LOCK (can_do_mlock)"
                + "; raise 'ulimit -l' (RLIMIT_MEMLOCK) or grant CAP_IPC_LOCK");
        }
    }

    /**
     * @param pageShift log2 of the base page (PAGE_SHIFT).
     * @return RLIMIT_MEMLOCK in base pages ({@code rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT}), Long.MAX_VALUE for
     *         RLIM_INFINITY.
     */
    long memlockLimitPages(final int pageShift)
    {
        return rlimitMemlockBytes == UserProcess.RLIM_INFINITY ? Long.MAX_VALUE : rlimitMemlockBytes >>> pageShift;
    }
}
