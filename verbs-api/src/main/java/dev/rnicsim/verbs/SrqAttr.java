package dev.rnicsim.verbs;

/**
 * The attributes of a shared receive queue ({@code struct ibv_srq_attr}).
 *
 * @param maxWr    receive work requests it holds, 1 to {@code max_srq_wr}.
 * @param maxSge   SGEs per receive work request, 1 to {@code max_srq_sge}.
 * @param srqLimit the limit below which the SRQ-limit event fires (0: off); at most maxWr.
 */
public record SrqAttr(int maxWr, int maxSge, int srqLimit)
{
}
