package dev.rnicsim.scenarios.explorer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link MergePatch}: the patch from one tree to another, applied to the first, gives the second; equal trees give
 * no patch. The page rebuilds every step's state this way.
 */
class MergePatchProperties
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Property(tries = 1000)
    void applyingTheDiffShouldGiveTheLaterTree(@ForAll("trees") final Map<String, Object> a,
        @ForAll("trees") final Map<String, Object> b)
    {
        final JsonNode before = MAPPER.valueToTree(a);
        final JsonNode after = MAPPER.valueToTree(b);
        final JsonNode patch = MergePatch.diff(before, after);
        if (patch == null)
        {
            assertThat(after).isEqualTo(before);
            return;
        }
        assertThat(MergePatch.apply(before.deepCopy(), patch)).isEqualTo(after);
        assertThat(MergePatch.diff(after, after)).isNull();
    }

    @Provide
    Arbitrary<Map<String, Object>> trees()
    {
        return tree(3);
    }

    private static Arbitrary<Map<String, Object>> tree(final int depth)
    {
        final Arbitrary<Object> leaf = Arbitraries.oneOf(Arbitraries.integers().between(0, 3).map(i -> (Object)i),
            Arbitraries.of("x", "y").map(s -> (Object)s),
            Arbitraries.integers().between(0, 2).list().ofMaxSize(3).map(l -> (Object)List.copyOf(l)));
        final Arbitrary<Object> value = depth == 0 ? leaf
            : Arbitraries.oneOf(leaf, Arbitraries.lazy(() -> tree(depth - 1)).map(m -> (Object)m));
        return Arbitraries.maps(Arbitraries.of("a", "b", "c", "d"), value).ofMaxSize(4);
    }
}
