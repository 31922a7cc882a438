package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The op numbers of the wire between the C library and the fabric server: the library's headers
 * ({@code src/main/c/wire*.h}: the {@code enum rnicsim_op} of wire.h and the {@code #define OP_...} of its companions)
 * and the server's constants ({@code static final int OP_... = n;} in this module's Java sources) name the same ops
 * with the same numbers, and no two ops share a number on either side. A number given twice makes the server answer
 * one request with another's handler and the library wait for an answer that never comes.
 */
class WireOpNumbersTest
{
    private static final Path C_SOURCES = Path.of("src/main/c");
    private static final Path JAVA_SOURCES = Path.of("src/main/java/dev/rnicsim/ibverbs");

    /** An enumerator ({@code OP_X = 5,}) or a define ({@code #define OP_X 5}) of a wire header. */
    private static final Pattern C_OP = Pattern.compile("^\\s*(?:#define\\s+(OP_\\w+)\\s+(\\d+)|(OP_\\w+)\\s*=\\s*(\\d+)\\s*,?)");
    private static final Pattern JAVA_OP = Pattern.compile("static\\s+final\\s+int\\s+(OP_\\w+)\\s*=\\s*(\\d+)\\s*;");

    /** One op definition: its name, number and where it is defined. */
    record Op(String name, int number, String where)
    {
    }

    static List<Op> cOps() throws IOException
    {
        final List<Op> ops = new ArrayList<>();
        try (Stream<Path> files = Files.list(C_SOURCES))
        {
            for (final Path file : files.filter(p -> p.getFileName().toString().matches("wire.*\\.h")).sorted().toList())
            {
                final List<String> lines = Files.readAllLines(file);
                for (int i = 0; i < lines.size(); i++)
                {
                    final Matcher m = C_OP.matcher(lines.get(i));
                    if (m.find())
                    {
                        final String name = m.group(1) != null ? m.group(1) : m.group(3);
                        final String number = m.group(1) != null ? m.group(2) : m.group(4);
                        ops.add(new Op(name, Integer.parseInt(number), file.getFileName() + ":" + (i + 1)));
                    }
                }
            }
        }
        return ops;
    }

    static List<Op> javaOps() throws IOException
    {
        final List<Op> ops = new ArrayList<>();
        try (Stream<Path> files = Files.walk(JAVA_SOURCES))
        {
            for (final Path file : files.filter(p -> p.toString().endsWith(".java")).sorted().toList())
            {
                final List<String> lines = Files.readAllLines(file);
                for (int i = 0; i < lines.size(); i++)
                {
                    final Matcher m = JAVA_OP.matcher(lines.get(i));
                    if (m.find())
                    {
                        ops.add(new Op(m.group(1), Integer.parseInt(m.group(2)), file.getFileName() + ":" + (i + 1)));
                    }
                }
            }
        }
        return ops;
    }

    /** The numbers given to more than one op (or to one op twice), with where each is defined. */
    static List<String> collisions(final List<Op> ops)
    {
        final Map<Integer, List<Op>> byNumber = new TreeMap<>();
        for (final Op op : ops)
        {
            byNumber.computeIfAbsent(op.number(), n -> new ArrayList<>()).add(op);
        }
        final List<String> found = new ArrayList<>();
        byNumber.forEach((number, same) -> {
            if (same.size() > 1)
            {
                found.add(number + " is given to " + same);
            }
        });
        return found;
    }

    static Map<String, Integer> byName(final List<Op> ops)
    {
        final Map<String, Integer> names = new TreeMap<>();
        ops.forEach(op -> names.put(op.name(), op.number()));
        return names;
    }

    @Test
    void bothSidesDefineTheOpsTheyUse()
    {
        // Guards against the patterns silently matching nothing (a moved directory, a renamed header).
        assertThat(assertDoesNotThrow(WireOpNumbersTest::cOps)).extracting(Op::name)
            .contains("OP_HELLO", "OP_REFUSAL", "OP_TM_CAPS", "OP_DM_CAPS", "OP_OPEN_QP");
        assertThat(assertDoesNotThrow(WireOpNumbersTest::javaOps)).extracting(Op::name)
            .contains("OP_HELLO", "OP_REFUSAL", "OP_TM_CAPS", "OP_DM_CAPS", "OP_OPEN_QP");
    }

    @Test
    void noTwoOpsOfTheLibraryShareANumber() throws IOException
    {
        assertThat(collisions(cOps())).as("op numbers of src/main/c/wire*.h given twice").isEmpty();
    }

    @Test
    void noTwoOpsOfTheServerShareANumber() throws IOException
    {
        assertThat(collisions(javaOps())).as("op numbers of the server's OP_ constants given twice").isEmpty();
    }

    @Test
    void theLibraryAndTheServerNameTheSameOpsWithTheSameNumbers() throws IOException
    {
        final Map<String, Integer> c = byName(cOps());
        final Map<String, Integer> java = byName(javaOps());
        assertThat(java.keySet()).as("ops the library defines and the server does not")
            .containsAll(c.keySet());
        assertThat(c.keySet()).as("ops the server defines and the library does not")
            .containsAll(java.keySet());
        assertThat(java).as("op numbers of the server against the library's").isEqualTo(c);
    }

    @Test
    void aNumberGivenTwiceIsReportedWithBothDefinitions()
    {
        final List<Op> ops = List.of(new Op("OP_TM_CAPS", 103, "wire_tm.h:20"), new Op("OP_NEW", 103, "wire_new.h:5"),
            new Op("OP_HELLO", 1, "wire.h:23"));
        assertThat(collisions(ops)).singleElement().asString().contains("103", "OP_TM_CAPS", "OP_NEW", "wire_new.h:5");
    }

    private static <T> T assertDoesNotThrow(final java.util.concurrent.Callable<T> call)
    {
        return org.junit.jupiter.api.Assertions.assertDoesNotThrow(call::call);
    }
}
