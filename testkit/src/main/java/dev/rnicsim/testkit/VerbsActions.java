package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.ActionChainArbitrary;
import net.jqwik.api.state.Transformer;

/**
 * jqwik stateful actions over a {@link VerbsState}, to mix with a user's own {@code Action<VerbsState>}s in an
 * {@link ActionChain}. Each action's transformation reads as a line of the scenario-script language (names as in
 * {@link TestNic#script()}: {@code app_b}, {@code pd_b}, {@code qp_a}; buffers {@code bufN}, MRs {@code mrN}), so a
 * shrunk failing chain reads as a script:
 * <pre>{@code
 * @Provide
 * Arbitrary<ActionChain<VerbsState>> chains() {
 *     return VerbsActions.correctUse(ActionChain.startWith(VerbsState::create))
 *         .withAction(4, myCacheWrite())           // the code under test, as an Action<VerbsState>
 *         .withMaxTransformations(20);
 * }
 *
 * Action<VerbsState> myCacheWrite() {              // a step from the state when generated, and a random pick
 *     return VerbsActions.picking("cache write", s -> !s.mappedBuffers().isEmpty(), Set.of(Use.INDEX), s -> {
 *         List<String> names = s.mappedBuffers();
 *         return pick -> {
 *             String buf = pick.of(names);
 *             return VerbsActions.step("post write qp_a sgl=src:64 remote=" + buf + "  # through my cache", st -> {
 *                 Buffer b = st.buffer(buf);       // by name: gone in a shrunk run? do nothing
 *                 if (b != null && b.mapped()) { ... }
 *             });
 *         };
 *     });
 * }
 *
 * @Property(tries = 50)
 * void strictModeStaysClean(@ForAll("chains") ActionChain<VerbsState> chain) {
 *     VerbsActions.run(chain);                     // strict mode checked after every action, state closed
 * }
 * }</pre>
 * Buffers and MRs live in side B's process (the responder); WRITEs and READs are posted by side A from
 * {@code src}. A work request the device refuses (a wrong key, an address out of range) is an outcome, logged in
 * {@link VerbsState#log()}, not a failure; an errno from a verb likewise. What fails a property is strict mode (or
 * the user's own checks).
 *
 * <p>Shrinking: every attempt at a shrunk chain runs it again on new simulated hosts (about a millisecond), so the
 * actions are made for few attempts: jqwik sees them as independent of the state ({@link #action}), so it removes
 * any subset of steps without making later ones anew, and a {@link Pick} shrinks each choice in one jump.
 *
 * <p>This class is the actions' public face; their steps are made by {@link MemoryActions} (mmap, munmap, CPU
 * stores, fork), {@link RegistrationActions} (reg, dereg) and {@link RdmaActions} (WRITE and READ), their picks by
 * {@link Picks}, their script lines with {@link ScriptWords}.
 */
public final class VerbsActions
{
    private VerbsActions()
    {
    }

    // ------------------------------------------------------------------ chains

    /**
     * Adds the actions of an application that uses verbs correctly: {@link #mmap()}, {@link #register()},
     * {@link #deregister()}, {@link #remoteWrite()}, {@link #remoteRead()}, {@link #munmapAfterDereg()},
     * {@link #mmapAgain()} and {@link #cpuWrite()}. With these alone, strict mode stays clean.
     *
     * @param chains the chain arbitrary.
     * @return it, with the actions.
     */
    public static ActionChainArbitrary<VerbsState> correctUse(final ActionChainArbitrary<VerbsState> chains)
    {
        return chains.withAction(3, mmap()).withAction(3, register()).withAction(1, deregister())
            .withAction(3, remoteWrite()).withAction(1, remoteRead()).withAction(1, munmapAfterDereg())
            .withAction(1, mmapAgain()).withAction(1, cpuWrite());
    }

    /**
     * Adds the misuse strict mode exists to catch: {@link #munmap()} with the MRs still registered, {@link #fork()}
     * (then a {@link #cpuWrite()} copies the page on a LEGACY host) and {@link #remoteAccessAnyKey()} (stale keys,
     * random keys, addresses out of range).
     *
     * @param chains the chain arbitrary.
     * @return it, with the actions.
     */
    public static ActionChainArbitrary<VerbsState> misuse(final ActionChainArbitrary<VerbsState> chains)
    {
        return chains.withAction(1, munmap()).withAction(1, fork()).withAction(2, remoteAccessAnyKey());
    }

