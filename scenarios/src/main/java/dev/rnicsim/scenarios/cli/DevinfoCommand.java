package dev.rnicsim.scenarios.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.hwnic.RdmaVerbsProvider;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import dev.rnicsim.simnic.DevinfoResult;
import dev.rnicsim.simnic.DevinfoWriter;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Verbs;
import dev.rnicsim.verbs.VerbsException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rnicsim devinfo}: the attributes of simulated devices as {@code ibv_devinfo -v} prints them, what a real
 * dump becomes as a device profile, or the attributes of a device opened by name ({@code --device rdma:mlx5_0}).
 */
@Command(name = "devinfo", mixinStandardHelpOptions = true,
    description = "Print simulated devices as 'ibv_devinfo -v' does (every built-in profile, or one), read a "
        + "real 'ibv_devinfo -v' dump and show the profile it makes and which fields it lacked, or open a device "
        + "by name (--device rdma:mlx5_0, rdma: for the first rdma-core device, sim:connectx5) and print what "
        + "ibv_query_device_ex reports.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:printed", "2:no such profile, or the file is unreadable or no ibv_devinfo dump",
        "4:no such device, or it cannot be opened (rdma-core not installed, no RDMA support in the kernel, no "
            + "device, permission denied); the reason is printed"})
final class DevinfoCommand implements Callable<Integer>
{
    /** Exit status: the device named by --device does not exist or cannot be opened. */
    static final int NO_DEVICE = 4;

    @Option(names = "--device", paramLabel = "NAME",
        description = "A device by name: rdma:NAME (rdma-core, e.g. rdma:mlx5_0), rdma: for the first rdma-core "
            + "device, or sim:PROFILE.")
    private String device;

    @Option(names = {"-p", "--profile"}, paramLabel = "NAME",
        description = "A built-in profile: ${COMPLETION-CANDIDATES}.",
        completionCandidates = ProfileNames.class)
    private String profile;

    @Option(names = {"-f", "--file"}, paramLabel = "DUMP", description = "A real 'ibv_devinfo -v' dump to read.")
    private Path file;

    @Option(names = "--json", description = "Print the attributes as JSON.")
    private boolean json;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /** The built-in profile names, for the help text. */
    static final class ProfileNames extends ArrayList<String>
    {
        private static final long serialVersionUID = 1L;

