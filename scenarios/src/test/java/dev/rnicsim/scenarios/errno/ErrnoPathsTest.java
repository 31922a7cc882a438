package dev.rnicsim.scenarios.errno;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every errno of the model's modules names its rule or limit, the object involved and how to fix it. Three checks,
 * so that a new errno cannot slip by: the text of every errno site in the sources (found by {@link ErrnoSites}, so a
 * site is checked the day it is written); every case of {@link ErrnoWalk} (run as a user runs a script) and of
 * {@link ErrnoWalkApi} (called as a program calls the Java API), with the message the user sees, which must say its
 * errno once; and the ledger {@code errno-sites-not-walked.txt} of the sites no call reaches, each with its reason,
 * which a new site must either be walked or be entered in, and which only shrinks (a walked or vanished site must
 * leave it).
 */
class ErrnoPathsTest
{
    private static final Path ROOT = Path.of("..");
    private static final Path LEDGER = Path.of("src/test/resources/errno-sites-not-walked.txt");

    /** The separator of a ledger line's site key and the reason no walk reaches the site. */
    private static final String REASON = "  -- ";

    /** @return the ledger's lines: site key to the reason no walk case reaches it ("" when none is given). */
    private static java.util.Map<String, String> ledger() throws IOException
    {
        final java.util.Map<String, String> ledger = new java.util.LinkedHashMap<>();
        for (final String line : Files.readAllLines(LEDGER, StandardCharsets.UTF_8))
        {
            if (!line.isBlank() && !line.startsWith("#"))
            {
                final int at = line.indexOf(REASON);
                ledger.put((at < 0 ? line : line.substring(0, at)).strip(),
                    at < 0 ? "" : line.substring(at + REASON.length()).strip());
            }
        }
        return ledger;
    }

    @Test
    void everyLedgerLineShouldSayWhyNoWalkReachesItsSite() throws IOException
    {
        final List<String> unexplained = new ArrayList<>();
        ledger().forEach((key, reason) -> {
            if (reason.length() < 20)
            {
                unexplained.add(key);
            }
        });
        assertThat(unexplained).as("ledger lines of %s without a reason after '%s' (why no script or Java call "
            + "reaches the site): walk the site instead, or say why", LEDGER, REASON.strip()).isEmpty();
        final List<String> keys = new ArrayList<>(ledger().keySet());
        assertThat(keys).as("the ledger's order").isSorted();
    }

    @Test
    void aTernaryInAMessageShouldGiveAlternativesToMatch()
    {
        final ErrnoSites.Site site = new ErrnoSites.Site("sim-nic", "X.java", 1,
            "wr.opcode() + \" takes no gather list: \" + (flush ? \"a FLUSH carries no payload\" : \"the 8 bytes "
                + "travel in the work request\") + \"; give no sgl\"", List.of(" takes no gather list: ",
                "a FLUSH carries no payload", "the 8 bytes travel in the work request", "; give no sgl"));
        assertThat(site.pattern().matcher("ATOMIC_WRITE takes no gather list: the 8 bytes travel in the work "
            + "request; give no sgl").find()).isTrue();
        assertThat(site.pattern().matcher("FLUSH takes no gather list: a FLUSH carries no payload; give no sgl")
            .find()).isTrue();
        assertThat(site.pattern().matcher("FLUSH takes no gather list: something else; give no sgl").find())
            .isFalse();
        final ErrnoSites.Site whole = new ErrnoSites.Site("sim-nic", "Y.java", 1,
            "wr == null ? \"the work request is null; pass one\" : \"the SRQ is destroyed; post to a live SRQ\"",
            List.of("the work request is null; pass one", "the SRQ is destroyed; post to a live SRQ"));
        assertThat(whole.pattern().matcher("EINVAL: the SRQ is destroyed; post to a live SRQ").find()).isTrue();
    }

    @Test
    void theScanShouldFindTheErrnoSitesOfEveryModule()
    {
        final List<ErrnoSites.Site> sites = ErrnoSites.scan(ROOT);
        assertThat(sites.stream().map(ErrnoSites.Site::module).distinct()).containsExactlyInAnyOrderElementsOf(
            ErrnoSites.MODULES);
        assertThat(sites).as("errno sites").hasSizeGreaterThan(250);
        assertThat(sites).anySatisfy(s -> assertThat(s.text()).contains("RLIMIT_MEMLOCK"))
            .anySatisfy(s -> assertThat(s.text()).contains("max_qp="));
    }

