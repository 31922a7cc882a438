package dev.rnicsim.scenarios.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.scenarios.script.ScriptRunner;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Walks every errno the catalogue's scenarios provoke and checks that each failure names the call that failed
 * ({@code ibv_reg_mr: }, {@code mmap: }, ...), the errno, and a cause in words, never a bare errno.
 */
class ErrnoMessagesTest
{
    /** {@code    -> ERRNO: CALL: CAUSE} or a repeat's summary around one. */
    private static final Pattern FAILURE = Pattern.compile("(?m)^    -> (E[A-Z0-9]+): (.*)$");

    @Test
    void everyErrnoOfTheCatalogueShouldNameTheCallAndACause()
    {
        final List<String> seen = new ArrayList<>();
        for (final Catalogue.Entry e : Catalogue.entries())
        {
            final StringWriter out = new StringWriter();
            new ScriptRunner(new PrintWriter(out, true), ScriptRunner.Detail.FULL).run(e.name() + ".rsim",
                e.script(), Path.of("."));
            final Matcher m = FAILURE.matcher(out.toString());
            while (m.find())
            {
                final String errno = m.group(1);
                final String message = m.group(2).replaceFirst("^repeat \\d+: \\d+ done, then \\w+ (at|in) "
                    + "repetition \\d+: ", "");
                seen.add(errno);
                assertThat(message).as("%s in %s", m.group(), e.name())
                    .matches("([A-Za-z_.]+( [0-9a-z_]+)?: )+" + ".*")
                    .doesNotStartWith(errno + ":")
                    .as("the errno once, not again after the call: %s in %s", m.group(), e.name())
                    .doesNotContainPattern("^[A-Za-z_.]+( [0-9a-z_]+)?: " + errno + ": ");
                final String cause = message.substring(message.lastIndexOf(errno + ": ") < 0 ? 0
                    : message.lastIndexOf(errno + ": ") + errno.length() + 2);
                assertThat(cause.length()).as("the cause of %s in %s", m.group(), e.name()).isGreaterThan(20);
            }
        }
        assertThat(seen).as("the catalogue provokes these errnos").contains("EINVAL", "ENOMEM", "EOPNOTSUPP",
            "EFAULT", "EBUSY", "EBADF");
    }
}
