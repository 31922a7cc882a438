package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import org.junit.jupiter.api.Test;

/**
 * A child's SIGSEGV where its parent has a MADV_DONTFORK (VM_DONTCOPY) VMA names that cause (fork's {@code dup_mmap}
 * skips such a VMA) and the fix, instead of asking for an mmap; an address no process maps keeps the plain answer.
 */
class ForkDontcopyFaultTest
{
    private static final long PAGE = PhysicalMemory.FRAME_BYTES;

    private static UserProcess parent()
    {
        return new Host(HostConfig.builder().physicalMemoryBytes(64L << 20).thpMode(ThpMode.NEVER)
            .forkBehaviour(ForkBehaviour.LEGACY).build()).spawn("parent");
    }

    private static String segv(final Runnable access)
    {
        final Throwable t = catchThrowable(access::run);
        assertThat(t).isInstanceOf(SegmentationFault.class);
        assertThat(((KernelException)t).errno()).isEqualTo(Errno.EFAULT);
        return t.getMessage();
    }

    @Test
    void aChildTouchingItsParentsDontforkRangeIsToldForkDidNotCopyIt()
    {
        final UserProcess parent = parent();
        final long va = parent.mmapAnonymous(4 * PAGE);
        parent.madvise(va, PAGE, Madvice.DONTFORK);
        final UserProcess child = parent.fork("child");

        final String read = segv(() -> child.read(va, 1));
        final String write = segv(() -> child.write(va + 8, new byte[] {1}));

        for (final String m : new String[] {read, write})
        {
            assertThat(m).contains("no VMA maps it (find_vma finds none)")
                .contains("the parent (pid " + parent.pid() + ") maps it in a MADV_DONTFORK (VM_DONTCOPY) VMA, which "
                    + "fork does not copy").contains("keep what the child uses off the pages of registered buffers")
                .doesNotContain("mmap the whole range first");
        }
        assertThat(child.read(va + PAGE, 1)).hasSize(1);
    }

    @Test
    void anAddressNoProcessMapsKeepsThePlainAnswer()
    {
        final UserProcess parent = parent();
        final long va = parent.mmapAnonymous(PAGE);
        parent.munmap(va, PAGE);
        final UserProcess child = parent.fork("child");

        assertThat(segv(() -> child.read(va, 1))).contains("mmap the whole range first")
            .doesNotContain("MADV_DONTFORK");
    }
}
