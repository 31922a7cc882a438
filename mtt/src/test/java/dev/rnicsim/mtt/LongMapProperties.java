package dev.rnicsim.mtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * The long-keyed map the adapter tables keep their windows, fast-registration MRs and ODP MRs in, checked against
 * {@link HashMap} over random sequences of put, remove and get: every answer and the size agree after every step,
 * and a walk of the slots sees exactly the model's values. Keys are drawn from a small range (so that removals hit
 * and probe runs collide, which exercises backward-shift deletion) mixed with arbitrary longs.
 */
class LongMapProperties
{
    /** One step: 0 put, 1 remove, 2 get. */
    private record Op(int kind, long key)
    {
    }

    @Provide
    Arbitrary<List<Op>> ops()
    {
        final Arbitrary<Long> keys = Arbitraries.oneOf(Arbitraries.longs().between(0, 40),
            Arbitraries.longs(), Arbitraries.longs().between(0, 40).map(k -> k << 30));
        return Combinators.combine(Arbitraries.integers().between(0, 2), keys).as(Op::new).list().ofMaxSize(400);
    }

    @Property(tries = 300)
    void shouldAnswerAsAHashMapAfterEveryStep(@ForAll("ops") @Size(max = 400) final List<Op> ops)
    {
        final LongMap<String> map = new LongMap<>();
        final Map<Long, String> model = new HashMap<>();
        int n = 0;
        for (final Op op : ops)
        {
            final String value = "v" + n++;
            switch (op.kind())
            {
                case 0 -> assertThat(map.put(op.key(), value)).isEqualTo(model.put(op.key(), value));
                case 1 -> assertThat(map.remove(op.key())).isEqualTo(model.remove(op.key()));
                default ->
                {
                    assertThat(map.get(op.key())).isEqualTo(model.get(op.key()));
                    assertThat(map.containsKey(op.key())).isEqualTo(model.containsKey(op.key()));
                }
            }
            assertThat(map.size()).isEqualTo(model.size());
            assertThat(map.isEmpty()).isEqualTo(model.isEmpty());
        }
        for (final Map.Entry<Long, String> e : model.entrySet())
        {
            assertThat(map.get(e.getKey())).isEqualTo(e.getValue());
        }
        final Map<String, Integer> walked = new HashMap<>();
        for (int i = 0; i < map.slots(); i++)
        {
            final String v = map.valueAt(i);
            if (v != null)
            {
                walked.merge(v, 1, Integer::sum);
            }
        }
        assertThat(walked).hasSize(model.size());
        assertThat(walked.keySet()).containsExactlyInAnyOrderElementsOf(model.values());
    }

    @Test
    void shouldRefuseANullValueAndStayUnchanged()
    {
        final LongMap<String> map = new LongMap<>();
        map.put(7, "seven");
        assertThatThrownBy(() -> map.put(8, null)).isInstanceOf(NullPointerException.class);
        assertThat(map.size()).isEqualTo(1);
        assertThat(map.containsKey(8)).isFalse();
        assertThat(map.get(7)).isEqualTo("seven");
    }
}