    @Test
    void everyErrnoSiteShouldNameItsRuleAndAFix()
    {
        final List<String> bad = new ArrayList<>();
        for (final ErrnoSites.Site s : ErrnoSites.scan(ROOT))
        {
            final List<String> lacks = Explains.lacks(s.text());
            if (!s.wraps() && !lacks.isEmpty())
            {
                bad.add(s.where() + " lacks " + String.join(" and ", lacks) + ": \"" + s.text() + "\"");
            }
        }
        assertThat(bad).as("errno messages that do not say why or how to fix it (name the limit or rule, the "
            + "objects, and a fix)").isEmpty();
    }

    @TestFactory
    Stream<DynamicTest> everyErrnoWalkedThroughTheJavaApiShouldExplainItself()
    {
        return ErrnoWalkApi.cases().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
            final ErrnoWalk.Outcome o = c.run();
            assertThat(o.errno()).as("the errno of '%s': %s", c.name(), o.output()).isEqualTo(c.errno());
            for (final String f : c.fragments())
            {
                assertThat(o.message()).as("the message of '%s'", c.name()).contains(f);
            }
            assertThat(Explains.lacks(o.message())).as("what '%s' lacks", o.message()).isEmpty();
            assertThat(o.message().split("\\b" + c.errno() + ": ", -1)).as("'%s' labels itself %s once", o.message(),
                c.errno()).hasSize(2);
        }));
    }

    @TestFactory
    Stream<DynamicTest> everyWalkedErrnoShouldExplainItselfToTheUser()
    {
        return ErrnoWalk.cases().stream().map(c -> DynamicTest.dynamicTest(c.name(), () -> {
            final ErrnoWalk.Outcome o = c.run();
            assertThat(o.errno()).as("the errno of '%s' in%n%s", c.lines(), o.output()).isEqualTo(c.errno());
            for (final String f : c.fragments())
            {
                assertThat(o.message()).as("the message of '%s'", c.lines()).contains(f);
            }
            assertThat(Explains.lacks(o.message())).as("what '%s' lacks", o.message()).isEmpty();
            assertThat(o.output()).as("the run goes on after the expected errno").doesNotContain("run stopped");
            assertThat(o.message()).as("'%s' labels itself with its errno once, before it", o.message())
                .doesNotContainPattern("\\b" + c.errno() + ": ");
        }));
    }

    @Test
    void everyErrnoSiteShouldBeWalkedOrInTheLedger() throws IOException
    {
        final List<String> messages = new ArrayList<>();
        for (final ErrnoWalk.Case c : ErrnoWalk.cases())
        {
            final ErrnoWalk.Outcome o = c.run();
            if (o.message() != null)
            {
                messages.add(o.message());
            }
        }
        for (final ErrnoWalkApi.Case c : ErrnoWalkApi.cases())
        {
            final ErrnoWalk.Outcome o = c.run();
            if (o.message() != null)
            {
                messages.add(o.message());
            }
        }
        final Set<String> ledger = new LinkedHashSet<>(ledger().keySet());
        final Set<String> unwalked = new TreeSet<>();
        final java.util.Map<String, Boolean> allWalked = new java.util.TreeMap<>();
        for (final ErrnoSites.Site s : ErrnoSites.scan(ROOT))
        {
            final boolean walked = messages.stream().anyMatch(m -> s.pattern().matcher(m).find());
            allWalked.merge(s.key(), walked, Boolean::logicalAnd);
            if (!walked && !ledger.contains(s.key()))
            {
                unwalked.add(s.key() + "    (" + s.where() + ")");
            }
        }
        // sites of one key (the same words twice in a file) leave the ledger when the walk provokes them all
        final Set<String> walkedButListed = new TreeSet<>();
        allWalked.forEach((key, walked) -> {
            if (walked && ledger.contains(key))
            {
                walkedButListed.add(key);
            }
        });
        final Set<String> keys = allWalked.keySet();
        final Set<String> stale = new TreeSet<>(ledger);
        stale.removeAll(keys);
        assertThat(unwalked).as("errno sites no case of ErrnoWalk provokes: add a case (or, while none can, "
            + "a line to %s)", LEDGER).isEmpty();
        assertThat(walkedButListed).as("sites the walk now provokes: remove them from %s", LEDGER).isEmpty();
        assertThat(stale).as("ledger lines that name no site any more: remove them from %s", LEDGER).isEmpty();
    }
}
