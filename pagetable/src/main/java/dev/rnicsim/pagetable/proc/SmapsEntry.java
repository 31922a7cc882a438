package dev.rnicsim.pagetable.proc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One virtual memory area (VMA) as printed in {@code /proc/[pid]/smaps} or {@code /proc/[pid]/maps}: the header
 * line, and for smaps the field lines below it. Format: {@code proc(5)}, sections "/proc/[pid]/maps" and
 * "/proc/[pid]/smaps"; kernel {@code fs/proc/task_mmu.c}, {@code show_map_vma} (header) and {@code show_smap}
 * (fields).
 *
 * <p>A header line has the shape
 * <pre>{@code
 * 7f3a4c000000-7f3a4c200000 rw-p 00000000 00:0f 1048601                    /anon_hugepage (deleted)
 * start-end                 perms offset  dev   inode                      pathname
 * }</pre>
 * and the smaps field lines below it look like {@code "Rss:                 84 kB"},
 * {@code "THPeligible:           0"} and {@code "VmFlags: rd wr mr mw me ac "}.
 *
 * <p>Addresses, offset and inode are unsigned 64-bit values held in a {@code long}: compare them with
 * {@link Long#compareUnsigned(long, long)} and print them with {@link Long#toHexString(long)} (the
 * {@code [vsyscall]} area starts at {@code 0xffffffffff600000}, negative as a signed {@code long}).
 *
 * <p>Immutable (the maps and list are unmodifiable copies), so safe to share between threads.
 *
 * @param startAddress first byte of the area (inclusive), unsigned.
 * @param endAddress   first byte after the area (exclusive), unsigned; above {@code startAddress} unsigned.
 * @param readable     perms character 1 is {@code 'r'}.
 * @param writable     perms character 2 is {@code 'w'}.
 * @param executable   perms character 3 is {@code 'x'}.
 * @param shared       perms character 4 is {@code 's'} (shared); false for {@code 'p'} (private, copy on write).
 * @param offsetBytes  offset of the area in the mapped file, in bytes (printed in hex); 0 for anonymous areas.
 * @param device       the {@code "major:minor"} device of the mapped file, in hex as printed, e.g. {@code "fd:01"};
 *                     {@code "00:00"} for anonymous areas.
 * @param inode        inode of the mapped file on {@code device}; 0 for anonymous areas.
 * @param pathname     everything after the inode field with leading whitespace removed, exactly as printed (a
 *                     newline in a file name stays escaped as {@code "\012"}): a file path, possibly with spaces or
 *                     a {@code " (deleted)"} suffix, or a pseudo name such as {@code "[heap]"}, {@code "[stack]"},
 *                     {@code "[vdso]"}, {@code "[vsyscall]"} or {@code "[anon:name]"}; {@code ""} when absent.
 * @param fieldsKb     every smaps field line of the form {@code "Name:   <number> kB"}, name to number of KiB, in
 *                     file order, e.g. {@code Size}, {@code KernelPageSize}, {@code Rss}, {@code Pss},
 *                     {@code AnonHugePages}, {@code Private_Hugetlb}, {@code Swap}; empty for a maps line.
 * @param otherFields  every other smaps field line except {@code VmFlags}, name to value with surrounding
 *                     whitespace removed, in file order, e.g. {@code "THPeligible" -> "0"},
 *                     {@code "ProtectionKey" -> "0"}; empty for a maps line.
 * @param vmFlags      the two-letter flags of the {@code VmFlags} line in file order, e.g. {@code [rd, wr, mr, ht]};
 *                     empty when there is no such line.
 */
