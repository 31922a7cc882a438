package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.Host;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.SmapsImporter;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.proc.SmapsEntry;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The host kernel's errno paths (module pagetable) reached through its Java API: {@code UserProcess}'s system
 * calls, pinning, notifiers, {@code PhysicalMemory} and the smaps import. Stateless.
 */
final class ErrnoWalkHost
{
    private static final long MIB = 1L << 20;

    private ErrnoWalkHost()
    {
    }

    private static UserProcess process()
    {
        return new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).build()).spawn("app");
    }

    private static UserProcess process(final HostConfig.Builder config)
    {
        return new Host(config.build()).spawn("app");
    }

    private static EnumSet<Prot> rw()
    {
        return EnumSet.of(Prot.READ, Prot.WRITE);
    }

    private static EnumSet<MapFlag> anon(final MapFlag... more)
    {
        final EnumSet<MapFlag> f = EnumSet.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS);
        f.addAll(List.of(more));
        return f;
    }

    private static SmapsEntry area(final long start, final long end, final long kernelPageKb, final String name)
    {
        final Map<String, Long> kb = new LinkedHashMap<>();
        kb.put("Size", (end - start) >>> 10);
        kb.put("KernelPageSize", kernelPageKb);
        return new SmapsEntry(start, end, true, true, false, false, 0, "00:00", 0, name, kb, Map.of(), List.of());
    }

    /**
     * Touches {@code fill} page by page until no more than {@code leaveBytes} of memory are free.
     */
    private static void fillMemory(final UserProcess p, final long fill, final long lengthBytes, final long leaveBytes)
    {
        final dev.rnicsim.pagetable.PhysicalMemory m = p.host().physicalMemory();
        try
        {
            for (long at = 0; at < lengthBytes && m.freeFrames() * 4096 > leaveBytes; at += 4096)
            {
                p.touch(fill + at, 4096, true);
            }
        }
        catch (final dev.rnicsim.pagetable.KernelException full)
        {
            // out of memory: full, as wanted
        }
    }

    /** @return every case. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        // mmap (mm/mmap.c do_mmap)
        c.add(c("mmap of zero bytes", "EINVAL", () -> process().mmap(0, 0, rw(), anon()), "length=0",
            "must be positive"));
        c.add(c("mmap with neither MAP_PRIVATE nor MAP_SHARED", "EINVAL",
            () -> process().mmap(0, 4096, rw(), EnumSet.of(MapFlag.ANONYMOUS)), "MAP_PRIVATE", "required"));
        c.add(c("mmap MAP_SHARED", "EOPNOTSUPP",
            () -> process().mmap(0, 4096, rw(), EnumSet.of(MapFlag.SHARED, MapFlag.ANONYMOUS)), "MAP_SHARED",
            "use MAP_PRIVATE"));
        c.add(c("mmap of a file", "EOPNOTSUPP", () -> process().mmap(0, 4096, rw(), EnumSet.of(MapFlag.PRIVATE)),
            "file mappings"));
        c.add(c("mmap larger than TASK_SIZE", "ENOMEM",
            () -> process().mmap(0, UserProcess.TASK_SIZE, rw(), anon()), "TASK_SIZE="));
        c.add(c("mmap MAP_FIXED past TASK_SIZE", "ENOMEM",
            () -> process().mmap(UserProcess.TASK_SIZE - 4096, 8192, rw(), anon(MapFlag.FIXED)), "TASK_SIZE",
            "pick a fixed address"));
        c.add(c("mmap MAP_FIXED at a misaligned address", "EINVAL",
            () -> process().mmap(0x10000001L, 4096, rw(), anon(MapFlag.FIXED)), "not aligned",
            "align the address"));
        c.add(c("mmap MAP_FIXED below vm.mmap_min_addr", "EPERM",
            () -> process().mmap(4096, 4096, rw(), anon(MapFlag.FIXED)), "vm.mmap_min_addr="));
        c.add(c("mmap MAP_FIXED_NOREPLACE over a mapping", "EEXIST", () -> {
            final UserProcess p = process();
            final long a = p.mmapAnonymous(8192);
            p.mmap(a, 4096, rw(), anon(MapFlag.FIXED_NOREPLACE));
        }, "MAP_FIXED_NOREPLACE", "overlaps"));
        c.add(c("mmap with two MAP_HUGE_* sizes", "EINVAL",
            () -> process(HostConfig.builder().hugepages2M(4)).mmap(0, 2 * MIB, rw(),
                anon(MapFlag.HUGETLB, MapFlag.HUGE_2MB, MapFlag.HUGE_1GB)), "HUGE_2MB", "exclusive"));
        c.add(c("mmap when no free range is left", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().maxMapCount(1_000_000).overcommitMemory(1));
            p.mmap(0, UserProcess.MMAP_BASE - (1L << 30), rw(), anon());
            p.mmap(0, 2L << 30, rw(), anon());
        }, "no free range"));
        // munmap, mprotect, madvise, mlock (mm/mmap.c, mm/mprotect.c, mm/madvise.c, mm/mlock.c)
        c.add(c("munmap past TASK_SIZE", "EINVAL", () -> process().munmap(UserProcess.TASK_SIZE + 4096, 4096),
            "outside the user address space", "give a user-space address"));
        c.add(c("munmap of a negative length", "EINVAL", () -> process().munmap(0x10000000L, -4096),
            "is negative", "give a positive length"));
        c.add(c("munmap of zero bytes", "EINVAL", () -> process().munmap(0x10000000L, 0), "length=0"));
        c.add(c("munmap of a range that wraps past TASK_SIZE", "EINVAL",
            () -> process().munmap(UserProcess.TASK_SIZE - 4096, 8192), "TASK_SIZE"));
        c.add(c("munmap that splits past vm.max_map_count", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().maxMapCount(1));
            final long a = p.mmapAnonymous(64 * 1024);
            p.munmap(a + 8192, 4096);
        }, "vm.max_map_count"));
        c.add(c("munmap cutting through a huge page", "EINVAL", () -> {
            final UserProcess p = process(HostConfig.builder().hugepages2M(2));
            final long a = p.mmap(0, 2 * MIB, rw(), anon(MapFlag.HUGETLB));
            p.munmap(a, 4096);
        }, "cuts through"));
        c.add(c("mprotect of an unmapped range", "ENOMEM", () -> process().mprotect(0x10000000L, 4096, rw()),
            "not mapped"));
        c.add(c("MADV_DONTNEED on locked memory", "EINVAL", () -> {
            final UserProcess p = process();
            final long a = p.mmapAnonymous(8192);
            p.mlock(a, 8192);
            p.madvise(a, 8192, Madvice.DONTNEED);
        }, "VM_LOCKED", "munlock"));
        c.add(c("madvise that splits past vm.max_map_count", "EAGAIN", () -> {
            final UserProcess p = process(HostConfig.builder().maxMapCount(1));
            final long a = p.mmapAnonymous(64 * 1024);
            p.madvise(a + 8192, 4096, Madvice.DONTFORK);
        }, "vm.max_map_count"));
        c.add(c("mlock with RLIMIT_MEMLOCK 0", "EPERM", () -> {
            final UserProcess p = process().rlimitMemlockBytes(0);
            p.mlock(p.mmapAnonymous(4096), 4096);
        }, "RLIMIT_MEMLOCK=0", "CAP_IPC_LOCK"));
        c.add(c("mlock past RLIMIT_MEMLOCK", "ENOMEM", () -> {
            final UserProcess p = process().rlimitMemlockBytes(8192);
            p.mlock(p.mmapAnonymous(64 * 1024), 64 * 1024);
        }, "locked_vm=", "RLIMIT_MEMLOCK"));
        c.add(c("mlock that cannot fault the range in", "EAGAIN", () -> {
            final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(64 * MIB).overcommitMemory(1));
            p.rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            p.mlock(p.mmapAnonymous(128 * MIB), 128 * MIB);
        }, "mlock"));
        c.add(c("MADV_COLLAPSE on a hugetlb VMA", "EINVAL", () -> {
            final UserProcess p = process(HostConfig.builder().hugepages2M(2));
            final long a = p.mmap(0, 2 * MIB, rw(), anon(MapFlag.HUGETLB));
            p.madvise(a, 2 * MIB, Madvice.COLLAPSE);
        }, "MADV_COLLAPSE"));
        c.add(c("MADV_COLLAPSE without a free huge block", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(64 * MIB).aged(true));
            final long fill = p.mmapAnonymous(64 * MIB);
            p.madvise(fill, 64 * MIB, Madvice.NOHUGEPAGE);
            fillMemory(p, fill, 64 * MIB, 5 * MIB);
            final long a = p.mmap(0, 4 * MIB, rw(), anon());
            p.touch(a, 4 * MIB, true);
            p.madvise(a, 4 * MIB, Madvice.COLLAPSE);
        }, "MADV_COLLAPSE"));
        // faults (mm/memory.c)
        c.add(c("a touch of a range past user space", "EFAULT",
            () -> process().touch(UserProcess.TASK_SIZE - 4096, 8192, false), "leaves user space"));
        c.add(c("a touch past the memory and swap", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(64 * MIB).overcommitMemory(1));
            p.touch(p.mmapAnonymous(128 * MIB), 128 * MIB, true);
        }, "out of memory", "no free frame"));
        c.add(c("a hugetlb fault of a child with the pool empty", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().hugepages2M(1));
            final long a = p.mmap(0, 2 * MIB, rw(), anon(MapFlag.HUGETLB));
            p.fork("child").touch(a, 4096, true);
        }, "hugetlb", "SIGBUS"));
        c.add(c("a hugetlb copy-on-write with the pool empty", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().hugepages2M(1));
            final long a = p.mmap(0, 2 * MIB, rw(), anon(MapFlag.HUGETLB));
            p.touch(a, 4096, true);
            p.fork("child").touch(a, 4096, true);
        }, "copy-on-write", "SIGBUS"));
        // pinning (mm/gup.c, ib_umem_get)
        c.add(c("a pin of a range that wraps", "EINVAL", () -> process().pinUserPages(-4096, 8192, true, true),
            "2^64"));
        c.add(c("a pin of zero bytes", "EINVAL", () -> {
            final UserProcess p = process();
            p.pinUserPages(p.mmapAnonymous(4096), 0, true, true);
        }, "nothing to pin"));
        c.add(c("a pin of more than UINT_MAX pages", "EINVAL", () -> {
            final UserProcess p = process().rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            p.pinUserPages(0x10000000L, 1L << 45, true, true);
        }, "UINT_MAX"));
        c.add(c("a pin past TASK_SIZE", "EFAULT", () -> {
            final UserProcess p = process().rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            p.pinUserPages(UserProcess.TASK_SIZE - 4096, 8192, true, true);
        }, "TASK_SIZE"));
        c.add(c("an unpin by another process", "EINVAL", () -> {
            final Host h = new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).build());
            final UserProcess a = h.spawn("a");
            final PinnedPages pins = a.pinUserPages(a.mmapAnonymous(4096), 4096, true, true);
            h.spawn("b").unpinUserPages(pins);
        }, "given to pid", "unpin pages with the process that pinned them"));
        c.add(c("an unpin twice", "EINVAL", () -> {
            final UserProcess p = process();
            final PinnedPages pins = p.pinUserPages(p.mmapAnonymous(4096), 4096, true, true);
            p.unpinUserPages(pins);
            p.unpinUserPages(pins);
        }, "unpinned already"));
        c.add(c("a long-term pin of a ZONE_MOVABLE page held by a short-term pin", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(128 * MIB)
                .movableZoneBytes(64 * MIB));
            final long a = p.mmapAnonymous(4096);
            p.touch(a, 4096, true);
            p.pinUserPages(a, 4096, true, false);
            p.pinUserPages(a, 4096, true, true);
        }, "ZONE_MOVABLE"));
        c.add(c("a long-term pin that must move a page with no frame left", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(64 * MIB)
                .movableZoneBytes(32 * MIB));
            final long fill = p.mmapAnonymous(64 * MIB);
            p.madvise(fill, 64 * MIB, Madvice.NOHUGEPAGE);
            fillMemory(p, fill, 64 * MIB, 0);
            long movable = fill;
            while (p.host().physicalMemory().zoneOf(p.translate(movable) >>> 12) != dev.rnicsim.pagetable.Zone.MOVABLE)
            {
                movable += 4096;
            }
            p.pinUserPages(movable, 4096, true, true);
        }, "must move"));
        c.add(c("fork that must copy a pinned page with no memory", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().physicalMemoryBytes(64 * MIB)
                .forkBehaviour(ForkBehaviour.MODERN));
            p.rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            final long big = p.mmapAnonymous(40 * MIB);
            p.pinUserPages(big, 40 * MIB, true, true);
            p.fork("child");
        }, "fork must copy"));
        c.add(c("fork that must copy a pinned hugetlb page with the pool empty", "ENOMEM", () -> {
            final UserProcess p = process(HostConfig.builder().hugepages2M(1)
                .forkBehaviour(ForkBehaviour.MODERN));
            p.rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
            final long a = p.mmap(0, 2 * MIB, rw(), anon(MapFlag.HUGETLB));
            p.pinUserPages(a, 2 * MIB, true, true);
            p.fork("child");
        }, "fork must copy a pinned hugetlb page"));
        // notifiers (mm/mmu_notifier.c, mm/hmm.c)
        c.add(c("an interval notifier of zero bytes", "EINVAL",
            () -> process().insertIntervalNotifier(0x10000000L, 0, (i, r) -> { }), "interval"));
        c.add(c("hmm_range_fault of an empty range", "EFAULT",
            () -> process().hmmRangeFault(0x10000000L, 0, true, false, null), "hmm range"));
        c.add(c("hmm_range_fault of an unmapped page", "EFAULT",
            () -> process().hmmRangeFault(0x10000000L, 4096, true, false, (va, pa, w) -> { }), "hmm_range_fault",
            "mmap the range first"));
        c.add(c("hmm_range_fault for write of a read-only page", "EFAULT", () -> {
            final UserProcess p = process();
            final long a = p.mmap(0, 4096, EnumSet.of(Prot.READ), anon());
            p.hmmRangeFault(a, 4096, true, true, (va, pa, w) -> { });
        }, "hmm_range_fault"));
        // the process, the host and physical memory
        c.add(c("a negative RLIMIT_MEMLOCK", "EINVAL", () -> process().rlimitMemlockBytes(-5), "is negative",
            "unlimited"));
        c.add(c("an empty environment variable name", "EINVAL", () -> process().setenv("", "1"), "is empty"));
        c.add(c("a hugetlb pool of a size the base page lacks", "EINVAL",
            () -> new Host(HostConfig.builder().build()).hugepagesTotal(PageSize.SIZE_16K), "hugetlb"));
        c.add(c("a page size no architecture has", "EINVAL", () -> PageSize.ofBytes(12345), "page size 12345"));
        c.add(c("a frame number outside memory", "EINVAL",
            () -> new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build()).physicalMemory().pinCount(-1),
            "pfn -1"));
        c.add(c("a physical read of a free frame", "EFAULT", () -> {
            final Host h = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build());
            h.physicalMemory().read((h.physicalMemory().totalFrames() - 1) << 12, new byte[8], 0, 8);
        }, "is free"));
        c.add(c("a physical read past memory", "EFAULT", () -> {
            final Host h = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build());
            h.physicalMemory().read(1L << 40, new byte[8], 0, 8);
        }, "leaves physical memory"));
        c.add(c("a physical write to the shared zero page", "EFAULT", () -> {
            final Host h = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build());
            h.physicalMemory().write(h.physicalMemory().zeroPfn() << 12, new byte[8], 0, 8);
        }, "zero page"));
        c.add(c("a physical read into a buffer too small", "EFAULT", () -> {
            final Host h = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build());
            h.physicalMemory().read(0, new byte[4], 0, 8);
        }, "cannot hold"));
        c.add(c("device memory of zero bytes", "EINVAL",
            () -> new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build()).physicalMemory()
                .attachDeviceMemory("bar", 0), "device memory of 0 bytes"));
        c.add(c("a device-memory read past its end", "EFAULT",
            () -> new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build()).physicalMemory()
                .attachDeviceMemory("bar", 4096).read(4000, new byte[200], 0, 200), "leaves the 4096 bytes"));
        c.add(c("a physical read of a bus address no device memory has", "EFAULT", () -> {
            final Host h = new Host(HostConfig.builder().physicalMemoryBytes(64 * MIB).build());
            final long base = h.physicalMemory().attachDeviceMemory("bar", 4096).baseAddr();
            h.physicalMemory().read(base + (1L << 30), new byte[8], 0, 8);
        }, "is in no device memory"));
        // the smaps import (SmapsImporter)
        c.add(c("an smaps import into a process with mappings", "EINVAL", () -> {
            final UserProcess p = process();
            p.mmapAnonymous(4096);
            SmapsImporter.importEntries(p, List.of(area(0x10000000L, 0x10001000L, 4, "")), false);
        }, "empty process"));
        c.add(c("an smaps import past vm.max_map_count", "ENOMEM",
            () -> SmapsImporter.importEntries(process(HostConfig.builder().maxMapCount(1)),
                List.of(area(0x10000000L, 0x10001000L, 4, ""), area(0x20000000L, 0x20001000L, 4, "")), false),
            "vm.max_map_count="));
        c.add(c("an smaps import of a misaligned area", "EINVAL",
            () -> SmapsImporter.importEntries(process(), List.of(area(0x10000800L, 0x10001800L, 4, "")), false),
            "not aligned"));
        c.add(c("an smaps import whose hugetlb areas pass the pool", "ENOMEM",
            () -> SmapsImporter.importEntries(process(),
                List.of(area(0x40000000L, 0x40200000L, 2048, UserProcess.HUGETLB_ANON_NAME)), false),
            "hugetlb areas need"));
        c.add(c("an smaps import of a hugetlb area of an unknown page size", "EINVAL",
            () -> SmapsImporter.importEntries(process(),
                List.of(area(0x40000000L, 0x40200000L, 8, UserProcess.HUGETLB_ANON_NAME)), false),
            "KernelPageSize"));
        return c;
    }
}