    /**
     * Runs a chain with strict mode checked after every action ({@link #strictModeClean()}), then closes the state
     * (which reports leaks); after a failure the state is closed quietly and the failure rethrown.
     *
     * @param chain a chain of a property.
     * @return the final state, closed.
     * @throws AssertionError for a violation, with the script lines that led to it and strict mode's report.
     */
    public static VerbsState run(final ActionChain<VerbsState> chain)
    {
        final VerbsState state;
        try
        {
            state = chain.withInvariant("strict mode", strictModeClean()).run();
        }
        catch (final RuntimeException | Error e)
        {
            chain.finalState().ifPresent(VerbsState::closeQuietly);
            throw e;
        }
        state.close();
        return state;
    }

    /**
     * @return the invariant that fails as soon as strict mode saw a violation.
     */
    public static Consumer<VerbsState> strictModeClean()
    {
        return VerbsState::assertClean;
    }

    // ------------------------------------------------------------------ random choices

    /**
     * The random choices an action turns into a step once it sees the state: which of the names it may use, a
     * range, rights, a key, a coin and a percentage. Only the choices an action {@linkplain Use uses} vary; the
     * others stay at their simplest value, so that shrinking never spends a run on a choice that changes nothing.
     * A pick shrinks each choice straight to its simplest value (the first name, offset 0, length 1, rights
     * {@code lw,rw}, key 0, the coin false, percentage 0) rather than by halving: every attempt at a shrunk chain runs
     * the chain again on new simulated hosts, so each step gets a handful of attempts, not dozens.
     *
     * @param index   picks a name ({@link #of}); 0 or more.
     * @param offset  a raw offset, 0 or more ({@link #range}).
     * @param length  a raw length, 1 or more ({@link #range}, {@link #lengthUpTo}).
     * @param access  valid MR rights, remotely writable three times in four.
     * @param key     any 32-bit value.
     * @param coin    a coin.
     * @param percent 0 to 99, for choices by frequency.
     */
    public record Pick(int index, long offset, long length, Set<Access> access, int key, boolean coin, int percent)
    {
        /** The choices of a pick an action uses. */
        public enum Use
        {
            /** {@link Pick#index}. */
            INDEX,
            /** {@link Pick#offset}. */
            OFFSET,
            /** {@link Pick#length}. */
            LENGTH,
            /** {@link Pick#access}. */
            ACCESS,
            /** {@link Pick#key}. */
            KEY,
            /** {@link Pick#coin}. */
            COIN,
            /** {@link Pick#percent}. */
            PERCENT
        }

        /** The simplest rights: what a remotely written buffer needs. */
        public static final Set<Access> SIMPLEST_ACCESS = Set.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);

        /**
         * @throws IllegalArgumentException for a negative index, offset or percent, a percent above 99 or a length
         *                                  below 1.
         */
        public Pick
        {
            if (index < 0 || offset < 0 || length < 1 || percent < 0 || percent > 99)
            {
                throw new IllegalArgumentException("pick index=" + index + " offset=" + offset + " length=" + length
                    + " percent=" + percent);
            }
            access = VerbsState.copy(access);
        }

        /**
         * @param names the choices, not empty.
         * @param <T>   their type.
         * @return one of them (the first when shrunk).
         */
        public <T> T of(final List<T> names)
        {
            return names.get(index % names.size());
        }

        /**
         * @param lengthBytes a length, at least 1.
         * @return {@code [offset, length]} of a non-empty range inside it, keeping the page-edge bias of
         * {@link VerbsArbitraries#offsetsWithin} and {@link VerbsArbitraries#bufferLengths} where it fits.
         */
        public long[] range(final long lengthBytes)
        {
            final long off = offset % lengthBytes;
            return new long[] {off, 1 + (length - 1) % (lengthBytes - off)};
        }

        /**
         * @param max the most, at least 1.
         * @return a length from 1 to max.
         */
        public long lengthUpTo(final long max)
        {
            return 1 + (length - 1) % max;
        }