public record SmapsEntry(
    long startAddress,
    long endAddress,
    boolean readable,
    boolean writable,
    boolean executable,
    boolean shared,
    long offsetBytes,
    String device,
    long inode,
    String pathname,
    Map<String, Long> fieldsKb,
    Map<String, String> otherFields,
    List<String> vmFlags)
{
    /** Base page size assumed when there is no {@code KernelPageSize} field (x86-64), in bytes. */
    public static final long DEFAULT_PAGE_SIZE_BYTES = 4096;

    /**
     * Checks the values and takes unmodifiable copies of the maps (keeping their iteration order) and the list.
     *
     * @throws NullPointerException     if a reference argument, a map key or value, or a flag is null.
     * @throws IllegalArgumentException if {@code startAddress} is not below {@code endAddress} (unsigned), or a
     *                                  {@code fieldsKb} value is negative.
     */
    public SmapsEntry
    {
        if (Long.compareUnsigned(startAddress, endAddress) >= 0)
        {
            throw new IllegalArgumentException("startAddress 0x" + Long.toHexString(startAddress)
                + " must be below endAddress 0x" + Long.toHexString(endAddress));
        }
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(pathname, "pathname");
        final Map<String, Long> fieldsCopy = new LinkedHashMap<>();
        for (final Map.Entry<String, Long> field : fieldsKb.entrySet())
        {
            final String name = Objects.requireNonNull(field.getKey(), "fieldsKb key");
            final Long kb = Objects.requireNonNull(field.getValue(), "fieldsKb value");
            if (kb < 0)
            {
                throw new IllegalArgumentException("fieldsKb " + name + "=" + kb + " kB must not be negative");
            }
            fieldsCopy.put(name, kb);
        }
        final Map<String, String> otherCopy = new LinkedHashMap<>();
        for (final Map.Entry<String, String> field : otherFields.entrySet())
        {
            otherCopy.put(Objects.requireNonNull(field.getKey(), "otherFields key"),
                Objects.requireNonNull(field.getValue(), "otherFields value"));
        }
        fieldsKb = Collections.unmodifiableMap(fieldsCopy);
        otherFields = Collections.unmodifiableMap(otherCopy);
        vmFlags = List.copyOf(vmFlags);
    }

    /**
     * @return {@code endAddress - startAddress}, the size of the area in bytes.
     */
    public long lengthBytes()
    {
        return endAddress - startAddress;
    }

    /**
     * @param name a field name as printed before the colon, e.g. {@code "Rss"} or {@code "AnonHugePages"}.
     * @return the value of that {@code "Name: <number> kB"} field in KiB, or 0 when the area has no such field.
     */
    public long fieldKb(final String name)
    {
        return fieldsKb.getOrDefault(name, 0L);
    }

    /**
     * @return {@code KernelPageSize} in bytes (the page size the kernel uses for this area), or
     *         {@value #DEFAULT_PAGE_SIZE_BYTES} when there is no such field (e.g. a maps line).
     */
    public long kernelPageSizeBytes()
    {
        final Long kb = fieldsKb.get("KernelPageSize");
        return kb == null ? DEFAULT_PAGE_SIZE_BYTES : kb * 1024;
    }

    /**
     * Whether the area is backed by hugetlb pages (not transparent huge pages, which show as
     * {@code AnonHugePages} in an ordinary area).
     *
     * @return true when {@code KernelPageSize} is above 4 kB, or {@link #vmFlags()} has {@code "ht"}, or the
     *         pathname starts with {@code "/anon_hugepage"} (a {@code MAP_HUGETLB} anonymous area). Assumes a
     *         4 KiB base page, as on x86-64.
     */
    public boolean isHugetlb()
    {
        return fieldKb("KernelPageSize") * 1024 > DEFAULT_PAGE_SIZE_BYTES
            || vmFlags.contains("ht")
            || pathname.startsWith("/anon_hugepage");
    }

    /**
     * @return the 4-character perms field as printed, e.g. {@code "r-xp"} or {@code "rw-s"}.
     */
    public String permissions()
    {
        return new String(new char[] {
            readable ? 'r' : '-', writable ? 'w' : '-', executable ? 'x' : '-', shared ? 's' : 'p'});
    }
}
