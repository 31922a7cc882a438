package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.ibverbs.ProgramRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import org.junit.jupiter.api.Test;

/**
 * The library and rnicsim-status, which this module finds in ibverbs-lib's jar, are copied out once per JVM: a second
 * copy while another thread's program runs from the folder would replace rnicsim-status under it.
 */
class LibraryExtractionTest
{
    @Test
    void theFolderOfTheLibraryShouldBeFilledOnceAndKeptAsItIs() throws Exception
    {
        LibraryRequired.require();
        final Path dir = ProgramRunner.libraryDir();
        final Path status = dir.resolve("rnicsim-status");
        assertThat(status).isExecutable();
        final Object before = Files.readAttributes(status, BasicFileAttributes.class).fileKey();
        final java.nio.file.attribute.FileTime written = Files.getLastModifiedTime(status);

        assertThat(ProgramRunner.libraryDir()).isEqualTo(dir);
        assertThat(Files.readAttributes(status, BasicFileAttributes.class).fileKey()).as("the same file")
            .isEqualTo(before);
        assertThat(Files.getLastModifiedTime(status)).as("not written again").isEqualTo(written);
        assertThat(status).isExecutable();
    }
}
