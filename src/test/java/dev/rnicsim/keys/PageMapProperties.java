package dev.rnicsim.keys;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.keys.WorldModel.Page;
import java.util.List;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link PageMap} answers as the {@code TreeMap<Long, Page>} it replaced: the same page for every address after any
 * mix of puts and removes (removes that shift probe runs, growth, addresses that collide in few slots), and its
 * addresses in ascending order.
 */
class PageMapProperties
{
    @Property(tries = 300)
    void answersAsASortedMapAfterAnyPutsAndRemoves(@ForAll("ops") final List<Long> ops)
    {
        final PageMap map = new PageMap();
        final TreeMap<Long, Page> reference = new TreeMap<>();
        for (final long op : ops)
        {
            // Even op: put, odd op: remove; the address is one of 200 pages in two regions far apart.
            final long page = (op >>> 1) % 200;
            final long va = (page < 100 ? 0x7f0000000000L : 0x10000L) + (page % 100) * KeyWorld.PAGE;
            if ((op & 1) == 0)
            {
                final Page p = new Page();
                assertThat(map.put(va, p)).isSameAs(reference.put(va, p));
            }
            else
            {
                assertThat(map.remove(va)).isSameAs(reference.remove(va));
            }
            assertThat(map.size()).isEqualTo(reference.size());
        }
        for (long page = 0; page < 200; page++)
        {
            final long va = (page < 100 ? 0x7f0000000000L : 0x10000L) + (page % 100) * KeyWorld.PAGE;
            assertThat(map.get(va)).as("page 0x%x", va).isSameAs(reference.get(va));
            assertThat(map.containsKey(va)).isEqualTo(reference.containsKey(va));
        }
        assertThat(map.sortedAddresses()).containsExactly(reference.keySet().stream().mapToLong(Long::longValue)
            .toArray());
    }

    @Provide
    Arbitrary<List<Long>> ops()
    {
        return Arbitraries.longs().between(0, 1000).list().ofMaxSize(600);
    }
}
