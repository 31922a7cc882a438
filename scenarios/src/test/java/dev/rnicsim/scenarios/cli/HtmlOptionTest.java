package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which page each script of {@code run --html FILE} gets: one page a script, and never two scripts on one page.
 */
class HtmlOptionTest
{
    @Test
    void oneScriptShouldWriteThePageItself()
    {
        assertThat(HtmlOption.pagesFor(Path.of("out/steps.html"), List.of(Path.of("a.rsim"))))
            .containsExactly(Path.of("out/steps.html"));
    }

    @Test
    void severalScriptsShouldGetTheirNameBeforeTheExtension()
    {
        assertThat(HtmlOption.pagesFor(Path.of("steps.html"), List.of(Path.of("a.rsim"), Path.of("b.rsim"))))
            .containsExactly(Path.of("steps-a.html"), Path.of("steps-b.html"));
    }

    @Test
    void scriptsOfOneNameInTwoFoldersShouldNotShareAPage()
    {
        final List<Path> pages = HtmlOption.pagesFor(Path.of("multi.html"),
            List.of(Path.of("a/x.rsim"), Path.of("b/x.rsim"), Path.of("c/y.rsim")));

        assertThat(pages).containsExactly(Path.of("multi-x-1.html"), Path.of("multi-x-2.html"),
            Path.of("multi-y.html"));
        assertThat(pages).doesNotHaveDuplicates();
    }

    @Test
    void noOptionShouldGiveNoPages()
    {
        assertThat(HtmlOption.pagesFor(null, List.of(Path.of("a.rsim"), Path.of("b.rsim")))).containsExactly(null,
            null);
    }
}
