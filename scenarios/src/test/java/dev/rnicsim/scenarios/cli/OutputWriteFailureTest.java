package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An output file the system refuses to write names the option, the path and the system's cause, and exits 2: Linux's
 * {@code /dev/full} answers every write with ENOSPC, as a full disk does.
 */
class OutputWriteFailureTest
{
    @TempDir
    Path dir;

    @Test
    void aTraceOnAFullDiskShouldNameTheOptionThePathAndTheCause() throws Exception
    {
        final Path s = Files.writeString(dir.resolve("s.rsim"), "host h ram=256M\n");

        final CliRun r = CliRun.of("run", s.toString(), "--trace", "/dev/full");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("--trace /dev/full: cannot write: No space left on device");
    }

    @Test
    void anSvgOnAFullDiskShouldNameTheOptionThePathAndTheCause()
    {
        final CliRun r = CliRun.of("scenario", "run", "registration-cost", "-q", "--svg", "/dev/full");

        assertThat(r.code()).isEqualTo(Rnicsim.MALFORMED);
        assertThat(r.err()).contains("--svg /dev/full: cannot write: No space left on device");
    }
}
