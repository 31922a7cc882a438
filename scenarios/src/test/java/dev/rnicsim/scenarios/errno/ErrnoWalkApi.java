package dev.rnicsim.scenarios.errno;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;

/**
 * The errno paths no script verb reaches and a Java program does: each provoked through the public Java API of
 * pagetable, mtt, sim-nic or verbs-api, as a program using the library would call it. A case names the call, the
 * errno and words its message must hold; the message checked is the exception's {@code getMessage()}, what a
 * program prints. Stateless.
 */
final class ErrnoWalkApi
{
    /** What a case does: one call that must fail with an errno. */
    @FunctionalInterface
    interface Call
    {
        /**
         * @throws Exception the failure the case provokes.
         */
        void run() throws Exception;
    }

    /**
     * A provoked errno.
     *
     * @param name      what it provokes.
     * @param errno     the errno expected.
     * @param call      the set-up and the call that fails.
     * @param fragments words the message must hold.
     */
    record Case(String name, String errno, Call call, List<String> fragments)
    {
        @Override
        public String toString()
        {
            return name;
        }

        /** @return the failure's errno and message, or nulls and the text of whatever else happened. */
        ErrnoWalk.Outcome run()
        {
            try
            {
                call.run();
                return new ErrnoWalk.Outcome(null, null, "the call returned without a failure");
            }
            catch (final KernelException e)
            {
                return new ErrnoWalk.Outcome(e.errno().name(), e.getMessage(), e.toString());
            }
            catch (final TableException e)
            {
                return new ErrnoWalk.Outcome(e.errno().name(), e.getMessage(), e.toString());
            }
            catch (final VerbsException e)
            {
                return new ErrnoWalk.Outcome(e.errnoName().name(), e.getMessage(), e.toString());
            }
            catch (final Exception e)
            {
                return new ErrnoWalk.Outcome(null, null, e.toString());
            }
        }
    }

    private ErrnoWalkApi()
    {
    }

    static Case c(final String name, final String errno, final Call call, final String... fragments)
    {
        return new Case(name, errno, call, List.of(fragments));
    }

    /** @return every case. */
    static List<Case> cases()
    {
        final List<Case> c = new ArrayList<>();
        c.addAll(ErrnoWalkHost.cases());
        c.addAll(ErrnoWalkTables.cases());
        c.addAll(ErrnoWalkVerbs.cases());
        c.addAll(ErrnoWalkWindowsMemory.cases());
        c.addAll(ErrnoWalkVerbsAdded.cases());
        c.addAll(ErrnoWalkCqEx.cases());
        c.addAll(ErrnoWalkTm.cases());
        c.addAll(ErrnoWalkRdmaCore.cases());
        c.addAll(ErrnoWalkRoce.cases());
        c.addAll(ErrnoWalkCaps.cases());
        return c;
    }
}
