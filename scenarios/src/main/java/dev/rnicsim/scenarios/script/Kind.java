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
    /**
     * A memory region ({@code reg}): pinned, on demand (ODP) or over GPU memory (peer memory, dma-buf); its keys stay
     * usable after {@code dereg}.
     */
    MR,
    /** A fast-registration MR ({@code fastmr}): mapped by {@code map}, made valid by {@code post reg_mr}. */
    FASTMR,
    /** A memory window ({@code mw}): bound by {@code bind}; its rkey stays usable after {@code close}. */
    MW,
    /** A completion queue ({@code cq}). */
    CQ,
    /** A queue pair ({@code qp}). */
    QP,
    /** A memory pool ({@code pool}): chunks registered on first need, handing out fragments ({@code alloc}). */
    POOL,
    /** A fragment of a pool ({@code alloc}): an address with its chunk's lkey and rkey; {@code free} returns it. */
    FRAGMENT,
    /** A registration cache ({@code cache}): {@code acquire} returns a cached MR or registers one. */
    CACHE,
    /** An acquired registration of a cache ({@code acquire}): its keys, until {@code release}. */
    HANDLE,
    /** A GPU in a host ({@code gpu}): VRAM on the host's PCIe bus behind a BAR1 aperture. */
    GPU,
    /** A buffer in a GPU's memory ({@code gpualloc}): its GPU virtual address. */
    GPU_BUFFER,
    /** A dma-buf exported from a GPU buffer ({@code dmabuf}): its file descriptor. */
    DMABUF,
    /** A CPU polling a flag while a device's writes land ({@code watch}). */
    WATCH,
    /** Device memory ({@code dm}): bytes on the adapter, moved by {@code dmwrite}/{@code dmread}, registered by
     * {@code regdm}. */
    DM,
    /** A shared receive queue (srq). */
    SRQ,
    /** An address handle (ah). */
    AH,
    /** An XRC domain ({@code xrcd}): its XRC SRQs and XRC_RECV QPs. */
    XRCD,
    /** A number kept for later lines ({@code let}). */
    VALUE
}
