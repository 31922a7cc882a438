package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * The reference model behind {@link PinningInvariantsProperties}: a small simulated host driven through its public
 * API, next to an independent record of what must hold. Per process it remembers the mapped ranges (with the
 * attributes that matter: hugetlb, writable, MADV_DONTFORK) and the expected bytes of every page the test wrote;
 * per live pin the frames it pinned, their folio sizes and their expected bytes. Every operation logs itself as a
 * line of plain Java, so that a failure message carries a reproduction.
 *
 * <p>Conventions of the expectations:
 * <ul>
 *   <li>Anonymous memory never written by the test reads as zeros; MADV_DONTNEED and munmap make the test forget
 *       the bytes of the range (zeros expected after a new touch or a new mapping).</li>
 *   <li>A pinned frame's bytes only change through a write by virtual address that lands on it (the test
 *       translates the address after each write to learn which frame took it).</li>
 *   <li>A pinned page's virtual address keeps mapping the pinned frame until the owner unmaps it, DONTNEEDs it,
 *       exits, or, on a {@link ForkBehaviour#LEGACY} kernel only, writes to it after a fork involving the owner
 *       (the copy-on-write break of old kernels moves the address to a new frame, a whole 2 MiB page in a hugetlb
 *       mapping; the pinned one stays with the other sharer). On a {@link ForkBehaviour#MODERN} kernel no write
 *       moves a pinned page, except one that was read-pinned while it was the shared zero page (a read fault on
 *       never-written anonymous memory maps it, as in Linux): the first write gives the address a fresh page.</li>
 *   <li>Hugetlb mappings follow Linux: MADV_DONTNEED may not start inside a huge page and rounds its end down to
 *       one; no call may leave a hugetlb VMA boundary inside a huge page.</li>
 *   <li>Calls that fail on an argument, protection, mapping or limit check must leave every observable value as
 *       it was; failures caused by running out of memory (ENOMEM from an allocation, EBUSY from a long-term pin
 *       migration) may leave faulted or migrated pages behind but no pin and no data change.</li>
 * </ul>
 */
final class HostModelPropertiesSupport
{
    static final int PAGE = 4096;
    static final long HUGE = 2L << 20;
    static final byte[] ZERO = new byte[PAGE];
    static final long MIB = 1L << 20;

    private HostModelPropertiesSupport()
    {
    }

    /** The generated boot settings of one run. */
    record Setup(long physBytes, ThpMode thp, ForkBehaviour fork, long rlimitBytes, long maxMappedPerProcess)
    {
        HostConfig config()
        {
            return HostConfig.builder()
                .physicalMemoryBytes(physBytes)
                .movableZoneBytes(physBytes / 4)
                .swapBytes(64 * MIB)
                .hugepages2M(4)
                .thpMode(thp)
                .forkBehaviour(fork)
                .build();
        }

        String javaCode()
        {
            return "Host host = new Host(HostConfig.builder().physicalMemoryBytes(" + (physBytes / MIB)
                + "L << 20).movableZoneBytes(" + (physBytes / 4 / MIB) + "L << 20).swapBytes(64L << 20)"
                + ".hugepages2M(4).thpMode(ThpMode." + thp + ").forkBehaviour(ForkBehaviour." + fork + ").build());";
        }
    }

    /** A mapped range as the test believes it to be. */
    record Region(long start, long end, boolean hugetlb, boolean writable, boolean dontfork)
    {
        Region with(final long s, final long e)
        {
            return new Region(s, e, hugetlb, writable, dontfork);
        }

        long pages()
        {
            return (end - start) / PAGE;
        }

        boolean sameAttributes(final Region o)
        {
            return hugetlb == o.hugetlb && writable == o.writable && dontfork == o.dontfork;
        }
    }

    /** A process and what the test expects of its address space. */
    static final class Proc
    {
        final UserProcess p;
        final String var;
        final boolean child;
        final TreeMap<Long, Region> regions = new TreeMap<>();
        /** Expected bytes of every page written by the test and still mapped (ZERO after MADV_DONTNEED). */
        final TreeMap<Long, byte[]> pages = new TreeMap<>();
        /** LEGACY kernel: some pages may be copy-on-write shared with another process. */
        boolean mayShare;

        Proc(final UserProcess p, final String var, final boolean child)
        {
            this.p = p;
            this.var = var;
            this.child = child;
        }

        long mappedBytes()
        {
            return regions.values().stream().mapToLong(r -> r.end - r.start).sum();
        }

        byte[] expected(final long pageVa)
        {
            return pages.getOrDefault(pageVa, ZERO);
        }
    }

    /** A live pin and what must hold of its frames while it lives. */
    static final class Pin
    {
        final PinnedPages handle;
        final Proc owner;
        final String var;
        final long[] pfns;
        final byte[][] content;
        final long[] folioFrames;
        /** Pages whose virtual address must still translate to the pinned frame. */
        final BitSet linked;

        Pin(final PinnedPages handle, final Proc owner, final String var, final int pages)
        {
            this.handle = handle;
            this.owner = owner;
            this.var = var;
            this.pfns = new long[pages];
            this.content = new byte[pages][];
            this.folioFrames = new long[pages];
            this.linked = new BitSet(pages);
            linked.set(0, pages);
        }

        long va(final int i)
        {
            return handle.startAddress() + (long)i * PAGE;
        }
    }

    /** What a failed call must not change. */
    record Observation(long freeFrames, long usedFrames, long hugeFree, long hugeReserved, List<Integer> pids,
                       List<List<Vma>> vmas, List<Long> pinnedVm)
    {
    }

    /** The state of one run: the host under test and the expectations. */
    static final class Model
    {
        final Setup setup;
        final Host host;
        final PhysicalMemory pm;
        final List<Proc> procs = new ArrayList<>();
        final List<Proc> everyProc = new ArrayList<>();
        final List<Pin> pins = new ArrayList<>();
        final StringBuilder log = new StringBuilder();
        private int nextProc;
        private int nextPin;
        private int nextVar;

        Model(final Setup setup)
        {
            this.setup = setup;
            this.host = new Host(setup.config());
            this.pm = host.physicalMemory();
            log.append(setup.javaCode()).append('\n');
            spawn();
        }

        // ---------------------------------------------------------------- helpers

        void line(final String code)
        {
            log.append(code).append('\n');
        }

        AssertionError failure(final String what)
        {
            return new AssertionError(what + "\n--- reproduction (pattern(s, n)[i] = (byte)(s * 131 + i)) ---\n" + log);
        }

        void require(final boolean condition, final String what)
        {
            if (!condition)
            {
                throw failure(what);
            }
        }

        static String hex(final long v)
        {
            return "0x" + Long.toHexString(v) + "L";
        }

        static <T> T pick(final List<T> list, final int choice)
        {
            return list.get(Math.floorMod(choice, list.size()));
        }

        static byte[] pattern(final int seed, final int length)
        {
            final byte[] data = new byte[length];
            for (int i = 0; i < length; i++)
            {
                data[i] = (byte)(seed * 131 + i);
            }
            return data;
        }

        Observation observe()
        {
            final List<Integer> pids = new ArrayList<>();
            final List<List<Vma>> vmas = new ArrayList<>();
            for (final UserProcess p : host.processes())
            {
                pids.add(p.pid());
                vmas.add(p.vmas());
            }
            final List<Long> pinnedVm = new ArrayList<>();
            for (final Proc p : everyProc)
            {
                pinnedVm.add(p.p.pinnedVmPages());
            }
            return new Observation(pm.freeFrames(), pm.usedFrames(), host.hugepagesFree(PageSize.SIZE_2M),
                host.hugepagesReserved(PageSize.SIZE_2M), pids, vmas, pinnedVm);
        }

        void requireUnchanged(final Observation before, final String call, final KernelException e)
        {
            final Observation after = observe();
            require(after.equals(before), call + " failed with " + e.getMessage()
                + " but changed what it must not:\n before " + before + "\n after  " + after);
        }

        /** A failure from running out of memory: no pin, no pinned_vm, no mapping change. */
        void requireNoLimitSideEffects(final Observation before, final String call, final KernelException e)
        {
            final Observation after = observe();
            require(after.pids().equals(before.pids()) && after.vmas().equals(before.vmas())
                    && after.pinnedVm().equals(before.pinnedVm()),
                call + " failed with " + e.getMessage() + " but changed processes, VMAs or pinned_vm:\n before "
                    + before + "\n after  " + after);
        }

        List<Proc> procsWithRegions(final boolean writableOnly)
        {
            final List<Proc> out = new ArrayList<>();
            for (final Proc p : procs)
            {
                if (p.regions.values().stream().anyMatch(r -> !writableOnly || r.writable))
                {
                    out.add(p);
                }
            }
            return out;
        }

        boolean hasRegions()
        {
            return !procsWithRegions(false).isEmpty();
        }

        static List<Region> overlapping(final TreeMap<Long, Region> map, final long s, final long e)
        {
            final List<Region> out = new ArrayList<>();
            final Map.Entry<Long, Region> first = map.floorEntry(s);
            final long from = first != null && first.getValue().end > s ? first.getKey() : s;
            for (final Region r : map.subMap(from, true, e, false).values())
            {
                if (r.end > s)
                {
                    out.add(r);
                }
            }
            return out;
        }

        static void carve(final TreeMap<Long, Region> map, final long s, final long e)
        {
            change(map, s, e, null);
        }

        static void change(final TreeMap<Long, Region> map, final long s, final long e, final UnaryOperator<Region> op)
        {
            for (final Region r : overlapping(map, s, e))
            {
                map.remove(r.start);
                if (r.start < s)
                {
                    map.put(r.start, r.with(r.start, s));
                }
                if (r.end > e)
                {
                    map.put(e, r.with(e, r.end));
                }
                if (op != null)
                {
                    final Region middle = op.apply(r.with(Math.max(s, r.start), Math.min(e, r.end)));
                    map.put(middle.start, middle);
                }
            }
        }

        static boolean fullyMapped(final TreeMap<Long, Region> map, final long s, final long e)
        {
            long cursor = s;
            for (final Region r : overlapping(map, s, e))
            {
                if (r.start > cursor)
                {
                    break;
                }
                cursor = r.end;
            }
            return cursor >= e;
        }

        /** The same rule as the kernel's: an edge strictly inside a 2 MiB page of a hugetlb mapping. */
        static boolean cutsHugetlbPage(final TreeMap<Long, Region> map, final long s, final long e)
        {
            for (final Region r : overlapping(map, s, e))
            {
                if (r.hugetlb && ((s > r.start && s % HUGE != 0) || (e < r.end && e % HUGE != 0)))
                {
                    return true;
                }
            }
            return false;
        }

        /** A sub-range of a region: [start, end), 2 MiB granular in hugetlb regions unless {@code ragged}. */
        static long[] subRange(final Region r, final int c1, final int c2, final boolean ragged, final int extendPages)
        {
            final boolean aligned = r.start % HUGE == 0 && r.end % HUGE == 0;
            final long unit = r.hugetlb && !ragged && aligned ? HUGE : PAGE;
            final long units = (r.end - r.start) / unit;
            final long first = Math.floorMod(c1, units);
            final long count = 1 + Math.floorMod(c2, units - first);
            final long start = r.start + first * unit;
            return new long[] {start, start + count * unit + (long)extendPages * PAGE};
        }

        /** For LEGACY copy-on-write: a write by the owner may move its pinned pages to new frames. */
        void unlinkOwnPins(final Proc proc, final long s, final long e)
        {
            for (final Pin pin : pins)
            {
                if (pin.owner == proc)
                {
                    for (int i = 0; i < pin.pfns.length; i++)
                    {
                        if (pin.va(i) >= s && pin.va(i) < e)
                        {
                            pin.linked.clear(i);
                        }
                    }
                }
            }
        }

        /**
         * A write may break copy-on-write: of a page read-pinned while it was the shared zero page (any kernel),
         * or, on a LEGACY kernel, of any page of a process that forked or was forked (a 4 KiB page, or a whole
         * 2 MiB page in a hugetlb mapping).
         */
        void unlinkOwnPinsOnWrite(final Proc proc, final long s, final long e)
        {
            if (setup.fork() == ForkBehaviour.LEGACY && proc.mayShare)
            {
                final boolean hugetlb = overlapping(proc.regions, s, e).stream().anyMatch(Region::hugetlb);
                unlinkOwnPins(proc, hugetlb ? s & ~(HUGE - 1) : s, hugetlb ? (e + HUGE - 1) & ~(HUGE - 1) : e);
            }
            for (final Pin pin : pins)
            {
                for (int i = 0; pin.owner == proc && i < pin.pfns.length; i++)
                {
                    if (pin.pfns[i] == pm.zeroPfn() && pin.va(i) >= s && pin.va(i) < e)
                    {
                        pin.linked.clear(i);
                    }
                }
            }
        }

        // ---------------------------------------------------------------- actions

        void spawn()
        {
            final String var = "p" + nextProc++;
            final UserProcess p = host.spawn(var).rlimitMemlockBytes(setup.rlimitBytes());
            line("UserProcess " + var + " = host.spawn(\"" + var + "\").rlimitMemlockBytes("
                + (setup.rlimitBytes() == UserProcess.RLIM_INFINITY ? "UserProcess.RLIM_INFINITY"
                : setup.rlimitBytes() + "L") + ");");
            final Proc proc = new Proc(p, var, false);
            procs.add(proc);
            everyProc.add(proc);
        }

        void spawnRootIfFew()
        {
            if (procs.stream().filter(p -> !p.child).count() < 2 && procs.size() < 3)
            {
                spawn();
            }
        }

        void mmap(final int procChoice, final int sizeChoice, final boolean hugetlb, final boolean ragged)
        {
            if (procs.isEmpty())
            {
                return;
            }
            final Proc proc = pick(procs, procChoice);
            final long length = hugetlb ? HUGE * (1 + Math.floorMod(sizeChoice, 2))
                : HUGE * (1 + Math.floorMod(sizeChoice, 4))
                    + (ragged ? PAGE * (1 + Math.floorMod(sizeChoice, 300)) : 0);
            if (proc.mappedBytes() + length > setup.maxMappedPerProcess())
            {
                return;
            }
            final Set<MapFlag> flags = hugetlb ? Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS, MapFlag.HUGETLB)
                : Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS);
            final String call = proc.var + ".mmap(0, " + length + "L, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, "
                + "MapFlag.ANONYMOUS" + (hugetlb ? ", MapFlag.HUGETLB" : "") + "))";
            final boolean poolTooSmall = hugetlb && host.hugepagesFree(PageSize.SIZE_2M)
                - host.hugepagesReserved(PageSize.SIZE_2M) < length / HUGE;
            final Observation before = observe();
            final long va;
            try
            {
                va = proc.p.mmap(0, length, Prot.READ_WRITE, flags);
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                require(poolTooSmall && e.errno() == Errno.ENOMEM, call + " failed unexpectedly: " + e.getMessage());
                requireUnchanged(before, call, e);
                return;
            }
            final String v = "a" + nextVar++;
            line("long " + v + " = " + call + "; // " + hex(va));
            require(!poolTooSmall, call + " succeeded although the hugetlb pool had too few unreserved pages");
            require(overlapping(proc.regions, va, va + length).isEmpty(),
                call + " returned " + hex(va) + " overlapping an existing mapping");
            final boolean thpAligned = !hugetlb && setup.thp() != ThpMode.NEVER && length % HUGE == 0;
            require(!(hugetlb || thpAligned) || va % HUGE == 0, call + " returned " + hex(va) + ", not 2 MiB aligned");
            proc.regions.put(va, new Region(va, va + length, hugetlb, true, false));
        }

        void write(final int procChoice, final int regionChoice, final int pageChoice, final int offsetChoice,
            final int lengthChoice, final int seed)
        {
            final List<Proc> candidates = procsWithRegions(false);
            if (candidates.isEmpty())
            {
                return;
            }
            final Proc proc = pick(candidates, procChoice);
            final Region r = pick(List.copyOf(proc.regions.values()), regionChoice);
            final long pageVa = r.start + Math.floorMod(pageChoice, r.pages()) * PAGE;
            final boolean whole = Math.floorMod(lengthChoice, 8) == 0;
            final int offset = whole ? 0 : Math.floorMod(offsetChoice, PAGE);
            final int length = whole ? PAGE : 1 + Math.floorMod(lengthChoice, Math.min(64, PAGE - offset));
            final byte[] data = pattern(seed, length);
            final String call = proc.var + ".write(" + hex(pageVa + offset) + ", pattern(" + seed + ", " + length
                + "))";
            unlinkOwnPinsOnWrite(proc, pageVa, pageVa + PAGE);
            final Observation before = observe();
            try
            {
                proc.p.write(pageVa + offset, data);
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                if (!r.writable)
                {
                    require(e instanceof SegmentationFault, call + " on a read-only mapping failed with "
                        + e.getMessage() + " instead of SIGSEGV");
                    requireUnchanged(before, call, e);
                    return;
                }
                require(e.errno() == Errno.ENOMEM, call + " failed unexpectedly: " + e.getMessage());
                requireNoLimitSideEffects(before, call, e);
                return;
            }
            line(call + ";");
            require(r.writable, call + " succeeded on a read-only mapping");
            final byte[] updated = proc.expected(pageVa).clone();
            System.arraycopy(data, 0, updated, offset, length);
            proc.pages.put(pageVa, updated);
            final long phys = proc.p.translate(pageVa);
            require(phys >= 0, call + " succeeded but the page is not present right after");
            final long pfn = phys >>> PhysicalMemory.FRAME_SHIFT;
            for (final Pin pin : pins)
            {
                for (int i = 0; i < pin.pfns.length; i++)
                {
                    if (pin.pfns[i] == pfn)
                    {
                        pin.content[i] = updated;
                    }
                }
            }
        }

        void touch(final int procChoice, final int regionChoice, final int c1, final int c2, final boolean write)
        {
            final List<Proc> candidates = procsWithRegions(false);
            if (candidates.isEmpty())
            {
                return;
            }
            final Proc proc = pick(candidates, procChoice);
            final Region r = pick(List.copyOf(proc.regions.values()), regionChoice);
            final long[] range = subRange(r, c1, c2, false, 0);
            final String call = proc.var + ".touch(" + hex(range[0]) + ", " + (range[1] - range[0]) + "L, " + write
                + ")";
            if (write)
            {
                unlinkOwnPinsOnWrite(proc, range[0], range[1]);
            }
            final boolean segv = write && !overlapping(proc.regions, range[0], range[1]).stream()
                .allMatch(Region::writable);
            final Observation before = observe();
            try
            {
                proc.p.touch(range[0], range[1] - range[0], write);
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                if (segv)
                {
                    require(e instanceof SegmentationFault, call + " failed with " + e.getMessage()
                        + " instead of SIGSEGV");
                    requireUnchanged(before, call, e);
                    return;
                }
                require(e.errno() == Errno.ENOMEM, call + " failed unexpectedly: " + e.getMessage());
                requireNoLimitSideEffects(before, call, e);
                return;
            }
            line(call + ";");
            require(!segv, call + " succeeded on a read-only mapping");
        }

        void pin(final int procChoice, final int regionChoice, final int c1, final int c2, final boolean write,
            final boolean longterm, final int extendPages)
        {
            final List<Proc> candidates = procsWithRegions(false);
            if (candidates.isEmpty() || pins.size() >= 6)
            {
                return;
            }
            final Proc proc = pick(candidates, procChoice);
            final Region r = pick(List.copyOf(proc.regions.values()), regionChoice);
            final long startPage = r.start + Math.floorMod(c1, r.pages()) * PAGE;
            final long maxPages = Math.min(640, (r.end - startPage) / PAGE);
            final long pages = 1 + Math.floorMod(c2, maxPages) + extendPages;
            final long end = startPage + pages * PAGE;
            final String call = proc.var + ".pinUserPages(" + hex(startPage) + ", " + (pages * PAGE) + "L, " + write
                + ", " + longterm + ")";
            final boolean mapped = fullyMapped(proc.regions, startPage, end);
            final boolean accessOk = mapped && (!write || overlapping(proc.regions, startPage, end).stream()
                .allMatch(Region::writable));
            final long limit = setup.rlimitBytes() == UserProcess.RLIM_INFINITY ? Long.MAX_VALUE
                : setup.rlimitBytes() / PAGE;
            final boolean overLimit = proc.p.pinnedVmPages() + pages > limit;
            if (write)
            {
                unlinkOwnPinsOnWrite(proc, startPage, end);
            }
            final Observation before = observe();
            final PinnedPages handle;
            try
            {
                handle = proc.p.pinUserPages(startPage, pages * PAGE, write, longterm);
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                if (!accessOk || overLimit)
                {
                    // Either check may come first: EFAULT for the access, ENOMEM for RLIMIT_MEMLOCK.
                    require(!accessOk && e.errno() == Errno.EFAULT || overLimit && e.errno() == Errno.ENOMEM,
                        call + (accessOk ? "" : " on a range not mapped or not writable")
                            + (overLimit ? " over RLIMIT_MEMLOCK" : "") + " failed with " + e.getMessage());
                    requireUnchanged(before, call, e);
                    return;
                }
                require(e.errno() == Errno.ENOMEM || (longterm && e.errno() == Errno.EBUSY),
                    call + " failed unexpectedly: " + e.getMessage());
                requireNoLimitSideEffects(before, call, e);
                return;
            }
            final Pin pin = new Pin(handle, proc, "pin" + nextPin++, (int)pages);
            line("PinnedPages " + pin.var + " = " + call + ";");
            require(accessOk, call + " succeeded on a range that is not mapped or not writable");
            require(!overLimit, call + " succeeded although pinned_vm " + before.pinnedVm() + " + " + pages
                + " pages passes RLIMIT_MEMLOCK of " + limit + " pages");
            require(handle.startAddress() == startPage && handle.pageCount() == pages
                    && handle.write() == write && handle.longterm() == longterm && handle.process() == proc.p,
                call + " returned " + handle);
            // Walk the runs in virtual-address order: each page must be where the page table says it is.
            int i = 0;
            for (final PhysRun run : handle.runs())
            {
                require(run.lengthBytes() > 0 && run.physAddr() % PAGE == 0 && run.lengthBytes() % PAGE == 0,
                    call + " returned a malformed run " + run);
                for (long f = 0; f < run.frames(); f++, i++)
                {
                    require(i < pages, call + " returned runs covering more than " + pages + " pages: " + handle);
                    final long va = startPage + (long)i * PAGE;
                    final long pfn = run.firstPfn() + f;
                    require(proc.p.translate(va) == pfn << PhysicalMemory.FRAME_SHIFT, call + ": page " + i + " at "
                        + hex(va) + " translates to " + hex(proc.p.translate(va)) + " but its run says "
                        + hex(pfn << PhysicalMemory.FRAME_SHIFT));
                    final PageSize leaf = proc.p.mappedPageSize(va);
                    require(leaf != null && leaf.bytes() == run.pageSizeBytes(), call + ": page " + i
                        + " is mapped by a " + leaf + " leaf but its run says pages of " + run.pageSizeBytes()
                        + " bytes");
                    require(!longterm || pm.zoneOf(pfn) == Zone.NORMAL,
                        call + ": long-term pinned frame " + hex(pfn) + " is in ZONE_MOVABLE");
                    pin.pfns[i] = pfn;
                    pin.folioFrames[i] = pm.folioSize(pfn).frames();
                    pin.content[i] = proc.expected(va);
                    final byte[] now = new byte[PAGE];
                    pm.read(pfn << PhysicalMemory.FRAME_SHIFT, now, 0, PAGE);
                    require(Arrays.equals(now, pin.content[i]), call + ": pinned frame " + hex(pfn) + " of page "
                        + hex(va) + " does not hold the bytes last written there");
                }
            }
            require(i == pages, call + " returned runs covering " + i + " pages instead of " + pages + ": " + handle);
            pins.add(pin);
        }

        void unpin(final int pinChoice)
        {
            if (pins.isEmpty())
            {
                return;
            }
            final Pin pin = pick(pins, pinChoice);
            line(pin.owner.var + ".unpinUserPages(" + pin.var + ");");
            pin.owner.p.unpinUserPages(pin.handle);
            pins.remove(pin);
        }

        void munmap(final int procChoice, final int regionChoice, final int c1, final int c2, final boolean ragged,
            final int extendPages)
        {
            final List<Proc> candidates = procsWithRegions(false);
            if (candidates.isEmpty())
            {
                return;
            }
            final Proc proc = pick(candidates, procChoice);
            final Region r = pick(List.copyOf(proc.regions.values()), regionChoice);
            final long[] range = subRange(r, c1, c2, ragged, extendPages);
            final String call = proc.var + ".munmap(" + hex(range[0]) + ", " + (range[1] - range[0]) + "L)";
            final boolean cut = cutsHugetlbPage(proc.regions, range[0], range[1]);
            final Observation before = observe();
            try
            {
                proc.p.munmap(range[0], range[1] - range[0]);
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                require(cut && e.errno() == Errno.EINVAL, call + " failed unexpectedly: " + e.getMessage());
                requireUnchanged(before, call, e);
                return;
            }
            line(call + ";");
            require(!cut, call + " succeeded although it cuts through a hugetlb page");
            carve(proc.regions, range[0], range[1]);
            proc.pages.subMap(range[0], range[1]).clear();
            unlinkOwnPins(proc, range[0], range[1]);
        }

        void madvise(final int procChoice, final int regionChoice, final int c1, final int c2, final Madvice advice,
            final boolean ragged, final int extendPages)
        {
            final List<Proc> candidates = procsWithRegions(false);
            if (candidates.isEmpty())
            {
                return;
            }
            final Proc proc = pick(candidates, procChoice);
            final Region r = pick(List.copyOf(proc.regions.values()), regionChoice);
            final long[] range = subRange(r, c1, c2, ragged, extendPages);
            final String call = proc.var + ".madvise(" + hex(range[0]) + ", " + (range[1] - range[0]) + "L, Madvice."
                + advice + ")";
            final boolean unmapped = !fullyMapped(proc.regions, range[0], range[1]);
            // MADV_DONTNEED in a hugetlb VMA (mm/madvise.c madvise_dontneed_free_valid_vma, Linux 6.2+): a start
            // inside a huge page is EINVAL, an end inside one is rounded down. Other advice splits the VMA, which
            // Linux refuses inside a huge page (mm/hugetlb.c hugetlb_vm_op_split: EINVAL); the model documents no
            // such error, so success is accepted too, but then the VMA invariant wants every hugetlb VMA 2 MiB
            // aligned.
            final boolean cut = cutsHugetlbPage(proc.regions, range[0], range[1]);
            final boolean startCut = range[0] % HUGE != 0 && overlapping(proc.regions, range[0], range[0] + 1).stream()
                .anyMatch(o -> o.hugetlb && o.start < range[0]);
            long zapEnd = range[1];
            for (final Region o : overlapping(proc.regions, range[0], range[1]))
            {
                if (o.hugetlb && range[1] < o.end)
                {
                    zapEnd = Math.max(range[0], range[1] & ~(HUGE - 1));
                }
            }
            final boolean einval = advice == Madvice.DONTNEED ? startCut : cut;
            if (advice == Madvice.COLLAPSE)
            {
                // madvise_collapse: parts collapsed before a failing part stay collapsed, so a failure may leave
                // changes; either way every page keeps its data and every pin its frame (checked by the invariants).
                try
                {
                    proc.p.madvise(range[0], range[1] - range[0], advice);
                    line(call + ";");
                    require(!unmapped, call + " succeeded although part of the range is unmapped");
                }
                catch (final KernelException e)
                {
                    line("// " + call + " -> " + e.errno());
                    require(unmapped ? e.errno() == Errno.ENOMEM : e.errno() == Errno.EINVAL
                        || e.errno() == Errno.EAGAIN || e.errno() == Errno.ENOMEM, call + " failed unexpectedly: "
                        + e.getMessage());
                }
                return;
            }
            final Observation before = observe();
            try
            {
                proc.p.madvise(range[0], range[1] - range[0], advice);
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                require(unmapped && e.errno() == Errno.ENOMEM || !unmapped && einval && e.errno() == Errno.EINVAL,
                    call + " failed unexpectedly: " + e.getMessage());
                requireUnchanged(before, call, e);
                return;
            }
            line(call + ";");
            require(!unmapped && !(startCut && advice == Madvice.DONTNEED), call + " succeeded although "
                + (unmapped ? "part of the range is unmapped" : "it starts inside a hugetlb page"));
            switch (advice)
            {
                case DONTNEED ->
                {
                    for (final Map.Entry<Long, byte[]> e : proc.pages.subMap(range[0], zapEnd).entrySet())
                    {
                        e.setValue(ZERO);
                    }
                    unlinkOwnPins(proc, range[0], zapEnd);
                }
                case DONTFORK -> change(proc.regions, range[0], range[1],
                    x -> new Region(x.start, x.end, x.hugetlb, x.writable, true));
                case DOFORK -> change(proc.regions, range[0], range[1],
                    x -> new Region(x.start, x.end, x.hugetlb, x.writable, false));
                default ->
                {
                }
            }
        }

        void mprotect(final int procChoice, final int regionChoice, final int c1, final int c2, final boolean writable,
            final boolean ragged, final int extendPages)
        {
            final List<Proc> candidates = procsWithRegions(false);
            if (candidates.isEmpty())
            {
                return;
            }
            final Proc proc = pick(candidates, procChoice);
            final Region r = pick(List.copyOf(proc.regions.values()), regionChoice);
            final long[] range = subRange(r, c1, c2, ragged, extendPages);
            final String call = proc.var + ".mprotect(" + hex(range[0]) + ", " + (range[1] - range[0]) + "L, "
                + (writable ? "Prot.READ_WRITE" : "Set.of(Prot.READ)") + ")";
            final boolean unmapped = !fullyMapped(proc.regions, range[0], range[1]);
            final boolean cut = cutsHugetlbPage(proc.regions, range[0], range[1]);
            final Observation before = observe();
            try
            {
                proc.p.mprotect(range[0], range[1] - range[0], writable ? Prot.READ_WRITE : Set.of(Prot.READ));
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                require(unmapped && e.errno() == Errno.ENOMEM || !unmapped && cut && e.errno() == Errno.EINVAL,
                    call + " failed unexpectedly: " + e.getMessage());
                requireUnchanged(before, call, e);
                return;
            }
            line(call + ";");
            require(!unmapped && !cut, call + " succeeded although " + (unmapped ? "part of the range is unmapped"
                : "it cuts through a hugetlb page"));
            change(proc.regions, range[0], range[1], x -> new Region(x.start, x.end, x.hugetlb, writable, x.dontfork));
        }

        void reclaim(final long target)
        {
            final long freeBefore = pm.freeFrames();
            final long freed = host.reclaim(target);
            line("host.reclaim(" + target + "L); // freed " + freed);
            require(freed >= 0 && pm.freeFrames() - freeBefore == freed, "host.reclaim(" + target + ") reported "
                + freed + " pages freed but free frames went from " + freeBefore + " to " + pm.freeFrames());
        }

        void compact()
        {
            final long freeBefore = pm.freeFrames();
            final long migrated = host.compact();
            line("host.compact(); // migrated " + migrated);
            require(pm.freeFrames() == freeBefore, "host.compact() changed free frames from " + freeBefore + " to "
                + pm.freeFrames());
        }

        void fork(final int procChoice)
        {
            if (procs.isEmpty() || procs.size() >= 3)
            {
                return;
            }
            final Proc parent = pick(procs, procChoice);
            final String var = "p" + nextProc++;
            final String call = parent.var + ".fork(\"" + var + "\")";
            final Observation before = observe();
            final UserProcess child;
            try
            {
                child = parent.p.fork(var);
            }
            catch (final KernelException e)
            {
                line("// " + call + " -> " + e.errno());
                require(e.errno() == Errno.ENOMEM, call + " failed unexpectedly: " + e.getMessage());
                requireNoLimitSideEffects(before, call, e);
                return;
            }
            line("UserProcess " + var + " = " + call + ";");
            require(child.pinnedVmPages() == 0, call + ": the child starts with pinned_vm " + child.pinnedVmPages());
            final Proc c = new Proc(child, var, true);
            for (final Region r : parent.regions.values())
            {
                if (!r.dontfork)
                {
                    c.regions.put(r.start, r);
                    c.pages.putAll(parent.pages.subMap(r.start, r.end));
                }
            }
            if (setup.fork() == ForkBehaviour.LEGACY)
            {
                parent.mayShare = true;
                c.mayShare = true;
            }
            procs.add(c);
            everyProc.add(c);
        }

        void exit(final int procChoice, final boolean childOnly)
        {
            final List<Proc> candidates = procs.stream().filter(p -> p.child || !childOnly).toList();
            if (candidates.isEmpty())
            {
                return;
            }
            final Proc proc = pick(candidates, procChoice);
            line(proc.var + ".exit();");
            proc.p.exit();
            exited(proc);
        }

        private void exited(final Proc proc)
        {
            proc.regions.clear();
            proc.pages.clear();
            procs.remove(proc);
            for (final Pin pin : pins)
            {
                if (pin.owner == proc)
                {
                    pin.linked.clear();
                }
            }
        }

        /**
         * Reads every page the test wrote through the process (swapping in what was reclaimed), then a few pages
         * it never wrote, which must read as zeros. Running out of memory on the way ends the read-back early.
         */
        void readBack(final int procChoice, final int sampleSeed)
        {
            if (procs.isEmpty())
            {
                return;
            }
            final Proc proc = pick(procs, procChoice);
            line("// read back every written page of " + proc.var + " with " + proc.var + ".read(va, 4096)");
            try
            {
                for (final Map.Entry<Long, byte[]> e : proc.pages.entrySet())
                {
                    final byte[] got = proc.p.read(e.getKey(), PAGE);
                    require(Arrays.equals(got, e.getValue()), proc.var + ".read(" + hex(e.getKey())
                        + ", 4096) does not read back the bytes written there" + firstDifference(got, e.getValue()));
                }
                final List<Region> regions = List.copyOf(proc.regions.values());
                for (int k = 0; k < 3 && !regions.isEmpty(); k++)
                {
                    final Region r = pick(regions, sampleSeed + k * 7);
                    final long va = r.start + Math.floorMod(sampleSeed * 31 + k, r.pages()) * PAGE;
                    final byte[] got = proc.p.read(va, PAGE);
                    line(proc.var + ".read(" + hex(va) + ", 4096);");
                    require(Arrays.equals(got, proc.expected(va)), proc.var + ".read(" + hex(va)
                        + ", 4096) of a page not written since it was mapped or DONTNEEDed is not all zeros"
                        + firstDifference(got, proc.expected(va)));
                }
            }
            catch (final KernelException e)
            {
                line("// read back stopped: " + e.getMessage());
                require(e.errno() == Errno.ENOMEM && !(e instanceof SegmentationFault),
                    "read back of " + proc.var + " failed unexpectedly: " + e.getMessage());
            }
        }

        static String firstDifference(final byte[] got, final byte[] want)
        {
            final int i = Arrays.mismatch(got, want);
            return i < 0 ? "" : " (first difference at offset " + i + ": got " + got[i] + ", want " + want[i] + ")";
        }

        // ---------------------------------------------------------------- invariants

        /** Invariant 1: every frame's pin count is the sum of the live pins on its folio, never negative. */
        void checkPinCounts()
        {
            final Map<Long, Long> expected = new HashMap<>();
            for (final Pin pin : pins)
            {
                for (final long pfn : pin.pfns)
                {
                    expected.merge(head(pfn), 1L, Long::sum);
                }
            }
            final int zeroCount = pm.pinCount(pm.zeroPfn());
            require(zeroCount >= 0, "the shared zero page has a negative pin count " + zeroCount);
            for (long pfn = 0; pfn < pm.totalFrames(); pfn++)
            {
                final int count = pm.pinCount(pfn);
                require(count >= 0, "frame " + hex(pfn) + " has a negative pin count " + count);
                final long want = expected.getOrDefault(head(pfn), 0L);
                require(count == want, "frame " + hex(pfn) + " (folio " + pm.folioSize(pfn) + ") has pin count "
                    + count + " but the live pins hold " + want + " on its folio");
            }
        }

        private long head(final long pfn)
        {
            return pfn & ~(pm.folioSize(pfn).frames() - 1);
        }

        /** Invariant 2: pinned_vm of every process, live or exited, is the page count of its live pins. */
        void checkPinnedVm()
        {
            for (final Proc proc : everyProc)
            {
                final long sum = pins.stream().filter(p -> p.owner == proc).mapToLong(p -> p.handle.pageCount()).sum();
                require(proc.p.pinnedVmPages() == sum, proc.var + ".pinnedVmPages() is " + proc.p.pinnedVmPages()
                    + " but its live pins hold " + sum + " pages");
            }
        }

        /**
         * Invariant 3: a pinned frame stays allocated, in its folio, with its bytes; its virtual address still maps
         * it while linked.
         */
        void checkPinnedFrames()
        {
            final byte[] now = new byte[PAGE];
            for (final Pin pin : pins)
            {
                for (int i = 0; i < pin.pfns.length; i++)
                {
                    final long pfn = pin.pfns[i];
                    require(pm.isAllocated(pfn), pin.var + ": pinned frame " + hex(pfn) + " of page " + hex(pin.va(i))
                        + " was freed while pinned");
                    require(pm.folioSize(pfn).frames() == pin.folioFrames[i], pin.var + ": pinned frame " + hex(pfn)
                        + " was in a folio of " + pin.folioFrames[i] + " frames at pin time, now "
                        + pm.folioSize(pfn) + " (a pinned folio was split)");
                    pm.read(pfn << PhysicalMemory.FRAME_SHIFT, now, 0, PAGE);
                    require(Arrays.equals(now, pin.content[i]), pin.var + ": pinned frame " + hex(pfn) + " of page "
                        + hex(pin.va(i)) + " changed behind the pin holder's back"
                        + firstDifference(now, pin.content[i]));
                    // A pin of the shared zero page (a short-term read pin of a page never written) does not keep
                    // the address mapped to it: a write, or a long-term read pin that must unshare it
                    // (gup_must_unshare), maps a fresh page there.
                    if (pin.linked.get(i) && pfn != pm.zeroPfn())
                    {
                        final long phys = pin.owner.p.translate(pin.va(i));
                        require(phys == pfn << PhysicalMemory.FRAME_SHIFT, pin.var + ": " + pin.owner.var
                            + ".translate(" + hex(pin.va(i)) + ") is " + hex(phys) + " but the page is pinned at "
                            + hex(pfn << PhysicalMemory.FRAME_SHIFT) + " (a pinned page moved)");
                    }
                }
            }
        }

        /** Invariant 4: every present page the test wrote holds the bytes written (checked without faulting). */
        void checkPresentDataReadsBack()
        {
            final byte[] now = new byte[PAGE];
            for (final Proc proc : procs)
            {
                for (final Map.Entry<Long, byte[]> e : proc.pages.entrySet())
                {
                    final long phys = proc.p.translate(e.getKey());
                    if (phys >= 0)
                    {
                        pm.read(phys, now, 0, PAGE);
                        require(Arrays.equals(now, e.getValue()), proc.var + ": page " + hex(e.getKey())
                            + " maps frame " + hex(phys) + " which does not hold the bytes written there"
                            + firstDifference(now, e.getValue()));
                    }
                }
            }
        }

        /** The VMAs cover exactly the modelled mappings, with their protection, kind and MADV_DONTFORK. */
        void checkMappings()
        {
            for (final Proc proc : procs)
            {
                final List<Region> actual = new ArrayList<>();
                for (final Vma v : proc.p.vmas())
                {
                    actual.add(new Region(v.startAddress(), v.endAddress(), v.kind() == VmaKind.HUGETLB, v.writable(),
                        v.has(Vma.VM_DONTCOPY)));
                }
                final List<Region> want = normalize(List.copyOf(proc.regions.values()));
                final List<Region> got = normalize(actual);
                require(got.equals(want), proc.var + " maps " + got + " but the test mapped " + want);
                for (final Vma v : proc.p.vmas())
                {
                    require(v.kind() != VmaKind.HUGETLB || (v.startAddress() % HUGE == 0 && v.endAddress() % HUGE == 0),
                        proc.var + " has a hugetlb VMA " + hex(v.startAddress()) + "-" + hex(v.endAddress())
                            + " that is not 2 MiB aligned: a 2 MiB hugetlb page was cut by a VMA split");
                }
            }
        }

        private static List<Region> normalize(final List<Region> regions)
        {
            final List<Region> out = new ArrayList<>();
            for (final Region r : regions)
            {
                final Region last = out.isEmpty() ? null : out.get(out.size() - 1);
                if (last != null && last.end == r.start && last.sameAttributes(r))
                {
                    out.set(out.size() - 1, last.with(last.start, r.end));
                }
                else
                {
                    out.add(r);
                }
            }
            return out;
        }

        /** Invariant 5: free frames + used frames = total frames. */
        void checkFrameAccounting()
        {
            final long free = pm.freeFrames();
            final long used = pm.usedFrames();
            require(free + used == pm.totalFrames(), "freeFrames " + free + " + usedFrames " + used + " != totalFrames "
                + pm.totalFrames());
            require(host.hugepagesReserved(PageSize.SIZE_2M) <= host.hugepagesFree(PageSize.SIZE_2M)
                    && host.hugepagesFree(PageSize.SIZE_2M) <= host.hugepagesTotal(PageSize.SIZE_2M),
                "hugetlb pool: " + host.hugepagesReserved(PageSize.SIZE_2M) + " reserved, "
                    + host.hugepagesFree(PageSize.SIZE_2M) + " free of " + host.hugepagesTotal(PageSize.SIZE_2M));
        }

        /**
         * Invariant 6, at the end of a run: every written page reads back, then with every pin dropped and every
         * process gone, no pin count remains, pinned_vm is 0 and only the hugetlb pool is in use.
         */
        void finish()
        {
            for (final Proc proc : List.copyOf(procs))
            {
                readBack(procs.indexOf(proc), 0);
            }
            for (final Pin pin : List.copyOf(pins))
            {
                unpin(pins.indexOf(pin));
            }
            for (final Proc proc : List.copyOf(procs))
            {
                line(proc.var + ".exit();");
                proc.p.exit();
                exited(proc);
            }
            line("// now: freeFrames() + 512 * hugepagesTotal == totalFrames() expected");
            require(pm.pinCount(pm.zeroPfn()) == 0, "after unpinning everything the shared zero page has pin count "
                + pm.pinCount(pm.zeroPfn()));
            for (long pfn = 0; pfn < pm.totalFrames(); pfn++)
            {
                require(pm.pinCount(pfn) == 0, "after unpinning everything frame " + hex(pfn) + " has pin count "
                    + pm.pinCount(pfn));
            }
            for (final Proc proc : everyProc)
            {
                require(proc.p.pinnedVmPages() == 0, proc.var + ".pinnedVmPages() is " + proc.p.pinnedVmPages()
                    + " after every pin was dropped");
            }
            final long pool = host.hugepagesTotal(PageSize.SIZE_2M) * PageSize.SIZE_2M.frames();
            require(host.processes().isEmpty(), "processes left after every exit: " + host.processes());
            require(host.hugepagesFree(PageSize.SIZE_2M) == host.hugepagesTotal(PageSize.SIZE_2M)
                    && host.hugepagesReserved(PageSize.SIZE_2M) == 0,
                "hugetlb pool not whole after every exit: free " + host.hugepagesFree(PageSize.SIZE_2M) + " reserved "
                    + host.hugepagesReserved(PageSize.SIZE_2M));
            require(pm.usedFrames() == pool && pm.freeFrames() + pool == pm.totalFrames(),
                "after every unpin and exit: freeFrames " + pm.freeFrames() + ", usedFrames " + pm.usedFrames()
                    + ", hugetlb pool frames " + pool + ", totalFrames " + pm.totalFrames() + " ("
                    + (pm.totalFrames() - pool - pm.freeFrames()) + " frames leaked)");
        }
    }
}
