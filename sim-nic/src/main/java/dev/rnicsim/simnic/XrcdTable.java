package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.XrcdFile;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The XRC domains of one device named by a file, by the file's inode: the model of the kernel's per-device
 * {@code xrcd_tree} (drivers/infiniband/core/uverbs_cmd.c: {@code xrcd_table_insert}, {@code find_xrcd},
 * {@code xrcd_table_delete}). {@code ib_uverbs_open_xrcd} with a descriptor looks the inode up: no domain and no
 * O_CREAT is EAGAIN, a domain and O_EXCL is EINVAL, otherwise the domain found (or a new one, entered in the table)
 * gains a handle and its use count ({@code xrcd->usecnt}) one. {@code ib_uverbs_dealloc_xrcd} takes it away again;
 * the close that brings it to 0 frees the domain and deletes the inode from the table. Every context (process) of
 * the device that opens the same file thus shares one domain: a message on an XRC_RECV QP made through any handle
 * may go to an XRC SRQ made through any other. Not thread safe: used under the fabric's lock.
 */
final class XrcdTable
{
    /** One domain named by a file: the handles open on it, in every context of the device. */
    static final class Shared
    {
        private final XrcdTable table;
        private final XrcdFile file;
        private final Set<SimXrcd> handles = new LinkedHashSet<>();

        private Shared(final XrcdTable table, final XrcdFile file)
        {
            this.table = table;
            this.file = file;
        }

        /** @return the file naming the domain, or null for a domain opened without one (fd -1). */
        XrcdFile file()
        {
            return file;
        }

        /** @return the handles open on the domain: its use count. */
        List<SimXrcd> handles()
        {
            return new ArrayList<>(handles);
        }

        void joined(final SimXrcd handle)
        {
            handles.add(handle);
        }

        /** A handle has closed; the last one frees the domain and forgets the inode ({@code xrcd_table_delete}). */
        void left(final SimXrcd handle)
        {
            handles.remove(handle);
            if (handles.isEmpty() && table != null)
            {
                table.domains.remove(file);
            }
        }
    }

    private final Map<XrcdFile, Shared> domains = new HashMap<>();

    /** @return a domain of its own for an open without a file (fd -1): no inode, never in the table. */
    static Shared unnamed()
    {
        return new Shared(null, null);
    }

    /**
     * {@code ibv_open_xrcd} with a file: finds the domain of the inode, or creates it with O_CREAT. Checks first,
     * then changes: a refused open leaves the table as it was.
     *
     * @return a new handle of {@code context} on the domain.
     */
    SimXrcd open(final SimContext context, final XrcdFile file, final boolean create, final boolean exclusive)
    {
        final String verb = "ibv_open_xrcd";
        context.checkOpen(verb);
        XrcRules.checkXrc(verb, context.device());
        if (file == null)
        {
            throw Errors.invalid(verb, "no file was given (null): pass the inode of the file that names the domain, "
                + "or open a domain of this context alone with openXrcd()");
        }
        final Shared found = domains.get(file);
        if (found == null && !create)
        {
            throw Errors.of(verb, Errno.EAGAIN, "no XRC domain of " + context.device().name() + " is named by "
                + file + " and oflags has no O_CREAT (ib_uverbs_open_xrcd: find_xrcd finds none, EAGAIN); nothing "
                + "changed; pass O_CREAT to create it");
        }
        if (found != null && exclusive)
        {
            throw Errors.invalid(verb, "an XRC domain of " + context.device().name() + " is named by " + file
                + " already (" + found.handles.size() + " handle(s) open on it) and oflags has O_EXCL "
                + "(ib_uverbs_open_xrcd: EINVAL); nothing changed; drop O_EXCL to share it, or use another file");
        }
        final Shared shared = found != null ? found : new Shared(this, file);
        final SimXrcd handle = new SimXrcd(context, shared);
        domains.putIfAbsent(file, shared);
        return handle;
    }

    /**
     * @param file a file's inode.
     * @return how many handles, in every context of the device, are open on the domain the inode names (0: none).
     */
    int useCount(final XrcdFile file)
    {
        final Shared s = domains.get(file);
        return s == null ? 0 : s.handles.size();
    }
}
