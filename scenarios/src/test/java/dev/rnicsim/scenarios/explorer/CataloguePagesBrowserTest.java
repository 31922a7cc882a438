package dev.rnicsim.scenarios.explorer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.cli.Catalogue;
import dev.rnicsim.scenarios.cli.Rnicsim;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.interactions.Actions;

/**
 * Every catalogue scenario through {@code scenario run NAME --html}: each page loads in headless Chromium, shows the
 * run's step count, goes to its last step with End, and leaves no error in the console. One browser for all.
 */
class CataloguePagesBrowserTest
{
    @TempDir
    Path dir;

    @Test
    void everyCataloguePageShouldLoadStepToItsEndAndLogNoError()
    {
        final SoftAssertions soft = new SoftAssertions();
        try (HeadlessChromium browser = HeadlessChromium.start(1200, 900))
        {
            for (final Catalogue.Entry e : Catalogue.entries())
            {
                final Path page = dir.resolve(e.name() + ".html");
                final StringWriter o = new StringWriter();
                final int code = Rnicsim.execute(new String[] {"scenario", "run", e.name(), "-q", "--html",
                    page.toString()}, new PrintWriter(o, true), new PrintWriter(o, true));
                soft.assertThat(code).as("%s: %s", e.name(), o).isZero();
                if (!Files.exists(page))
                {
                    soft.fail(e.name() + ": no page written: " + o);
                    continue;
                }
                final int steps = TourPage.steps(o.toString());
                browser.open(page);
                soft.assertThat(browser.driver().findElement(By.id("step-index")).getText()).as(e.name())
                    .isEqualTo("step 1 of " + steps);
                new Actions(browser.driver()).sendKeys(Keys.END).perform();
                soft.assertThat(browser.driver().findElement(By.id("step-index")).getText()).as(e.name())
                    .isEqualTo("step " + steps + " of " + steps);
                soft.assertThat(browser.errors()).as("console errors of %s", e.name()).isEmpty();
            }
        }
        assertThat(Catalogue.entries()).hasSizeGreaterThan(20);
        soft.assertAll();
    }
}
