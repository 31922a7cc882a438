package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A program is found as a shell finds it, and one that cannot be run is refused with the shell's words and status:
 * 127 not found, 126 found but not executable.
 */
class ProgramLookupTest
{
    @TempDir
    Path dir;

    private Path file(final String folder, final String name, final String mode) throws IOException
    {
        final Path f = Files.createDirectories(dir.resolve(folder)).resolve(name);
        Files.writeString(f, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    @Test
    void shouldFindTheFirstExecutableOfThatNameOnPath() throws IOException
    {
        file("a", "prog", "rw-r--r--");
        final Path b = file("b", "prog", "rwxr-xr-x");
        file("c", "prog", "rwxr-xr-x");
        final String path = dir.resolve("a") + ":" + dir.resolve("b") + ":" + dir.resolve("c");
        assertThat(ProgramLookup.find("prog", path)).isEqualTo(b);
    }

    @Test
    void shouldSayCommandNotFoundWithThePathSearchedAndExit127()
    {
        final String path = dir.resolve("x") + ":" + dir.resolve("y");
        assertThatThrownBy(() -> ProgramLookup.find("no-such-program", path))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(127))
            .hasMessageStartingWith("no-such-program: command not found")
            .hasMessageContaining("searched PATH: " + path);
    }

    @Test
    void shouldSayPermissionDeniedWithTheModeWhenOnlyANonExecutableFileHasThatName() throws IOException
    {
        final Path f = file("a", "prog", "rw-r--r--");
        assertThatThrownBy(() -> ProgramLookup.find("prog", dir.resolve("a").toString()))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(126))
            .hasMessageStartingWith("prog: Permission denied")
            .hasMessageContaining("rw-r--r--")
            .hasMessageContaining("chmod +x " + f);
    }

    @Test
    void shouldRefuseAPathThatIsMissingAFolderOrNotExecutable() throws IOException
    {
        final Path missing = dir.resolve("missing");
        assertThatThrownBy(() -> ProgramLookup.find(missing.toString(), "/bin"))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(127))
            .hasMessage(missing + ": No such file or directory");
        assertThatThrownBy(() -> ProgramLookup.find(dir.toString() + "/", "/bin"))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(126))
            .hasMessageEndingWith(": Is a directory");
        final Path plain = file("a", "script.sh", "rw-rw-r--");
        assertThatThrownBy(() -> ProgramLookup.find(plain.toString(), "/bin"))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(126))
            .hasMessageStartingWith(plain + ": Permission denied (its mode is rw-rw-r--");
    }

    @Test
    void shouldSayADanglingLinkPointsNowhere() throws IOException
    {
        final Path link = Files.createSymbolicLink(dir.resolve("link"), dir.resolve("gone"));
        assertThatThrownBy(() -> ProgramLookup.find(link.toString(), "/bin"))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(127))
            .hasMessageContaining("No such file or directory (a symbolic link to a file that does not exist)");
    }

    @Test
    void shouldRefuseAnEmptyName()
    {
        assertThatThrownBy(() -> ProgramLookup.find("", "/bin"))
            .isInstanceOfSatisfying(ProgramLookup.NotRunnable.class, e -> assertThat(e.exitStatus()).isEqualTo(127))
            .hasMessageContaining("command not found");
    }

    @Test
    void signalsShouldBeNamedAsTheCLibraryNamesThem()
    {
        assertThat(ProgramSignals.describe(11)).startsWith("Segmentation fault (").endsWith("signal 11)");
        assertThat(ProgramSignals.describe(15)).startsWith("Terminated (");
    }
}
