package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.GidEntry;
import dev.rnicsim.verbs.PortAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * The P_Key and GID tables of a simulated device's ports, built from its profile's port attributes: P_Key index 0
 * holds the default full-membership key 0xffff (the subnet manager's default, and what RoCE ports report) and the
 * other entries are empty (0x0000); the GID table's valid entries are {@link GidTable}'s, as {@link
 * SimContext#queryGid} answers.
 *
 * <p>Stateless.
 */
final class PortTables
{
    /** The default P_Key, full membership (IBA 10.9.1.1). */
    static final int DEFAULT_PKEY = 0xffff;

    private PortTables()
    {
    }

    /**
     * {@code ibv_query_pkey}: libibverbs reads {@code ports/PORT/pkeys/INDEX} from the device's sysfs directory
     * (verbs.c {@code ibv_query_pkey}); for a port or index the device does not have, that file does not exist and
     * the open fails with ENOENT.
     */
    static int pkey(final SimDevice device, final int portNum, final int index)
    {
        final String verb = "ibv_query_pkey";
        final int ports = device.profile().attributes().physPortCnt();
        final int len = device.profile().portAttributes().pkeyTblLen();
        if (portNum < 1 || portNum > ports || index < 0 || index >= len)
        {
            throw Errors.of(verb, Errno.ENOENT, "port " + portNum + " P_Key index " + index + " has no sysfs file "
                + "ports/" + portNum + "/pkeys/" + index + " (the device has ports 1.." + ports + " and pkey_tbl_len "
                + len + ")" + "; give a port from 1 to phys_port_cnt and an index below pkey_tbl_len");
        }
        return index == 0 ? DEFAULT_PKEY : 0;
    }

    /**
     * {@code ibv_query_gid_table}: the kernel's {@code UVERBS_METHOD_QUERY_GID_TABLE} refuses a buffer of 0 entries
     * (EINVAL) and {@code rdma_query_gid_table} one with fewer entries than the valid GIDs of all ports (EINVAL).
     */
    static List<GidEntry> gidTable(final SimContext context, final SimDevice device, final int maxEntries)
    {
        final String verb = "ibv_query_gid_table";
        final int ports = device.profile().attributes().physPortCnt();
        final PortAttributes port = device.profile().portAttributes();
        if (maxEntries <= 0)
        {
            throw Errors.invalid(verb, "max_entries " + maxEntries + " leaves no room (UVERBS_METHOD_QUERY_GID_TABLE "
                + "refuses 0 entries); pass the sum of gid_tbl_len over the ports");
        }
        final List<List<GidEntry>> perPort = new ArrayList<>(ports);
        int valid = 0;
        for (int p = 1; p <= ports && port.gidTblLen() > 0; p++)
        {
            perPort.add(GidTable.entries(device, p));
            valid += perPort.getLast().size();
        }
        if (maxEntries < valid)
        {
            throw Errors.invalid(verb, "max_entries " + maxEntries + " is fewer than the " + valid + " valid GIDs "
                + "(rdma_query_gid_table); pass the sum of gid_tbl_len over the ports");
        }
        final List<GidEntry> out = new ArrayList<>(valid);
        perPort.forEach(out::addAll);
        return out;
    }
}
