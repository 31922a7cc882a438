package dev.rnicsim.scenarios.script;

/**
 * What a name in a script is bound to.
 */
public enum Kind
{
    /** A simulated host ({@code host}). */
    HOST,
    /** A device in a host ({@code device}). */
    DEVICE,
    /** A process that opened a device ({@code open}); also usable where a process is expected. */
    CONTEXT,
    /** A process ({@code process}, {@code fork}). */
    PROCESS,
    /** An address in a process ({@code mmap}). */
    BUFFER,
    /** A protection domain ({@code pd}). */
    PD,
    /** A memory region ({@code reg}); its keys stay usable after {@code dereg}. */
    MR,
    /** A fast-registration MR ({@code fastmr}): mapped by {@code map}, made valid by {@code post reg_mr}. */
    FASTMR,
    /** A memory window ({@code mw}): bound by {@code bind}; its rkey stays usable after {@code close}. */
    MW,
    /** A completion queue ({@code cq}). */
    CQ,
    /** A queue pair ({@code qp}). */
    QP,
    /** A number kept for later lines ({@code let}). */
    VALUE
}