        /** This pick with the choices not used at their simplest. */
        Pick keep(final Set<Use> uses)
        {
            return new Pick(uses.contains(Use.INDEX) ? index : 0, uses.contains(Use.OFFSET) ? offset : 0,
                uses.contains(Use.LENGTH) ? length : 1, uses.contains(Use.ACCESS) ? access : SIMPLEST_ACCESS,
                uses.contains(Use.KEY) ? key : 0, uses.contains(Use.COIN) && coin,
                uses.contains(Use.PERCENT) ? percent : 0);
        }
    }

    /**
     * @param uses the choices that vary.
     * @return picks drawn with the biases of {@link VerbsArbitraries}, the other choices at their simplest,
     * shrinking as {@link Pick} says.
     */
    public static Arbitrary<Pick> picks(final Set<Pick.Use> uses)
    {
        return Picks.picks(uses);
    }

    /**
     * An action whose step is made from the state it is generated in and a {@link Pick} ({@link #action}): the way
     * to write one's own actions. Read what the step needs from the state when {@code steps} is called (names,
     * lengths) and keep it; the step runs later, also on other states (when a shrunk chain runs again without
     * some earlier steps), so it finds its objects by name and does nothing when they are gone or no longer fit.
     *
     * @param name         the action's name.
     * @param precondition when it applies, given the state (see {@link #action}).
     * @param uses         the choices of the pick the step uses.
     * @param steps        given the state, the step of each pick (use {@link #step} for its line).
     * @return the action.
     */
    public static Action<VerbsState> picking(final String name, final Predicate<VerbsState> precondition,
        final Set<Pick.Use> uses, final Function<VerbsState, Function<Pick, Transformer<VerbsState>>> steps)
    {
        final Arbitrary<Pick> picks = picks(uses);
        return action(name, precondition, s -> picks.map(steps.apply(s)::apply));
    }

    // ------------------------------------------------------------------ memory

    /**
     * {@code mmap bufN app_b SIZE}: maps a new buffer of 4 KiB pages in side B's process, 1 byte to
     * {@link VerbsState#maxBufferBytes()} (rounded up to pages when mapped).
     *
     * @return the action.
     */
    public static Action<VerbsState> mmap()
    {
        return MemoryActions.mmap();
    }

    /**
     * {@code munmap bufN SIZE}: unmaps a buffer and leaves the MRs over it registered (the misuse: a DMA through
     * them then reaches pages the process no longer maps). The process's unmap hooks run.
     *
     * @return the action.
     */
    public static Action<VerbsState> munmap()
    {
        return MemoryActions.unmapping(false);
    }

    /**
     * {@code munmap bufN SIZE  # after dereg of its MRs}: deregisters the MRs the actions registered over a buffer,
     * then unmaps it: what a careful application does when it frees memory (the MRs of a registration cache are
     * the cache's business).
     *
     * @return the action.
     */
    public static Action<VerbsState> munmapAfterDereg()
    {
        return MemoryActions.unmapping(true);
    }

    /**
     * {@code mmap bufN app_b SIZE  # MAP_FIXED: the same address again}: maps fresh pages where an unmapped buffer
     * was, as malloc hands out a freed address again (MAP_FIXED_NOREPLACE: when another buffer took part of the
     * range meanwhile, the outcome is EEXIST and the buffer stays unmapped).
     *
     * @return the action.
     */
    public static Action<VerbsState> mmapAgain()
    {
        return MemoryActions.mmapAgain();
    }

    /**
     * {@code write bufN+OFF "..."}: a CPU store into a mapped buffer (after a {@link #fork()} on a LEGACY host it
     * copies the page, and the parent's address no longer maps the frame an MR pinned).
     *
     * @return the action.
     */
    public static Action<VerbsState> cpuWrite()
    {
        return MemoryActions.cpuWrite();
    }

    /**
     * {@code fork childN app_b}: forks side B's process. On a LEGACY host (as {@link VerbsState#create()} makes)
     * pinned pages are then shared copy-on-write, and the parent's next write to one (a {@link #cpuWrite()}, or the
     * pin of a new writable registration) moves its address to a copy while the older MR keeps the old frame. The
     * child stays until the state closes.
     *
     * @return the action.
     */
    public static Action<VerbsState> fork()
    {
        return MemoryActions.fork();
    }

    /**
     * {@code madvise bufN SIZE dontfork}: what {@code ibv_fork_init()} does for every registration, so that a
     * fork leaves the range to the parent alone.
     *
     * @return the action.
     */
    public static Action<VerbsState> dontFork()
    {
        return MemoryActions.dontFork();
    }

    // ------------------------------------------------------------------ registration

    /**
     * {@code reg mrN pd_b bufK+OFF SIZE access=...}: registers a range of a mapped buffer with valid rights
     * (remotely writable three times in four). An errno is an outcome, logged.
     *
     * @return the action.
     */
    public static Action<VerbsState> register()
    {
        return RegistrationActions.register();
    }

    /**
     * {@code dereg mrN}: deregisters a live MR.
     *
     * @return the action.
     */
    public static Action<VerbsState> deregister()
    {
        return RegistrationActions.deregister();
    }

    // ------------------------------------------------------------------ work requests

    /**
     * {@code post write qp_a sgl=src:LEN remote=mrN+OFF}: a WRITE from side A into a live MR with REMOTE_WRITE,
     * inside its range.
     *
     * @return the action.
     */
    public static Action<VerbsState> remoteWrite()
    {
        return RdmaActions.rdmaInRange(true);
    }

    /**
     * {@code post read qp_a sgl=src:LEN remote=mrN+OFF}: a READ by side A of a live MR with REMOTE_READ, inside
     * its range.
     *
     * @return the action.
     */
    public static Action<VerbsState> remoteRead()
    {
        return RdmaActions.rdmaInRange(false);
    }

    /**
     * {@code post write|read qp_a sgl=src:LEN remote=... rkey=...}: a WRITE or READ with any key ever issued (live
     * or deregistered) or a random one, at an address inside, just outside or a page outside the MR (or buffer)
     * named. The device refuses most: the outcome is logged. Strict mode reports the use of a deregistered rkey
     * ({@link Violation.Kind#STALE_RKEY}): {@link StrictMode#ignore} it when the property is about something else.
     *
     * @return the action.
     */
    public static Action<VerbsState> remoteAccessAnyKey()
    {
        return RdmaActions.remoteAccessAnyKey();
    }

    /**
     * Logs a completion that is not a success.
     *
     * @param state the state.
     * @param wc    a completion, or null.
     */
    public static void outcome(final VerbsState state, final WorkCompletion wc)
    {
        if (wc == null)
        {
            state.record("  -> no completion");
        }
        else if (!wc.ok())
        {
            state.record("  -> " + wc.status().cName() + (wc.diagnosis() == null ? ""
                : ": " + wc.diagnosis().summary()));
        }
    }

    // ------------------------------------------------------------------ building blocks for users' actions

    /**
     * A transformer that records its line in the state's log and runs: the building block of actions whose
     * description is a script line.
     *
     * @param line the script line (also its description in a failing chain).
     * @param body what it does.
     * @return the transformer.
     */
    public static Transformer<VerbsState> step(final String line, final Consumer<VerbsState> body)
    {
        Objects.requireNonNull(line, "line");
        Objects.requireNonNull(body, "body");
        return Transformer.mutate(line, s ->
        {
            s.record(line);
            body.accept(s);
            // No DMA touched memory through a key after its retirement returned (docs/async.md).
            s.nic().dmaInvariant().assertHeld(line);
        });
    }

    /**
     * An action whose steps are made from the state they are generated in, but which jqwik treats as independent
     * of the state ({@link Action.Independent}): the state is that of the chain being generated on this thread
     * ({@link VerbsState#generating()}). Made so, a shrunk chain keeps its other steps as they were (jqwik makes the
     * steps after a shrunk state-dependent step anew, and would undo its own progress) and any subset of steps may
     * be tried; a step finds what it names by name when it runs and does nothing when that is gone. When the
     * precondition does not hold the action offers no step and the chain picks another.
     *
     * @param name         the action's name (its toString).
     * @param applies      when it applies, given the state.
     * @param transformers the transformers, given the state.
     * @return the action.
     */
    public static Action.Independent<VerbsState> action(final String name, final Predicate<VerbsState> applies,
        final Function<VerbsState, Arbitrary<Transformer<VerbsState>>> transformers)
    {
        Objects.requireNonNull(applies, "applies");
        Objects.requireNonNull(transformers, "transformers");
        return new Action.Independent<>()
        {
            @Override
            public Arbitrary<Transformer<VerbsState>> transformer()
            {
                final VerbsState state = VerbsState.generating();
                if (state == null || !applies.test(state))
                {
                    return Arbitraries.just(Transformer.noop());
                }
                return transformers.apply(state);
            }

            @Override
            public String toString()
            {
                return name;
            }
        };
    }

    /**
     * @param bytes a size.
     * @return it in script units: {@code 64K}, {@code 2M}, {@code 1G} when a whole multiple, else the decimal
     * number of bytes.
     */
    public static String size(final long bytes)
    {
        return ScriptWords.size(bytes);
    }

    /**
     * @param name   a name.
     * @param offset bytes from it.
     * @return {@code name}, {@code name+OFF} or {@code name-OFF} in script units.
     */
    public static String at(final String name, final long offset)
    {
        return ScriptWords.at(name, offset);
    }

    /**
     * @param access rights.
     * @return them as the script's access words ({@code lw,rw,rr}), {@code none} for none.
     */
    public static String accessWords(final Set<Access> access)
    {
        return ScriptWords.accessWords(access);
    }

    /**
     * Forks side B's process the way {@link #fork()} does, for users' own actions.
     *
     * @param state the state.
     * @return the child.
     */
    public static UserProcess forkResponder(final VerbsState state)
    {
        state.childForked();
        return state.nic().fork(Side.B);
    }
}
