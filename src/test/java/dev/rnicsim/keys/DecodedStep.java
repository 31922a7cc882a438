package dev.rnicsim.keys;

import dev.rnicsim.keys.KeyChains.Snapshot;
import java.util.Optional;
import net.jqwik.api.Shrinkable;
import net.jqwik.api.ShrinkingDistance;
import net.jqwik.api.state.Transformer;

/**
 * A step's number and the action it decodes to, decoded once: jqwik asks a step's value more than once (to run it,
 * and to see whether it reads the state), and its own mapped values decode again at each ask. Shrinks, grows and
 * compares as the number does, as jqwik's mapping would.
 */
final class DecodedStep implements Shrinkable<Transformer<Lockstep>>
{
    private final Snapshot snapshot;
    private final Shrinkable<Long> bits;
    private Transformer<Lockstep> value;

    DecodedStep(final Snapshot snapshot, final Shrinkable<Long> bits)
    {
        this.snapshot = snapshot;
        this.bits = bits;
    }

    @Override
    public Transformer<Lockstep> value()
    {
        Transformer<Lockstep> v = value;
        if (v == null)
        {
            v = KeyChains.transformer(KeyChains.decode(snapshot, bits.value()));
            value = v;
        }
        return v;
    }

    private Shrinkable<Transformer<Lockstep>> decoded(final Shrinkable<Long> b)
    {
        return new DecodedStep(snapshot, b);
    }

    @Override
    public java.util.stream.Stream<Shrinkable<Transformer<Lockstep>>> shrink()
    {
        return bits.shrink().map(this::decoded);
    }

    @Override
    public Optional<Shrinkable<Transformer<Lockstep>>> grow(final Shrinkable<?> before, final Shrinkable<?> after)
    {
        if (before instanceof DecodedStep b && after instanceof DecodedStep a)
        {
            return bits.grow(b.bits, a.bits).map(this::decoded);
        }
        return bits.grow(before, after).map(this::decoded);
    }

    @Override
    public java.util.stream.Stream<Shrinkable<Transformer<Lockstep>>> grow()
    {
        return bits.grow().map(this::decoded);
    }

    @Override
    public ShrinkingDistance distance()
    {
        return bits.distance();
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof DecodedStep d && bits.equals(d.bits);
    }

    @Override
    public int hashCode()
    {
        return bits.hashCode();
    }

    @Override
    public String toString()
    {
        return "DecodedStep(" + value() + ")|" + bits;
    }
}
