package dev.rnicsim.simnic;

/** What one engine step did with the WQE it worked on. */
enum WqeOutcome
{
    DONE,
    ERROR,
    BLOCKED,
    /** A packet of a message moved; more follow. */
    MORE,
    /** A READ's or atomic's request went out: its responses come back while later WQEs may start. */
    OUTSTANDING
}
