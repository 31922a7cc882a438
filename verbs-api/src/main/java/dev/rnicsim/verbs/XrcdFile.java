package dev.rnicsim.verbs;

/**
 * The file that names an XRC domain: the inode of the descriptor given to {@code ibv_open_xrcd} (its {@code st_dev}
 * and {@code st_ino}, as {@code fstat} reports them). The kernel keeps one XRC domain per device and inode
 * ({@code find_xrcd} in drivers/infiniband/core/uverbs_cmd.c looks the inode up in the device's {@code xrcd_tree}), so
 * every process that opens the same file on the same device shares one domain.
 *
 * @param stDev the device of the file system holding the file ({@code st_dev}).
 * @param stIno the file's inode number ({@code st_ino}).
 */
public record XrcdFile(long stDev, long stIno)
{
    @Override
    public String toString()
    {
        return "inode " + Long.toUnsignedString(stIno) + " of device " + Long.toUnsignedString(stDev);
    }
}
