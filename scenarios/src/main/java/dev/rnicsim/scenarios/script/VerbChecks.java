package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.DeviceProfiles;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The rules of single verbs that their grammar ({@link Spec}) cannot say, checked before anything runs: the forms of
 * {@code reg}, the ranges of {@code advise} and {@code dmabuf}, what {@code watch}, {@code device} and each
 * operation of {@code post} need or refuse, and {@code strict}'s rate. Stateless.
 */
final class VerbChecks
{
    private VerbChecks()
    {
    }

    /**
     * The rules of one verb that its grammar ({@link Spec}) does not say, checked before its names: {@code strict}'s
     * rate, {@code reg}'s dma-buf and implicit forms, the ranges of {@code advise} and {@code dmabuf}, the options
     * {@code watch} needs.
     */
    static void beforeNames(final ScriptLine l, final Spec spec)
    {
        if (l.verb().equals("strict"))
        {
            checkStrict(l, spec);
        }
        if (l.verb().equals("reg") && l.options().containsKey("dmabuf") && l.args().size() != 4)
        {
            throw l.error("reg with dmabuf= is ibv_reg_dmabuf_mr: give OFFSET and SIZE, the range of the dma-buf to "
                + "register; expected: " + spec.usage());
        }
        if (isImplicitReg(l))
        {
            checkImplicit(l, spec);
        }
        if (l.verb().equals("advise") && l.args().size() == 3)
        {
            throw l.error("advise takes ADDR and SIZE together (or neither, for the whole MR); expected: "
                + spec.usage());
        }
        if (l.verb().equals("dmabuf") && l.args().size() == 3)
        {
            throw l.error("dmabuf takes OFFSET and SIZE together (or neither, for the whole buffer); expected: "
                + spec.usage());
        }
        if (l.verb().equals("watch"))
        {
            for (final String k : List.of("flag", "data", "length"))
            {
                if (!l.options().containsKey(k))
                {
                    throw l.error("watch needs " + k + "=: the 8-byte flag the CPU polls, the data it reads once the "
                        + "flag holds the value, and the data's length; expected: " + spec.usage());
                }
            }
        }
    }

    /** @return true for {@code reg NAME PD implicit ...}: its third word is no address. */
    static boolean isImplicitReg(final ScriptLine l)
    {
        return l.verb().equals("reg") && l.args().size() == 3;
    }

    /**
     * The rules of one verb checked after its names: {@code device}'s profile, and the options each operation of
     * {@code post} needs or refuses.
     */
    static void afterNames(final ScriptLine l, final Spec spec)
    {
        if (l.verb().equals("device") && l.options().containsKey("profile")
            && !DeviceProfiles.builtIn().containsKey(l.options().get("profile")))
        {
            throw l.error("no built-in profile '" + l.options().get("profile") + "'; built-in: "
                + DeviceProfiles.builtIn().keySet());
        }
        if (l.verb().equals("device") && l.options().containsKey("profile") && l.options().containsKey("devinfo"))
        {
            throw l.error("give profile= or devinfo=, not both");
        }
        if (l.verb().equals("post"))
        {
            checkPost(l, spec);
        }
    }

    /**
     * {@code strict off} takes no options, and {@code strict on max_reg_rate=N} needs N of 1 or more (a rate of 0 would
     * report every registration); a number written out is checked here, an expression when the line runs.
     */
    private static void checkStrict(final ScriptLine l, final Spec spec)
    {
        if (l.args().get(0).equals("off") && !l.options().isEmpty())
        {
            throw l.error("'strict off' takes no options (" + String.join(", ", l.options().keySet()) + "= is for "
                + "'strict on'); expected: " + spec.usage());
        }
        final String rate = l.options().get("max_reg_rate");
        if (rate != null && rate.strip().matches("-?\\s*[0-9_]{1,18}")
            && Long.parseLong(rate.replaceAll("[\\s_]", "")) < 1)
        {
            throw l.error(maxRegRateError(rate.strip()) + "; expected: " + spec.usage());
        }
    }

    /**
     * @param rate the max_reg_rate= value given.
     * @return why it is refused, the same words at parse and at run time.
     */
    static String maxRegRateError(final String rate)
    {
        return "max_reg_rate=" + rate + ": give 1 or more registrations per simulated second";
    }

    /**
     * {@code reg NAME PD implicit access=odp,...}: the third word must be {@code implicit} (ADDR without SIZE is a
     * missing argument), and the access flags must ask for on-demand paging.
     */
    private static void checkImplicit(final ScriptLine l, final Spec spec)
    {
        if (!l.args().get(2).equals(Spec.IMPLICIT))
        {
            throw l.error("reg needs ADDR and SIZE, or the word implicit for an implicit ODP MR; expected: "
                + spec.usage());
        }
        final String access = l.options().getOrDefault("access", "");
        if (!List.of(access.toLowerCase(Locale.ROOT).split(",")).stream().anyMatch(w -> w.equals("odp")
            || w.equals("on_demand")))
        {
            throw l.error("an implicit MR is an on-demand-paging MR over the whole address space (ibv_reg_mr with "
                + "addr NULL, length SIZE_MAX and IBV_ACCESS_ON_DEMAND): give access=odp,... ; expected: "
                + spec.usage());
        }
    }

    /** The options each operation of {@code post} needs or refuses. */
    private static void checkPost(final ScriptLine l, final Spec spec)
    {
        final String op = l.args().get(0);
        final Map<String, String> o = l.options();
        if (Spec.REMOTE_WORDS.contains(op) && !o.containsKey("remote"))
        {
            throw l.error("post " + op + " needs remote=ADDR (and rkey=KEY unless ADDR starts at an MR or a window)");
        }
        if ((op.equals("local_inv") || op.equals("send_inv")) && !o.containsKey("rkey"))
        {
            throw l.error("post " + op + " needs rkey=KEY: the key to invalidate (a type 2 window's rkey or a"
                + " fast-registration MR's key); expected: " + spec.usage());
        }
        if (op.equals("reg_mr") && !o.containsKey("mr"))
        {
            throw l.error("post reg_mr needs mr=FASTMR (a name from 'fastmr'); expected: " + spec.usage());
        }
        for (final String k : List.of("sgl", "remote"))
        {
            if (o.containsKey(k) && (op.equals("local_inv") || op.equals("reg_mr")))
            {
                throw l.error("post " + op + " runs on the local device and moves no data: it takes no " + k + "="
                    + (op.equals("reg_mr") ? " (its pages come from 'map')" : "") + "; expected: " + spec.usage());
            }
        }
        for (final String k : List.of("mr", "key", "access"))
        {
            if (o.containsKey(k) && !op.equals("reg_mr"))
            {
                throw l.error("option '" + k + "' is for post reg_mr, not post " + op + "; expected: "
                    + spec.usage());
            }
        }
        for (final String k : List.of("length", "type", "level"))
        {
            if (o.containsKey(k) && !op.equals("flush"))
            {
                throw l.error("option '" + k + "' is for post flush, not post " + op + "; expected: "
                    + spec.usage());
            }
        }
        if (op.equals("atomic_write") && !o.containsKey("value"))
        {
            throw l.error("post atomic_write needs value=N: the 8 bytes it stores (ibv_wr_atomic_write's atomic_wr); "
                + "expected: " + spec.usage());
        }
        if (o.containsKey("value") && !op.equals("atomic_write"))
        {
            throw l.error("option 'value' is for post atomic_write (the 8 bytes it stores), not post " + op
                + "; expected: " + spec.usage());
        }
    }
}
