package dev.rnicsim.simnic;

import java.util.List;
import java.util.Objects;

/**
 * What {@link DevinfoReader} made of an {@code ibv_devinfo -v} dump.
 *
 * <p>Immutable and thread safe.
 *
 * @param profile         the device profile: the dump's attributes, the rest from the built-in profile of the
 *                        dump's driver; its {@link DeviceProfile#defaultedFields()} equals {@code defaultedFields}.
 * @param hcaId           the dump's {@code hca_id} (e.g. {@code mlx5_0}), or null when the dump has no
 *                        {@code hca_id} line.
 * @param defaultedFields devinfo names of the attributes the dump lacks (e.g. {@code max_sge}), in dump order; each
 *                        got the value of the built-in profile.
 * @param warnings        what the reader noticed but could work around (driver guessed, line ignored), one
 *                        message each.
 * @param defaultsFrom    the built-in profile of the recognised driver whose values the defaulted fields took
 *                        ({@code generic} when no rule recognised the device).
 */
public record DevinfoResult(DeviceProfile profile, String hcaId, List<String> defaultedFields, List<String> warnings,
                            String defaultsFrom)
{
    /**
     * A result whose defaults came from the profile's driver's own built-in profile of the same name.
     *
     * @param profile         the profile.
     * @param hcaId           the hca_id or null.
     * @param defaultedFields the defaulted fields.
     * @param warnings        the warnings.
     */
    public DevinfoResult(final DeviceProfile profile, final String hcaId, final List<String> defaultedFields,
        final List<String> warnings)
    {
        this(profile, hcaId, defaultedFields, warnings, profile.name());
    }

    /**
     * @throws NullPointerException     when {@code profile}, {@code defaultedFields} or {@code warnings} is null.
     * @throws IllegalArgumentException when the profile's defaulted fields differ from {@code defaultedFields}.
     */
    public DevinfoResult
    {
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(defaultsFrom, "defaultsFrom");
        defaultedFields = List.copyOf(defaultedFields);
        warnings = List.copyOf(warnings);
        if (!profile.defaultedFields().equals(defaultedFields))
        {
            throw new IllegalArgumentException("profile " + profile.name() + " lists defaulted fields "
                + profile.defaultedFields() + ", the result " + defaultedFields);
        }
    }
}
