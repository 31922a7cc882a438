package dev.rnicsim.scenarios.errno;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What {@link Explains} takes for a message that says why, and what it refuses. */
class ExplainsTest
{
    @Test
    void aMessageWithTheRuleTheObjectAndAFixClauseShouldPass()
    {
        assertThat(Explains.lacks("VMA 3 > vm.max_map_count=2; raise vm.max_map_count")).isEmpty();
        assertThat(Explains.lacks("qp_access_flags is null or holds null (use an empty set for none)")).isEmpty();
        assertThat(Explains.lacks("variantBits=0 must be 1-16")).isEmpty();
    }

    @Test
    void aVerbInsideADescriptionShouldNotCountAsAFix()
    {
        assertThat(Explains.lacks("hmm_range_fault at 0x1000: the VMA (r--p) does not allow a device write"))
            .containsExactly("how to fix it (a clause that starts with what to do, or the requirement)");
        assertThat(Explains.lacks("page at 0x1000 is in ZONE_MOVABLE and already pinned, so migrate_pages cannot "
            + "move it for a long-term pin (migrate_longterm_unpinnable_folios)")).hasSize(1);
    }

    @Test
    void aMessageThatNamesNoObjectShouldBeRefused()
    {
        assertThat(Explains.lacks("the argument is not valid; give another one"))
            .contains("the object involved (a value, a field or the object's name)");
    }

    @Test
    void aMessageWithoutARuleShouldBeRefused()
    {
        assertThat(Explains.lacks("something went wrong with the MR; try again")).contains("the rule or limit");
    }
}
