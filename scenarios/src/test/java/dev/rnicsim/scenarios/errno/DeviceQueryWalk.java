package dev.rnicsim.scenarios.errno;

import java.util.List;

/**
 * Errno walk cases of the port-table queries: {@code ibv_query_pkey} and {@code ibv_query_gid_table}.
 */
final class DeviceQueryWalk
{
    private DeviceQueryWalk()
    {
    }

    /** @return the cases. */
    static List<ErrnoWalk.Case> cases()
    {
        return List.of(
            new ErrnoWalk.Case("a P_Key index past pkey_tbl_len", ErrnoWalk.ONE_HOST, "querypkey app_a 1 9999",
                "ENOENT", List.of("pkeys/9999", "pkey_tbl_len")),
            new ErrnoWalk.Case("a GID table query with room for no entry", ErrnoWalk.ONE_HOST, "gidtable app_a 0",
                "EINVAL", List.of("max_entries 0", "gid_tbl_len")));
    }
}
