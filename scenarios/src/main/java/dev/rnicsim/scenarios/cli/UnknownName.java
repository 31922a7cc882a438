package dev.rnicsim.scenarios.cli;

import dev.rnicsim.scenarios.script.DidYouMean;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import java.util.List;

/**
 * What the command line says of a profile or scenario name it does not know: the nearest known name, as for a
 * script's unknown verb ({@link DidYouMean}), and where the full list is. Stateless.
 */
final class UnknownName
{
    private UnknownName()
    {
    }

    /**
     * @param name a profile name that is not built in.
     * @return {@code no built-in profile 'NAME'; did you mean 'NEAR'?; built-in: [...]}.
     */
    static String profile(final String name)
    {
        final List<String> ofDevice = DeviceProfiles.builtIn().values().stream()
            .filter(p -> ExecCommand.hcaIdOf(p).equals(name)).map(DeviceProfile::name).toList();
        if (!ofDevice.isEmpty())
        {
            return "no built-in profile '" + name + "': '" + name + "' is the name a kernel driver gives a device; "
                + "the profiles whose device has that name: " + ofDevice;
        }
        return "no built-in profile '" + name + "'" + DidYouMean.hint(name, DeviceProfiles.builtIn().keySet())
            + "; built-in: " + DeviceProfiles.builtIn().keySet();
    }

    /**
     * @param name a scenario name that is not built in.
     * @return {@code no scenario 'NAME'; did you mean 'NEAR'?; see 'rnicsim scenario list'}.
     */
    static String scenario(final String name)
    {
        return "no scenario '" + name + "'" + DidYouMean.hint(name, Catalogue.entries().stream()
            .map(Catalogue.Entry::name).toList()) + "; see 'rnicsim scenario list'";
    }
}
