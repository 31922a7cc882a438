package dev.rnicsim.scenarios.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The attributes of {@code devinfo --json} under the names {@code ibv_devinfo -v} prints ({@code max_mr_size},
 * {@code page_size_cap}, {@code general_odp_caps}, ...), with its values: decimal fields as numbers, the rest
 * (hex, GUIDs, {@code ATOMIC_HCA (1)}) as the text it prints, the ODP capability blocks as arrays of the names it
 * prints ({@code ["ODP_SUPPORT", "ODP_SUPPORT_IMPLICIT"]}). Built from the dump text, so the JSON and the text
 * cannot disagree. Stateless.
 */
final class DevinfoJson
{
    /** A field line: a tab (none for hca_id), the name, a colon, tabs, the value; a capability block (the ODP caps)
     * has no value and its names on the lines below, with more tabs. */
    private static final Pattern FIELD = Pattern.compile("^\\t?([a-z_]+):\\t*(.*)$");
    private static final Pattern DECIMAL = Pattern.compile("-?\\d{1,18}");

    private DevinfoJson()
    {
    }

    /**
     * @param mapper the mapper.
     * @param dump   a dump as {@code DevinfoWriter} writes it.
     * @return its fields by their ibv_devinfo names.
     */
    static ObjectNode attributes(final ObjectMapper mapper, final String dump)
    {
        final ObjectNode n = mapper.createObjectNode();
        ArrayNode block = null;
        for (final String line : dump.split("\n"))
        {
            final Matcher m = FIELD.matcher(line);
            if (!m.matches())
            {
                if (block != null && line.startsWith("\t\t") && !line.isBlank())
                {
                    block.add(line.strip());
                }
                continue;
            }
            final String value = m.group(2).strip();
            block = null;
            if (value.isEmpty())
            {
                block = n.putArray(m.group(1));
            }
            else if (DECIMAL.matcher(value).matches())
            {
                n.put(m.group(1), Long.parseLong(value));
            }
            else
            {
                n.put(m.group(1), value);
            }
        }
        return n;
    }
}
