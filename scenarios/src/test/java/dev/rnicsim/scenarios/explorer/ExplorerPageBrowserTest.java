package dev.rnicsim.scenarios.explorer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;

/**
 * The tour's explorer page in a real browser (headless Chromium): stepped through with the keyboard from the first
 * step to the last, it shows at each registration the key (index and variant), page size and MTT entries the model
 * printed, at the stale write the rkey's free slot and REM_ACCESS_ERR, with no error in the console; a screenshot
 * of a step is not blank. With {@code -Dexplorer.images=DIR} the screenshots of two steps are also written to DIR
 * (the docs' images are made so).
 */
class ExplorerPageBrowserTest
{
    @TempDir
    static Path dir;
    private static TourPage tour;
    private static HeadlessChromium browser;

    @BeforeAll
    static void writeTheTourAndStartTheBrowser() throws IOException
    {
        tour = TourPage.write(dir);
        browser = HeadlessChromium.start(1400, 1000);
    }

    @AfterAll
    static void stopTheBrowser()
    {
        if (browser != null)
        {
            browser.close();
        }
    }

    @Test
    void steppingThroughEveryStepWithTheKeyboardShouldShowTheKeysPageSizesAndMttEntriesTheModelPrinted()
    {
        browser.open(tour.page());
        assertThat(text("step-index")).isEqualTo("step 1 of " + tour.steps());
        final Actions keys = new Actions(browser.driver());
        final List<String> checked = new ArrayList<>();
        boolean staleSeen = false;
        final java.util.Map<String, Integer> regStep = new java.util.HashMap<>();
        int deregStep = -1;
        for (int i = 1; i <= tour.steps(); i++)
        {
            assertThat(text("step-index")).isEqualTo("step " + i + " of " + tour.steps());
            final String line = text("step-line");
            final String[] words = line.split(" ");
            final TourPage.Reg reg = words[0].equals("reg") ? tour.regs().get(words[1]) : null;
            if (reg != null)
            {
                final WebElement row = browser.driver().findElement(By.cssSelector("table.mpt tr[data-name='"
                    + words[1] + "']"));
                assertThat(row.getAttribute("data-key")).as("key of %s", words[1]).isEqualTo(reg.key());
                assertThat(row.findElement(By.cssSelector(".key .idx")).getText())
                    .isEqualTo("0x" + Long.toHexString(reg.index()));
                assertThat(row.findElement(By.cssSelector(".key .var")).getText())
                    .isEqualTo("0x" + Integer.toHexString(reg.variant()));
                if (reg.pageSize() != null)
                {
                    assertThat(row.findElement(By.cssSelector("td.page-size")).getText()).isEqualTo(reg.pageSize());
                    assertThat(row.findElement(By.cssSelector("td.mtt")).getText())
                        .startsWith(reg.mttEntries() + " @");
                }
                assertThat(row.getAttribute("class")).as("the new key is highlighted").contains("changed");
                assertThat(text("step-changed")).contains("MPT keys of");
                checked.add(words[1]);
                regStep.put(words[1], i);
            }
            if (line.equals("dereg mr_b"))
            {
                deregStep = i;
            }
            if (words[0].equals("post") && !browser.driver().findElements(By.id("wr-table")).isEmpty()
                && text("wr-table").contains("REM_ACCESS_ERR"))
            {
                assertThat(text("follow-body")).contains("free").contains("REM_ACCESS_ERR")
                    .contains("no live MR maps this page")
                    .contains("issued at step " + regStep.get("mr_b")).contains("freed at step " + deregStep);
                staleSeen = true;
            }
            if (i < tour.steps())
            {
                keys.sendKeys(Keys.ARROW_RIGHT).perform();
            }
        }
        assertThat(checked).containsExactlyElementsOf(tour.regs().keySet());
        assertThat(staleSeen).as("the stale write's REM_ACCESS_ERR on its step").isTrue();
        keys.sendKeys(Keys.ARROW_LEFT).perform();
        assertThat(text("step-index")).isEqualTo("step " + (tour.steps() - 1) + " of " + tour.steps());
        keys.sendKeys(Keys.HOME).perform();
        assertThat(text("step-index")).isEqualTo("step 1 of " + tour.steps());
        assertThat(browser.errors()).as("console errors").isEmpty();
    }

    @Test
    void screenshotsOfTheFirstRemoteWriteAndTheStaleWriteShouldNotBeBlank() throws IOException
    {
        final int write = stepOf("post write", 1);
        final int stale = stepOf("post write", 3);
        for (final int step : new int[] {write, stale})
        {
            // A fresh load (not a change of the hash alone): the page reads #step=N as it starts.
            browser.driver().get("about:blank");
            browser.driver().get(tour.page().toUri() + "#step=" + step);
            assertThat(text("step-index")).isEqualTo("step " + step + " of " + tour.steps());
            final byte[] png = browser.screenshot();
            assertThat(HeadlessChromium.colours(png)).as("distinct colours in the screenshot of step %d", step)
                .isGreaterThan(32);
            final String images = System.getProperty("explorer.images");
            if (images != null)
            {
                Files.createDirectories(Path.of(images));
                Files.write(Path.of(images, step == write ? "explorer-remote-write.png" : "explorer-stale-key.png"),
                    png);
            }
        }
        assertThat(text("wr-table")).contains("REM_ACCESS_ERR");
        browser.driver().findElement(By.cssSelector(".key-history a")).click();
        assertThat(text("step-line")).as("the step the stale key's history links to").startsWith("reg mr_b ");
        assertThat(browser.errors()).as("console errors").isEmpty();
    }

    /** The 1-based step of the n-th statement starting with a prefix, from the model's own steps. */
    private static int stepOf(final String prefix, final int nth)
    {
        browser.open(tour.page());
        final List<WebElement> items = browser.driver().findElements(By.cssSelector("#steps .item.step"));
        int seen = 0;
        for (int i = 0; i < items.size(); i++)
        {
            if (items.get(i).getText().replaceFirst("^\\d+\\. ", "").startsWith(prefix) && ++seen == nth)
            {
                return i + 1;
            }
        }
        throw new AssertionError("no " + nth + ". '" + prefix + "' step");
    }

    private static String text(final String id)
    {
        return browser.driver().findElement(By.id(id)).getText();
    }
}
