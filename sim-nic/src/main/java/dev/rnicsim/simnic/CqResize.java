package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.Errno;

/**
 * {@code ibv_resize_cq}'s rules, the same for the providers that implement it (rdma-core providers/mlx5/verbs.c
 * {@code mlx5_resize_cq} and the kernel's {@code mlx5_ib_resize_cq}; providers/rxe {@code rxe_resize_cq} and the
 * kernel's {@code rxe_cq_chk_attr}, {@code rxe_cq_resize_queue}):
 * <ul>
 * <li>a provider without {@code resize_cq} answers EOPNOTSUPP (libibverbs {@code ibv_resize_cq});</li>
 * <li>fewer than 1 entry or more than {@code max_cqe} is EINVAL (rxe {@code rxe_cq_chk_attr}; mlx5: the provider
 * refuses a negative count, the kernel a count past {@code 1 << log_max_cq_sz});</li>
 * <li>fewer entries than the completions waiting to be polled is EINVAL (ibv_resize_cq(3); rxe {@code rxe_cq_chk_attr}:
 * "cqe(%d) < current # elements in queue"; rdma-core tests/test_cq.py {@code test_resize_cq} expects EINVAL of every
 * device); where the profile follows {@link ProviderRule#CQ_RESIZE_CHECKS_ROUNDED_SIZE} (mlx4) the rounded size is
 * weighed, not the count asked for;</li>
 * <li>the new size is rounded as at creation ({@link CqDepth}: a power of two above the count, less one, on mlx5
 * {@code align_queue_size(cqe + 1)} and rxe {@code rxe_queue_resize}, which rounds {@code cqe + 1} up);
 * a rounded size equal to the current one changes nothing: on mlx5 before the count is checked
 * ({@code mlx5_resize_cq} returns 0 at once), on rxe after it ({@link ExtendedCqs#resizeToSameSizeAtOnce()});</li>
 * <li>otherwise the device gets a new ring, pinned as at creation, the completions move to it and the old ring is
 * released; a failed pin leaves the CQ as it was.</li>
 * </ul>
 * Stateless.
 */
final class CqResize
{
    private CqResize()
    {
    }

    static void resize(final SimCq cq, final int newCqe, final int outstanding)
    {
        final String verb = "ibv_resize_cq";
        final SimContext context = cq.context();
        final SimDevice device = context.device();
        if (cq.closedForResize())
        {
            throw Errors.invalid(verb, "the CQ is closed (ibv_destroy_cq released it); resize a live CQ");
        }
        final ExtendedCqs ext = ExtendedCqs.of(device.profile());
        if (!ext.resizeCq())
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, ext.driver() + "'s provider has no resize_cq (libibverbs "
                + "answers EOPNOTSUPP); create a CQ of the size needed instead");
        }
        final int maxCqe = device.profile().attributes().maxCqe();
        if (newCqe < 1 || newCqe > maxCqe)
        {
            throw Errors.invalid(verb, "cqe=" + newCqe + " must be 1..max_cqe=" + maxCqe + " (ibv_resize_cq(3)); ask "
                + (newCqe < 1 ? "for at least 1 entry" : "for at most max_cqe entries (ibv_query_device)")
                + "; nothing changed");
        }
        final int reported = CqDepth.reported(device.profile(), newCqe);
        if (reported == cq.cqe() && ext.resizeToSameSizeAtOnce())
        {
            return;
        }
        final boolean weighRounded = device.profile().follows(ProviderRule.CQ_RESIZE_CHECKS_ROUNDED_SIZE);
        if ((weighRounded ? reported : newCqe) < outstanding)
        {
            throw Errors.invalid(verb, "cqe=" + newCqe + (weighRounded ? " (rounded to " + reported + ")" : "")
                + " is fewer than the " + outstanding + " completions waiting to be polled (" + device.profile().driver()
                + ": " + device.profile().traits().verbs().cqResizeBelowQueued() + "); poll them first or keep a larger CQ; "
                + "nothing changed");
        }
        if (reported == cq.cqe())
        {
            return;
        }
        final ForkSafety fork = device.host().forkSafety(context.process());
        final long workBefore = fork.workNs(device.fabric().costModel());
        final Ring ring;
        try
        {
            ring = Ring.map(fork, CqDepth.ringEntries(reported) * SimContext.CQE_BYTES);
        }
        catch (final KernelException e)
        {
            throw Errors.of(verb, e);
        }
        finally
        {
            SimPd.madviseSpan(device, fork, workBefore, "MADV_DONTFORK (CQ ring)");
        }
        final Ring old = cq.ring();
        old.release();
        device.count(SimCounter.PINNED_BYTES, ring.lengthBytes() - old.lengthBytes());
        device.fabric().span(device, "resize_cq", "queue", device.fabric().costModel().queueCreateNs(ring.pages()),
            java.util.Map.of("cqe", reported, "ring_bytes", ring.lengthBytes()));
        cq.resized(reported, ring);
    }
}
