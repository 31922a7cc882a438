package dev.rnicsim.pagetable;

/**
 * A virtual memory area: a page-aligned range {@code [startAddress, endAddress)} with one protection, one kind
 * of backing and one set of flags ({@code struct vm_area_struct}). Splitting and merging make new instances.
 *
 * <p>Immutable and thread safe.
 *
 * @param startAddress first byte, page aligned.
 * @param endAddress   one past the last byte, page aligned.
 * @param protBits     PROT_READ | PROT_WRITE | PROT_EXEC bits.
 * @param flagBits     {@code VM_*} bits of this class.
 * @param kind         what backs the area.
 * @param hugePageSize the hugetlb page size for {@link VmaKind#HUGETLB}, else {@link PageSize#SIZE_4K}.
 * @param name         the pathname /proc shows ("[heap]", a file path), or "" for anonymous memory.
 * @param offsetBytes  file offset of {@code startAddress} for file mappings, else 0.
 */
public record Vma(long startAddress, long endAddress, int protBits, int flagBits, VmaKind kind, PageSize hugePageSize,
                  String name, long offsetBytes)
{
    /** VM_DONTCOPY: set by MADV_DONTFORK. */
    public static final int VM_DONTCOPY = 1;
    /** VM_HUGEPAGE: set by MADV_HUGEPAGE. */
    public static final int VM_HUGEPAGE = 1 << 1;
    /** VM_NOHUGEPAGE: set by MADV_NOHUGEPAGE. */
    public static final int VM_NOHUGEPAGE = 1 << 2;
    /** VM_LOCKED: set by mlock(2). */
    public static final int VM_LOCKED = 1 << 3;
    /** VM_SHARED: a shared mapping (imported only). */
    public static final int VM_SHARED = 1 << 4;
    /** The hugetlb VMA created by mmap, which owns pool reservations (mm/hugetlb.c HPAGE_RESV_OWNER). */
    public static final int VM_RESV_OWNER = 1 << 5;

    /**
     * @return the length in bytes.
     */
    public long lengthBytes()
    {
        return endAddress - startAddress;
    }

    /**
     * @param address a virtual address.
     * @return true when the area contains it.
     */
    public boolean contains(final long address)
    {
        return address >= startAddress && address < endAddress;
    }

    /**
     * @return true with PROT_READ.
     */
    public boolean readable()
    {
        return (protBits & Prot.READ.bit()) != 0;
    }

    /**
     * @return true with PROT_WRITE.
     */
    public boolean writable()
    {
        return (protBits & Prot.WRITE.bit()) != 0;
    }

    /**
     * @return true with PROT_EXEC.
     */
    public boolean executable()
    {
        return (protBits & Prot.EXEC.bit()) != 0;
    }

    /**
     * @param flag one of the {@code VM_*} constants.
     * @return true when the flag is set.
     */
    public boolean has(final int flag)
    {
        return (flagBits & flag) != 0;
    }

    /**
     * @return the permissions column of /proc/PID/maps, e.g. {@code rw-p}.
     */
    public String permissions()
    {
        return (readable() ? "r" : "-") + (writable() ? "w" : "-") + (executable() ? "x" : "-")
            + (has(VM_SHARED) ? "s" : "p");
    }

    Vma withRange(final long start, final long end)
    {
        final long offset = kind == VmaKind.FILE ? offsetBytes + (start - startAddress) : offsetBytes;
        return new Vma(start, end, protBits, flagBits, kind, hugePageSize, name, offset);
    }

    Vma withProt(final int prot)
    {
        return new Vma(startAddress, endAddress, prot, flagBits, kind, hugePageSize, name, offsetBytes);
    }

    Vma withFlags(final int flags)
    {
        return new Vma(startAddress, endAddress, protBits, flags, kind, hugePageSize, name, offsetBytes);
    }

    /** @return true when {@code next} starts where this ends and could be one VMA with it (mm/vma.c merge). */
    boolean mergeableWith(final Vma next)
    {
        return endAddress == next.startAddress && protBits == next.protBits && flagBits == next.flagBits
            && kind == next.kind && hugePageSize == next.hugePageSize && name.equals(next.name)
            && (kind != VmaKind.FILE || offsetBytes + lengthBytes() == next.offsetBytes);
    }
}
