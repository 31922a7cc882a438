package dev.rnicsim.mtt;

/**
 * The counts the adapter tables' parts share: MTT entries written and zapped, and invalidations of keys other than
 * deregistrations. Each part adds to them; {@link AdapterTables} reports them. Not thread safe.
 */
final class TableCounters
{
    /** MTT entries written by registrations, fast registrations and ODP mappings. */
    long entriesWritten;
    /** MTT entries zapped by deregistrations, rereg, revocations and ODP invalidations. */
    long entriesZapped;
    /** Invalidations of keys other than deregistrations (binds, LOCAL_INV, rereg, window frees, ODP zaps). */
    long invalidations;
}
