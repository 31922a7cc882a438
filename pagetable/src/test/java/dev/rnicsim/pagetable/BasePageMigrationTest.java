package dev.rnicsim.pagetable;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * On hosts of 16 and 64 KiB pages a base page is one folio of PAGE_SIZE, and migration moves it whole: compaction
 * (mm/compaction.c isolates folios, mm/migrate.c {@code migrate_folio}) and the migration of a long-term pin out of
 * ZONE_MOVABLE (mm/gup.c {@code migrate_longterm_unpinnable_folios}). After either, each base page is still one
 * naturally aligned, physically contiguous run of frames, and its data is unchanged.
 */
class BasePageMigrationTest
{
    private static final long MIB = 1L << 20;

    private static void assertWholeBasePages(final UserProcess p, final long va, final long lengthBytes,
        final long baseBytes)
    {
        for (long page = va; page < va + lengthBytes; page += baseBytes)
        {
            final long first = p.translate(page);
            assertThat(first % baseBytes).as("base page at 0x%x starts on a %d-byte boundary", page, baseBytes)
                .isZero();
            for (long off = 4096; off < baseBytes; off += 4096)
            {
                assertThat(p.translate(page + off)).as("frame +0x%x of the base page at 0x%x", off, page)
                    .isEqualTo(first + off);
            }
        }
    }

    private static void writeTags(final UserProcess p, final long va, final int frames)
    {
        for (int i = 0; i < frames; i++)
        {
            p.write(va + i * 4096L, new byte[] {(byte)i, (byte)(i >> 8)});
        }
    }

    private static void assertTags(final UserProcess p, final long va, final int frames)
    {
        for (int i = 0; i < frames; i++)
        {
            assertThat(p.read(va + i * 4096L, 2)).isEqualTo(new byte[] {(byte)i, (byte)(i >> 8)});
        }
    }

    @Test
    void compactionOnA64KHostMovesWholeBasePages()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).basePage(BasePage.SIZE_64K)
            .build());
        final UserProcess p = host.spawn("app");
        final long length = 8 * 65536;
        final long va = p.mmapAnonymous(length);
        writeTags(p, va, (int)(length / 4096));
        final long before = p.translate(va);

        final long migrated = host.compact();

        assertThat(migrated).as("4 KiB frames of 8 base pages").isEqualTo(8 * 16);
        assertThat(p.translate(va)).isNotEqualTo(before);
        assertWholeBasePages(p, va, length, 65536);
        assertTags(p, va, (int)(length / 4096));
    }

    @Test
    void aLongTermPinOnA16KHostMovesWholeBasePagesOutOfZoneMovable()
    {
        final Host host = new Host(HostConfig.builder().physicalMemoryBytes(256 * MIB).movableZoneBytes(192 * MIB)
            .basePage(BasePage.SIZE_16K).build());
        final UserProcess p = host.spawn("app").capIpcLock(true);
        final long length = 16 * 16384;
        final long va = p.mmapAnonymous(length);
        writeTags(p, va, (int)(length / 4096));
        final PhysicalMemory phys = host.physicalMemory();
        assertThat(phys.zoneOf(p.translate(va) >>> 12)).as("faulted in where movable pages go first")
            .isEqualTo(Zone.MOVABLE);

        final PinnedPages pin = p.pinUserPages(va, length, true, true);

        for (long page = va; page < va + length; page += 16384)
        {
            assertThat(phys.zoneOf(p.translate(page) >>> 12)).isEqualTo(Zone.NORMAL);
            assertThat(phys.frames().order(p.translate(page) >>> 12)).as("still one folio of PAGE_SIZE, not split")
                .isEqualTo(2);
        }
        assertWholeBasePages(p, va, length, 16384);
        assertTags(p, va, (int)(length / 4096));
        assertThat(host.counter(VmEvent.PGMIGRATE_LONGTERM_PIN)).as("16 base pages of 4 frames each")
            .isEqualTo(16 * 4);
        p.unpinUserPages(pin);
    }
}
