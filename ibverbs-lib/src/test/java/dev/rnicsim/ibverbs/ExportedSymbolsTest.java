package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rnicsim.simnic.DeviceProfiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library's dynamic symbols against the distribution's libibverbs.so.1 (rdma-core 44): every symbol that library
 * defines, with its version and whether it is the default one ({@code name@@IBVERBS_1.1}) or a compatibility one
 * ({@code name@IBVERBS_1.0}), is defined by this module's library too, and nothing else is, so that any program or
 * provider the distribution links against libibverbs binds to it. The compatibility symbols, bound by name and
 * version ({@code dlvsym}) and called, answer as an unmodelled verb does instead of crashing
 * (src/test/c/compat_symbols.c).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ExportedSymbolsTest
{
    /** Where distributions install libibverbs.so.1. */
    private static final List<String> DISTRIBUTION_LIBRARIES = List.of("/usr/lib/x86_64-linux-gnu/libibverbs.so.1",
        "/usr/lib/aarch64-linux-gnu/libibverbs.so.1", "/usr/lib64/libibverbs.so.1", "/usr/lib/libibverbs.so.1");

    @TempDir
    Path dir;

    /** Fails under CI=true (where .ci/run installs the package), skips elsewhere. */
    private static void missing(final String why)
    {
        if ("true".equals(System.getenv("CI")))
        {
            fail(why);
        }
        assumeTrue(false, why);
    }

    private static Path distributionLibrary()
    {
        for (final String p : DISTRIBUTION_LIBRARIES)
        {
            final Path path = Path.of(p);
            if (Files.exists(path))
            {
                return path;
            }
        }
        missing("the distribution's libibverbs.so.1 is not installed (Debian/Ubuntu package libibverbs1; .ci/run "
            + "installs it)");
        return null;
    }

    /** The defined dynamic symbols of a library, as {@code nm -D --with-symbol-versions} names them. */
    private static Set<String> defined(final Path library) throws IOException, InterruptedException
    {
        Programs.require("nm", "binutils");
        final Process nm = new ProcessBuilder("nm", "-D", "--with-symbol-versions", library.toString())
            .redirectErrorStream(true).start();
        final String out = new String(nm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(nm.waitFor()).as(out).isZero();
        final Set<String> names = new TreeSet<>();
        for (final String line : out.split("\n"))
        {
            final String[] f = line.trim().split("\\s+");
            // "ADDRESS TYPE NAME"; undefined (U) and weak undefined (w) symbols have no address
            if (f.length == 3 && !f[1].equals("U") && !f[1].equals("w"))
            {
                names.add(f[2]);
            }
        }
        return names;
    }

    @Test
    void everySymbolOfTheDistributionsLibraryAndNoOtherIsDefinedWithItsVersion() throws Exception
    {
        final Path theirs = distributionLibrary();
        final Path ours = ProgramRunner.libraryDir().resolve("libibverbs.so.1");
        final Set<String> expected = defined(theirs);
        final Set<String> got = defined(ours);
        assertThat(expected).as("the distribution's libibverbs defines versioned symbols")
            .contains("ibv_get_device_list@@IBVERBS_1.1", "ibv_get_device_list@IBVERBS_1.0");
        final Set<String> missingFromOurs = new TreeSet<>(expected);
        missingFromOurs.removeAll(got);
        final Set<String> extra = new TreeSet<>(got);
        extra.removeAll(expected);
        assertThat(missingFromOurs).as("symbols of " + theirs + " that " + ours + " lacks").isEmpty();
        assertThat(extra).as("symbols of " + ours + " that " + theirs + " does not define").isEmpty();
    }

    @Test
    void theCompatibilitySymbolsAnswerWithoutCrashing() throws Exception
    {
        final List<String> args = new ArrayList<>();
        args.add(Programs.compile(dir, "src/test/c/compat_symbols.c", "compat_symbols").toString());
        int count = 0;
        for (final String line : Files.readAllLines(Path.of("src/main/c/libibverbs.symbols")))
        {
            final String[] f = line.trim().split("\\s+");
            if (!line.startsWith("#") && f.length == 3 && f[0].contains("@"))
            {
                args.add(f[0].substring(0, f[0].indexOf('@')));
                args.add(f[1]);
                args.add(f[2]);
                count++;
            }
        }
        assertThat(count).as("compatibility symbols listed in libibverbs.symbols").isEqualTo(34);
        try (Programs p = new Programs(dir, "rxe0", DeviceProfiles.rxe()))
        {
            final Programs.Run r = p.run(false, args.toArray(String[]::new));
            assertThat(r.out()).as(r.both()).doesNotContain("FAIL")
                .contains("ok compat: ibv_get_device_list@IBVERBS_1.0 (ptr)")
                .contains("ok compat: ibv_query_device@IBVERBS_1.0 (int)")
                .contains("ok compat: ibv_register_driver@IBVERBS_1.1 (void)");
            assertThat(r.out().lines().filter(l -> l.startsWith("ok compat:")).count()).isEqualTo(count);
            assertThat(r.exitCode()).as(r.both()).isZero();
        }
    }
}
