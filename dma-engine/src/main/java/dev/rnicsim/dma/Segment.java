package dev.rnicsim.dma;

/**
 * A range of registered memory named by key: a local SGE (lkey) or the remote range of an RDMA operation (rkey).
 *
 * @param addr        first byte, in the key's address space (the MR's iova; offsets for ZERO_BASED MRs are
 *                    already turned into iovas by the caller).
 * @param lengthBytes length in bytes, 0 or more.
 * @param key         the lkey or rkey.
 */
public record Segment(long addr, long lengthBytes, int key)
{
}
