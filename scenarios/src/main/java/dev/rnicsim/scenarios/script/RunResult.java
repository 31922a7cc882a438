package dev.rnicsim.scenarios.script;

/**
 * How a script run ended.
 *
 * @param exitCode     0 every expect held, 1 an expect failed or a step failed unexpectedly, 2 malformed.
 * @param steps        statements run.
 * @param expectsHeld  expectations that held.
 * @param failure      what failed (expected and actual), or null.
 * @param simulatedNs  the simulated clock at the end, in ns.
 */
public record RunResult(int exitCode, int steps, int expectsHeld, String failure, long simulatedNs)
{
}
