package dev.rnicsim.scenarios;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * bin/demo: the host memory demo, then the RDMA demo between two simulated hosts.
 */
public final class Demo
{
    private Demo()
    {
    }

    /**
     * @param args ignored.
     */
    public static void main(final String[] args)
    {
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        HostDemo.run(out);
        out.println();
        RdmaDemo.run(out);
    }
}