        ProfileNames()
        {
            super(DeviceProfiles.builtIn().keySet());
        }
    }

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (file != null && profile != null)
        {
            err.println("give --profile or --file, not both");
            return Rnicsim.MALFORMED;
        }
        if (device != null && (file != null || profile != null))
        {
            err.println("give --device alone, without --profile or --file");
            return Rnicsim.MALFORMED;
        }
        if (device != null)
        {
            return printDevice(out, err);
        }
        final List<DeviceProfile> profiles = new ArrayList<>();
        final List<String> defaulted = new ArrayList<>();
        final List<String> warnings = new ArrayList<>();
        String defaultsFrom = null;
        if (file != null)
        {
            final String problem = Problems.unreadable("--file", file);
            if (problem != null)
            {
                err.println((file.toString().isEmpty() ? "" : file + ": ") + problem);
                return Rnicsim.MALFORMED;
            }
            try
            {
                final DevinfoResult r = DevinfoReader.read(file);
                profiles.add(r.profile());
                defaulted.addAll(r.defaultedFields());
                warnings.addAll(r.warnings());
                defaultsFrom = r.defaultsFrom();
            }
            catch (final IOException | IllegalArgumentException e)
            {
                err.println(e instanceof IOException io ? file + ": " + Problems.reason(io)
                    : DumpFormat.explain(file, e.getMessage()));
                return Rnicsim.MALFORMED;
            }
        }
        else if (profile != null)
        {
            if (!DeviceProfiles.builtIn().containsKey(profile))
            {
                err.println(UnknownName.profile(profile));
                return Rnicsim.MALFORMED;
            }
            profiles.add(DeviceProfiles.byName(profile));
        }
        else
        {
            profiles.addAll(DeviceProfiles.builtIn().values());
        }
        if (json)
        {
            final ObjectMapper mapper = new ObjectMapper();
            final ArrayNode list = mapper.createArrayNode();
            for (final DeviceProfile p : profiles)
            {
                final ObjectNode n = list.addObject();
                n.put("profile", p.name());
                n.put("driver", p.driver());
                // ibv_devinfo's names and values (64-bit fields in hex, as it prints them)
                n.set("attributes", DevinfoJson.attributes(mapper, DevinfoWriter.write(p.name(), p.attributes(),
                    p.traits().transport())));
                n.put("mtt_allocator", p.mtt().allocator().name());
                n.put("mtt_entries", p.mtt().entries());
                n.put("keys", p.variantPolicy().name());
                n.put("link_gbps", p.linkGbps());
                n.put("transport", p.traits().transport().devinfo());
                n.put("defaults_from", defaultsFrom != null ? defaultsFrom : p.name());
                n.set("defaulted_fields", mapper.valueToTree(file != null ? defaulted : p.defaultedFields()));
                n.set("warnings", mapper.valueToTree(warnings));
            }
            out.println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(list));
            return Rnicsim.OK;
        }
        for (final DeviceProfile p : profiles)
        {
            out.print(DevinfoWriter.write(p.name(), p.attributes(), p.traits().transport()));
            out.printf("\t# simulated: driver %s, MTT %s of %d entries, keys %s, link %.0f Gbit/s, "
                + "translation cache %d entries, hca_core_clock %d kHz, num_comp_vectors %d%n", p.driver(),
                p.mtt().allocator().name().toLowerCase(), p.mtt().entries(), p.variantPolicy().name().toLowerCase(),
                p.linkGbps(), p.cacheEntries(), p.completions().hcaCoreClockKhz(), p.numCompVectors());
            out.println("\t# driver rules: " + p.traits().describe());
            final List<String> gaps = file != null ? defaulted : p.defaultedFields();
            if (!gaps.isEmpty())
            {
                out.println("\t# not in the source dump, defaulted" + (defaultsFrom == null ? ""
                    : " from built-in profile " + defaultsFrom + " (driver " + p.driver() + ")") + ": "
                    + String.join(", ", gaps));
            }
            for (final String w : warnings)
            {
                out.println("\t# warning: " + w);
            }
            out.println();
        }
        return Rnicsim.OK;
    }

    /** --device: opens the device, queries it, closes it, prints the attributes. */
    private int printDevice(final PrintWriter out, final PrintWriter err) throws IOException
    {
        final Device d;
        final DeviceAttributes a;
        try
        {
            d = resolve(device);
            try (Context ctx = d.open())
            {
                a = ctx.queryDevice();
            }
        }
        catch (final VerbsException e)
        {
            err.println("rnicsim: " + e.getMessage());
            return NO_DEVICE;
        }
        if (json)
        {
            final ObjectMapper mapper = new ObjectMapper();
            final ObjectNode n = mapper.createObjectNode();
            n.put("device", d.name());
            n.set("attributes", DevinfoJson.attributes(mapper, DevinfoWriter.write(hcaId(d), a)));
            out.println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(n));
            return Rnicsim.OK;
        }
        out.print(DevinfoWriter.write(hcaId(d), a));
        out.println("\t# device " + d.name() + ": ibv_query_device_ex");
        out.println();
        return Rnicsim.OK;
    }

    /**
     * A device by name, through {@link Verbs#device(String)}; for rdma-core names ({@code rdma:} alone picks the
     * first device) through the rdma-core provider, which says why there is none (library missing, no kernel
     * support, no device).
     *
     * @param name the name.
     * @return the device.
     * @throws VerbsException the reason there is no such device.
     */
    static Device resolve(final String name)
    {
        try
        {
            return Verbs.device(name);
        }
        catch (final VerbsException e)
        {
            if (RdmaVerbsProvider.isRdmaName(name))
            {
                return new RdmaVerbsProvider().device(name);
            }
            throw e;
        }
    }

    /**
     * @param d a device.
     * @return its name without the scheme, as ibv_devinfo's hca_id.
     */
    static String hcaId(final Device d)
    {
        final String n = d.name();
        final String id = n.substring(n.indexOf(':') + 1).replaceAll("\\s", "_");
        return id.isEmpty() ? n.replace(":", "") : id;
    }
}
