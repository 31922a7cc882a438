package dev.rnicsim.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.scenarios.script.Fields;
import dev.rnicsim.scenarios.script.Kind;
import dev.rnicsim.scenarios.script.Spec;
import dev.rnicsim.simnic.SimCounter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The script reference (docs/scripts.md) and the parser cannot drift: its verb table names every verb of the
 * parser's table ({@link Spec#VERBS}) with exactly that verb's options, and its field table names every field
 * {@link Fields} lets a script read. A verb added to the parser without a row here fails this test, which lists it.
 */
class ScriptReferenceTest
{
    private static final String PAGE = "docs/scripts.md";
    private static final Pattern OPTION = Pattern.compile("\\b([a-z_][a-z0-9_]*)=");

    /** The verbs the table documents, each with the options its rows name. */
    private static Map<String, Set<String>> documentedVerbs()
    {
        final Map<String, Set<String>> out = new LinkedHashMap<>();
        for (final List<String> row : Docs.rows(Docs.section(PAGE, "## Verbs")))
        {
            for (final String usage : Docs.codeSpans(row.get(0)))
            {
                final String verb = usage.split("\\s+")[0];
                if (verb.equals("end"))
                {
                    continue;                   // the end of a repeat block, not a verb of its own
                }
                final Set<String> options = out.computeIfAbsent(verb, k -> new TreeSet<>());
                if (!verb.equals("expect") && !verb.equals("repeat") && !verb.equals("say"))
                {
                    final Matcher m = OPTION.matcher(usage);
                    while (m.find())
                    {
                        options.add(m.group(1));
                    }
                }
            }
        }
        return out;
    }

    @Test
    void theVerbTableNamesEveryVerbOfTheParserAndNoOther()
    {
        final Set<String> documented = documentedVerbs().keySet();
        final Set<String> parser = Spec.VERBS.keySet();
        final Set<String> missing = new TreeSet<>(parser);
        missing.removeAll(documented);
        final Set<String> unknown = new TreeSet<>(documented);
        unknown.removeAll(parser);
        final StringBuilder why = new StringBuilder();
        for (final String v : missing)
        {
            why.append("\n  '").append(v).append("' is a verb of the parser with no row in ").append(PAGE)
                .append("'s verb table; add one: | `").append(Spec.VERBS.get(v).usage()).append("` | an example | "
                    + "what it does |");
        }
        for (final String v : unknown)
        {
            why.append("\n  '").append(v).append("' has a row in ").append(PAGE).append("'s verb table but the "
                + "parser (Spec.VERBS) has no such verb: remove the row, or fix its name");
        }
        assertThat(missing).as("the script reference and the parser differ:" + why).isEmpty();
        assertThat(unknown).as("the script reference and the parser differ:" + why).isEmpty();
    }

    @Test
    void eachVerbsRowNamesExactlyTheOptionsTheParserTakes()
    {
        final Map<String, Set<String>> documented = documentedVerbs();
        final List<String> why = new ArrayList<>();
        for (final Map.Entry<String, Spec> e : Spec.VERBS.entrySet())
        {
            final Set<String> doc = documented.get(e.getKey());
            if (doc == null)
            {
                continue;                       // reported by the test above
            }
            final Set<String> parser = new TreeSet<>(e.getValue().options().keySet());
            final Set<String> missing = new TreeSet<>(parser);
            missing.removeAll(doc);
            final Set<String> unknown = new TreeSet<>(doc);
            unknown.removeAll(parser);
            if (!missing.isEmpty() || !unknown.isEmpty())
            {
                why.add(e.getKey() + ": options the parser takes and the table does not name " + missing
                    + ", options the table names and the parser refuses " + unknown + " (parser's usage: "
                    + e.getValue().usage() + ")");
            }
        }
        assertThat(why).as(PAGE + "'s verb table and the parser's options").isEmpty();
    }

    @Test
    void theFieldTableNamesEveryFieldAScriptCanRead()
    {
        final Map<String, Set<String>> documented = new LinkedHashMap<>();
        for (final List<String> row : Docs.rows(Docs.section(PAGE, "## Fields")))
        {
            final Set<String> fields = new LinkedHashSet<>();
            for (final String span : Docs.codeSpans(row.get(1)))
            {
                fields.addAll(List.of(span.strip().split("\\s+")));
            }
            for (final String kind : Docs.codeSpans(row.get(0)))
            {
                documented.put(kind, fields);
            }
        }
        final Set<String> counters = new LinkedHashSet<>();
        for (final SimCounter c : SimCounter.values())
        {
            counters.add(c.label());
        }
        final Set<String> vmstat = new LinkedHashSet<>();
        for (final VmEvent e : VmEvent.values())
        {
            vmstat.add(e.procName());
        }
        final List<String> why = new ArrayList<>();
        for (final Kind k : Kind.values())
        {
            if (k == Kind.VALUE)
            {
                continue;                       // a let name: a number, no fields
            }
            final Set<String> parser = new TreeSet<>(Fields.of(k));
            // Devices and hosts also read every counter; the table says so in words instead of listing each.
            if (k == Kind.DEVICE)
            {
                parser.removeAll(counters);
            }
            if (k == Kind.HOST)
            {
                parser.removeAll(vmstat);
            }
            compare(k.name(), parser, documented.get(k.name()), why);
        }
        compare("last", new TreeSet<>(Fields.LAST), documented.get("last"), why);
        assertThat(why).as(PAGE + "'s field table and the fields a script can read (Fields)").isEmpty();
    }

    private static void compare(final String kind, final Set<String> parser, final Set<String> doc,
        final List<String> why)
    {
        if (doc == null)
        {
            why.add("no row for `" + kind + "`, whose fields are " + parser);
            return;
        }
        final Set<String> missing = new TreeSet<>(parser);
        missing.removeAll(doc);
        final Set<String> unknown = new TreeSet<>(doc);
        unknown.removeAll(parser);
        if (!missing.isEmpty() || !unknown.isEmpty())
        {
            why.add(kind + ": fields a script can read and the table does not name " + missing
                + ", fields the table names that do not exist " + unknown);
        }
    }
}
