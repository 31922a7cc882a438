package dev.rnicsim.testkit;

import dev.rnicsim.simnic.SimDevice;
import java.util.ArrayList;
import java.util.List;

/**
 * The strict modes a {@link TestNic} attached to its two devices, closed together when the fixture closes so that
 * every violation they saw (leaks included) fails the test.
 *
 * <p>Not thread safe (nor is the simulator).
 */
final class StrictModes
{
    private final SimDevice requester;
    private final SimDevice responder;
    private final List<StrictMode> attached = new ArrayList<>();

    /**
     * @param requester side A's device.
     * @param responder side B's device.
     */
    StrictModes(final SimDevice requester, final SimDevice responder)
    {
        this.requester = requester;
        this.responder = responder;
    }

    /**
     * @return a new strict mode on both devices, watching from now on.
     */
    StrictMode attach()
    {
        final StrictMode s = StrictMode.attach(requester, responder);
        attached.add(s);
        return s;
    }

    /**
     * Closes every strict mode attached, in order.
     *
     * @param earlier a failure of the fixture's close before this one (closing its contexts), or null.
     * @throws AssertionError the first strict mode's violations, with the later ones' and {@code earlier} suppressed,
     *                        when a strict mode saw a violation.
     * @throws RuntimeException {@code earlier}, when no strict mode saw a violation.
     */
    void closeAll(final RuntimeException earlier)
    {
        AssertionError violations = null;
        for (final StrictMode s : attached)
        {
            try
            {
                s.close();
            }
            catch (final AssertionError e)
            {
                if (violations == null)
                {
                    violations = e;
                }
                else
                {
                    violations.addSuppressed(e);
                }
            }
        }
        if (violations != null)
        {
            if (earlier != null)
            {
                violations.addSuppressed(earlier);
            }
            throw violations;
        }
        if (earlier != null)
        {
            throw earlier;
        }
    }
}
