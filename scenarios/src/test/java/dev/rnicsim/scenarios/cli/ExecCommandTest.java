package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.ibverbs.ProgramRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rnicsim exec}: its options are checked before anything runs, and it returns the program's exit status. (The
 * programs that use the library, ibv_rc_pingpong and perftest among them, are run by ibverbs-lib's tests.)
 */
class ExecCommandTest
{
    @TempDir
    Path dir;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int exec(final String... args)
    {
        final String[] all = new String[args.length + 1];
        all[0] = "exec";
        System.arraycopy(args, 0, all, 1, args.length);
        return Rnicsim.execute(all, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    private static void requireLibrary()
    {
        try
        {
            ProgramRunner.libraryDir();
        }
        catch (final IOException e)
        {
            if ("true".equals(System.getenv("CI")))
            {
                fail(e.getMessage());
            }
            assumeTrue(false, e.getMessage());
        }
    }

    @Test
    void shouldRefuseAnUnknownProfileNamingTheBuiltInOnes()
    {
        assertThat(exec("--profile", "connectx99", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("no built-in profile 'connectx99'").contains("connectx5");
    }

    @Test
    void shouldRefuseAProfileAndADumpTogether() throws IOException
    {
        final Path dump = Files.writeString(dir.resolve("dump.txt"), "hca_id:\tmlx5_0\n");
        assertThat(exec("--profile", "rxe", "--devinfo", dump.toString(), "--", "true"))
            .isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("give --profile or --devinfo, not both");
    }

    @Test
    void shouldRefuseAFabricNameThatIsNoFileName()
    {
        assertThat(exec("--fabric", "../x", "--", "true")).isEqualTo(Rnicsim.MALFORMED);
        assertThat(err.toString()).contains("--fabric '../x'");
    }

    @Test
    void shouldReturnTheProgramsExitStatus()
    {
        requireLibrary();
        assertThat(exec("--", "true")).isZero();
        assertThat(exec("--", "sh", "-c", "exit 7")).isEqualTo(7);
    }

    @Test
    void shouldRunTheProgramWithTheLibraryFirstOnItsPathAndTheFabricsSocket() throws IOException
    {
        requireLibrary();
        final Path env = dir.resolve("env.txt");
        assertThat(exec("--strict", "--", "sh", "-c", "env > " + env)).isZero();
        final String seen = Files.readString(env);
        assertThat(seen).contains("LD_LIBRARY_PATH=" + ProgramRunner.libraryDir())
            .containsPattern("RNICSIM_FABRIC_SOCKET=\\S*rnicsim-fabric-exec-\\d+\\.sock")
            .contains("RNICSIM_STRICT=1");
        final Path lock = ProgramRunner.socketOf("exec-" + ProcessHandle.current().pid())
            .resolveSibling("rnicsim-fabric-exec-" + ProcessHandle.current().pid() + ".lock");
        assertThat(lock).as("a private fabric leaves no lock file behind").doesNotExist();
    }
}
