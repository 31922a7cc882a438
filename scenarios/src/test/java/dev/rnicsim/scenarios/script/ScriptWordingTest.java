package dev.rnicsim.scenarios.script;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The script parser's words: a number past 64 bits is called too large with its bound (not "not a number"), and a
 * kind of object takes its article by sound ("an AH", "an MR", "an SRQ", "a QP").
 */
class ScriptWordingTest
{
    private static final String PRELUDE = """
        host h ram=256M
        device d h profile=connectx5
        open c d
        pd pd0 c
        mmap b c 64K
        cq cq0 c
        qp q pd0 cq0 type=ud
        """;

    private static void assertRefused(final String line, final String... fragments)
    {
        assertThatThrownBy(() -> new ScriptParser().parse("w.rsim", PRELUDE + line + "\n"))
            .isInstanceOf(ScriptException.class)
            .satisfies(e -> {
                for (final String f : fragments)
                {
                    assertThat(e.getMessage()).contains(f);
                }
            });
    }

    @Test
    void aDecimalNumberPast64BitsShouldBeCalledTooLargeWithItsBound()
    {
        assertRefused("mmap big c 99999999999999999999999", "w.rsim:8: '99999999999999999999999' is too large: at "
            + "most 9223372036854775807 (2^63 - 1) fits in 64 bits; expected: mmap NAME PROCESS SIZE");
    }

    @Test
    void aNumberWithAUnitPast64BitsShouldGiveTheBoundInThatUnit()
    {
        assertRefused("mmap big c 99999999999T", "'99999999999T' is too large: at most 8388607T fits in 64 bits");
    }

    @Test
    void aHexNumberOfMoreThan16DigitsShouldBeCalledTooLarge()
    {
        assertRefused("touch b+0x10000000000000000 4K", "is too large: a hex number has at most 16 digits");
    }

    @Test
    void aNumberBelowMinus2To63ShouldBeCalledTooSmall()
    {
        assertRefused("let x -99999999999999999999", "is too small: at least -9223372036854775808 (-2^63)");
    }

    @Test
    void aWordThatIsNoNumberShouldStillBeCalledSo()
    {
        assertRefused("mmap big c 4Q", "'4Q' is neither a number");
    }

    @Test
    void anAddressHandleShouldTakeAn()
    {
        assertRefused("post send q sgl=b:8 ah=pd0 remote_qpn=1 qkey=1", "'pd0' is a PD; expected the name of an AH");
    }

    @Test
    void aFieldOfAnMrShouldTakeAn()
    {
        assertRefused("reg m pd0 b 4K\nexpect m.nothing == 0", "'m.nothing': an MR has the fields [");
    }

    @Test
    void articlesShouldFollowTheSoundOfTheWord()
    {
        assertThat(Articles.a("MR")).isEqualTo("an MR");
        assertThat(Articles.a("SRQ")).isEqualTo("an SRQ");
        assertThat(Articles.a("AH")).isEqualTo("an AH");
        assertThat(Articles.a("QP")).isEqualTo("a QP");
        assertThat(Articles.a("GPU buffer")).isEqualTo("a GPU buffer");
        assertThat(Articles.a("address handle")).isEqualTo("an address handle");
        assertThat(Articles.a("unified address")).isEqualTo("a unified address");
        assertThat(Articles.a("IBV_MR_TYPE_NULL_MR")).isEqualTo("an IBV_MR_TYPE_NULL_MR");
        assertThat(Articles.a(Kind.FASTMR)).isEqualTo("a fast-registration MR");
        assertThat(Articles.a(Kind.MW)).isEqualTo("an MW");
    }
}
