package dev.rnicsim.hwnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/**
 * Loading libibverbs: the installed library binds every function the backend uses; a missing one fails with ENOENT
 * and the packages to install, and a provider over it lists no devices but says why.
 */
class LibibverbsLoadingTest
{
    /** A library name no system has. */
    static final String ABSENT = "libibverbs-rnicsim-absent.so.1";

    @Test
    void shouldBindEveryFunctionOfTheInstalledLibrary()
    {
        final Libibverbs lib = Installed.libibverbsOrSkip();

        assertThat(lib.libraryName()).isEqualTo(System.getProperty(Libibverbs.LIBRARY_PROPERTY,
            Libibverbs.DEFAULT_LIBRARY));
        assertThat(Libibverbs.system()).isSameAs(lib);
    }

    @Test
    void shouldFailWithEnoentNamingThePackagesToInstallWhenTheLibraryIsMissing()
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> Libibverbs.load(ABSENT));

        assertThat(e.errno()).isEqualTo(Errno.ENOENT.code());
        assertThat(e.verb()).isEqualTo("dlopen");
        assertThat(e.getMessage()).contains(ABSENT, "not installed", "libibverbs1", "rdma-core", "libibverbs",
            "apt-get install", "dnf install");
    }

    @Test
    void shouldListNoDevicesButSayWhyWhenTheLibraryIsMissing()
    {
        final RdmaVerbsProvider provider = RdmaVerbsProvider.forLibrary(ABSENT);

        assertThat(provider.devices()).isEmpty();
        final VerbsException listing = catchThrowableOfType(VerbsException.class, provider::listDevices);
        assertThat(listing.errno()).isEqualTo(Errno.ENOENT.code());
        assertThat(listing.getMessage()).contains("libibverbs1");
        final VerbsException byName = catchThrowableOfType(VerbsException.class, () -> provider.device("rdma:"));
        assertThat(byName.errno()).isEqualTo(Errno.ENOENT.code());
    }

    @Test
    void shouldRefuseANameWithoutTheRdmaScheme()
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> RdmaVerbsProvider.forLibrary(ABSENT).device("sim:connectx5"));

        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.getMessage()).contains("rdma:NAME");
    }
}
