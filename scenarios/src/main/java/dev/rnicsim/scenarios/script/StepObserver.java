package dev.rnicsim.scenarios.script;

/**
 * Sees a script run step by step (as {@code --html} does to draw each step): called on the run's thread after each
 * statement has run and after each {@code expect} has been checked. An observer must not change the fabric.
 */
public interface StepObserver
{
    /**
     * After a statement ran (also one that failed, before the run decides whether an {@code expect} follows).
     *
     * @param step the statement, its outcome and what the run's names are bound to now.
     */
    void step(ScriptStep step);

    /**
     * After an {@code expect} was checked.
     *
     * @param where   {@code file:line} of the expect.
     * @param text    what it expects, as written.
     * @param failure why it failed, or null when it held.
     */
    default void expect(final String where, final String text, final String failure)
    {
    }
}
