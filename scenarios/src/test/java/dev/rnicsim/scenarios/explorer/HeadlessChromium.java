package dev.rnicsim.scenarios.explorer;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.logging.Level;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * The distribution's Chromium, headless, driven through its chromedriver (Debian packages {@code chromium} and
 * {@code chromium-driver}; {@code .ci/run} installs them). Nothing is downloaded: both programs are found on the
 * machine. Without them a test skips with the reason, except under {@code CI=true}, where it fails. One instance
 * serves a whole test class. Not thread safe.
 */
final class HeadlessChromium implements AutoCloseable
{
    private static final List<String> BROWSERS = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome");
    private static final List<String> DRIVERS = List.of("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver");

    /** Selenium warns that it has no DevTools binding for this Chromium; the tests use none. Kept from collection. */
    private static final java.util.logging.Logger DEVTOOLS = java.util.logging.Logger.getLogger(
        "org.openqa.selenium.devtools");

    private final ChromeDriver driver;

    private HeadlessChromium(final ChromeDriver driver)
    {
        this.driver = driver;
    }

    /**
     * @param widthPx  window width in CSS pixels.
     * @param heightPx window height in CSS pixels.
     * @return a browser, or the test is skipped (outside CI) or failed (CI=true) when there is none.
     */
    static HeadlessChromium start(final int widthPx, final int heightPx)
    {
        final String browser = first(BROWSERS, "RNICSIM_CHROMIUM");
        final String chromedriver = first(DRIVERS, "RNICSIM_CHROMEDRIVER");
        if (browser == null || chromedriver == null)
        {
            final String why = "no headless browser: " + (browser == null ? "Chromium (one of " + BROWSERS + ")"
                : "chromedriver (one of " + DRIVERS + ")") + " is missing; install the Debian packages chromium "
                + "and chromium-driver (apt-get install chromium chromium-driver), as .ci/run does";
            if ("true".equals(System.getenv("CI")))
            {
                Assertions.fail(why);
            }
            Assumptions.abort(why);
        }
        DEVTOOLS.setLevel(Level.SEVERE);
        final ChromeOptions options = new ChromeOptions();
        options.setBinary(browser);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--hide-scrollbars", "--window-size=" + widthPx + "," + heightPx, "--force-device-scale-factor=1",
            "--disable-extensions", "--no-first-run", "--disable-background-networking");
        final LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        final ChromeDriverService service = new ChromeDriverService.Builder()
            .usingDriverExecutable(new File(chromedriver)).usingAnyFreePort().build();
        final ChromeDriver d = new ChromeDriver(service, options);
        d.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(60));
        return new HeadlessChromium(d);
    }

    private static String first(final List<String> candidates, final String override)
    {
        final String env = System.getenv(override);
        if (env != null && Files.isExecutable(Path.of(env)))
        {
            return env;
        }
        for (final String c : candidates)
        {
            if (Files.isExecutable(Path.of(c)))
            {
                return c;
            }
        }
        return null;
    }

    ChromeDriver driver()
    {
        return driver;
    }

    /**
     * Opens a local file.
     *
     * @param page the page.
     */
    void open(final Path page)
    {
        driver.get(page.toUri().toString());
    }

    /**
     * @return the errors since the last call: the console's SEVERE entries and the page's own uncaught errors.
     */
    List<String> errors()
    {
        final List<String> out = new ArrayList<>();
        for (final LogEntry e : driver.manage().logs().get(LogType.BROWSER))
        {
            if (e.getLevel().intValue() >= Level.SEVERE.intValue())
            {
                out.add(e.getMessage());
            }
        }
        final Object own = ((JavascriptExecutor)driver).executeScript(
            "return window.explorerErrors ? window.explorerErrors.slice() : ['the page did not start'];");
        if (own instanceof List<?> l)
        {
            l.forEach(x -> out.add(String.valueOf(x)));
        }
        return out;
    }

    /**
     * @return a screenshot of the window, as PNG bytes.
     */
    byte[] screenshot()
    {
        return driver.getScreenshotAs(OutputType.BYTES);
    }

    /**
     * @param png a PNG.
     * @return the number of distinct colours in it (a blank page has one or two).
     * @throws IOException when it is no image.
     */
    static int colours(final byte[] png) throws IOException
    {
        final BufferedImage img = ImageIO.read(new ByteArrayInputStream(png));
        if (img == null)
        {
            throw new IOException("not an image");
        }
        final Set<Integer> seen = new HashSet<>();
        for (int y = 0; y < img.getHeight(); y += 2)
        {
            for (int x = 0; x < img.getWidth(); x += 2)
            {
                seen.add(img.getRGB(x, y));
            }
        }
        return seen.size();
    }

    @Override
    public void close()
    {
        driver.quit();
    }
}
