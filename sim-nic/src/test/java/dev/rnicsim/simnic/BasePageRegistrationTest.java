package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.pagetable.BasePage;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.SegmentationFault;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Registration on hosts of 16 and 64 KiB base pages: ib_umem_get pins and charges PAGE_SIZE pages
 * (drivers/infiniband/core/umem.c {@code ib_umem_num_pages}, {@code rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT}), the
 * page-size bitmap is intersected with what the pinned pages allow ({@code ib_umem_find_best_pgsz}: never below the
 * base page when the device supports it), ib_uverbs_reg_mr compares addr and iova under PAGE_MASK, and libibverbs
 * widens its MADV_DONTFORK to sysconf(_SC_PAGESIZE) (memory.c {@code ibv_madvise_range}).
 */
class BasePageRegistrationTest
{
    private static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);

    private static SimContext open(final BasePage page, final boolean aged, final String... env)
    {
        final SimHost host = new SimFabric().addHost("h", HostConfig.builder().physicalMemoryBytes(256L << 20)
            .basePage(page).aged(aged).forkBehaviour(ForkBehaviour.LEGACY).build());
        final UserProcess p = host.host().spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        for (int i = 0; i < env.length; i += 2)
        {
            p.setenv(env[i], env[i + 1]);
        }
        return host.addDevice("sim:h/dev0", DeviceProfiles.connectx5()).open(p);
    }

    @ParameterizedTest
    @EnumSource(value = BasePage.class, names = {"SIZE_16K", "SIZE_64K"})
    void aSmallRegistrationPinsAndTranslatesOneWholeBasePage(final BasePage page)
    {
        final SimContext c = open(page, false);
        final long buf = c.process().mmapAnonymous(page.bytes());
        final SimMr mr = (SimMr)c.allocPd().regMr(buf + 100, 200, LOCAL);
        assertThat(mr.pinnedPages()).isEqualTo(1);
        assertThat(c.process().pinnedVmPages()).isEqualTo(1);
        assertThat(mr.pageSizeBytes()).isGreaterThanOrEqualTo(page.bytes());
        assertThat(mr.mttEntries()).isEqualTo(1);
    }

    @Test
    void onAnAgedHostLargerBasePagesNeedFewerMttEntries()
    {
        final long length = 1L << 20;
        final SimContext small = open(BasePage.SIZE_4K, true);
        final long a = small.process().mmapAnonymous(length);
        final SimMr mr4k = (SimMr)small.allocPd().regMr(a, length, LOCAL);
        final SimContext large = open(BasePage.SIZE_64K, true);
        final long b = large.process().mmapAnonymous(length);
        final SimMr mr64k = (SimMr)large.allocPd().regMr(b, length, LOCAL);
        assertThat(mr4k.pageSizeBytes()).as("scattered 4 KiB frames").isEqualTo(4096);
        assertThat(mr4k.mttEntries()).isEqualTo(256);
        assertThat(mr64k.pageSizeBytes()).isGreaterThanOrEqualTo(64 << 10);
        assertThat(mr64k.mttEntries()).isLessThanOrEqualTo(16);
        assertThat(mr64k.pinnedPages()).isEqualTo(16);
    }

    @Test
    void rlimitMemlockIsCountedInBasePages()
    {
        final SimContext c = open(BasePage.SIZE_64K, false);
        c.process().rlimitMemlockBytes(100 << 10);
        final long buf = c.process().mmapAnonymous(4 << 16);
        c.allocPd().regMr(buf, 1, LOCAL);
        final Throwable t = catchThrowable(() -> c.allocPd().regMr(buf + (1 << 16), 1, LOCAL));
        assertThat(((VerbsException)t).errno()).isEqualTo(Errno.ENOMEM.code());
        assertThat(t.getMessage()).contains("RLIMIT_MEMLOCK=1 pages");
    }

    @Test
    void addrAndIovaMustShareTheirOffsetWithinTheBasePage()
    {
        final SimContext c = open(BasePage.SIZE_64K, false);
        final long buf = c.process().mmapAnonymous(2 << 16);
        final Throwable t = catchThrowable(() -> c.allocPd().regMr(buf + 0x1000, 4096, 0x10_0000L, LOCAL));
        assertThat(((VerbsException)t).errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(t.getMessage()).contains("64 KiB page");
        c.allocPd().regMr(buf + 0x1000, 4096, 0x10_1000L, LOCAL);
    }

    @Test
    void forkSupportOnA64KiBHostTakesTheWholePageAroundASmallBufferFromTheChild()
    {
        // The field case: a 4 KiB receive buffer shares its 64 KiB page with other data; after fork the child
        // faults on that data (SIGSEGV), which a 4 KiB host never shows.
        final SimContext c = open(BasePage.SIZE_64K, false, "RDMAV_FORK_SAFE", "1");
        final UserProcess parent = c.process();
        final long page = parent.mmapAnonymous(1 << 16);
        parent.write(page + 32_768, new byte[] {42});
        c.allocPd().regMr(page, 4096, LOCAL);
        final UserProcess child = parent.fork("child");
        assertThat(catchThrowable(() -> child.read(page + 32_768, 1))).isInstanceOf(SegmentationFault.class);

        final SimContext small = open(BasePage.SIZE_4K, false, "RDMAV_FORK_SAFE", "1");
        final long page4k = small.process().mmapAnonymous(1 << 16);
        small.process().write(page4k + 32_768, new byte[] {42});
        small.allocPd().regMr(page4k, 4096, LOCAL);
        assertThat(small.process().fork("child").read(page4k + 32_768, 1)).containsExactly(42);
    }

    @Test
    void reregOfTheTranslationOnA64KiBHostKeepsBasePageSizedEntries()
    {
        final SimContext c = open(BasePage.SIZE_64K, true);
        final long buf = c.process().mmapAnonymous(8 << 16);
        final SimMr mr = (SimMr)c.allocPd().regMr(buf, 1 << 16, LOCAL);
        mr.rereg(EnumSet.of(dev.rnicsim.verbs.ReregFlag.CHANGE_TRANSLATION), null, buf + (2 << 16) + 0x3000,
            2 << 16, Set.of());
        assertThat(mr.addr()).isEqualTo(buf + (2 << 16) + 0x3000);
        assertThat(mr.pageSizeBytes()).isGreaterThanOrEqualTo(64 << 10);
        assertThat(c.process().pinnedVmPages()).as("3 base pages cover 128 KiB from offset 0x3000").isEqualTo(3);
    }
}
