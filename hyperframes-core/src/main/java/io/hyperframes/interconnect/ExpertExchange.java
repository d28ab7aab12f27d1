package io.hyperframes.interconnect;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

/**
 * One dispatch (or combine) of a mixture of experts' routed tokens, seen from one rank of an
 * expert-parallel group: the rank routes {@code tokens} tokens of {@code bytesPerToken} bytes,
 * each to {@code topK} of {@code experts} experts spread evenly over the group's ranks (ranks
 * {@code 0..E/ep−1} hold the first rank's experts, and so on; nodes hold consecutive ranks).
 *
 * <p>Routing is taken uniform: a token's k experts are k distinct experts drawn evenly (the
 * balance the auxiliary load-balancing loss aims at; Fedus et al. 2021, Switch Transformer, arXiv
 * 2101.03961, §2.2). A set of m experts then receives none of them with probability
 * {@code C(E − m, k) / C(E, k)} (sampling without replacement), from which the expected
 * destinations follow (linearity of expectation):
 * <ul>
 *   <li>ranks a token reaches, its own included: {@code ep · (1 − C(E − E/ep, k)/C(E, k))};
 *   <li>nodes it reaches, its own included: {@code N · (1 − C(E − E/N, k)/C(E, k))}, N = nodes
 *       the group spans.
 * </ul>
 *
 * @param tokens tokens the rank routes in this exchange
 * @param bytesPerToken bytes of one token's hidden state
 * @param experts routed experts E, divided evenly over the group
 * @param topK experts each token is routed to (k ≤ E)
 * @param group the expert-parallel ranks: {@code ep} in all, {@code perNode} in each node
 */
public record ExpertExchange(double tokens, double bytesPerToken, int experts, int topK,
    CollectiveGroup group) {

  public ExpertExchange {
    Checks.positive("exchange.tokens", tokens);
    Checks.positive("exchange.bytesPerToken", bytesPerToken);
    Checks.positive("exchange.experts", experts);
    checkArgument(topK >= 1 && topK <= experts, "exchange.topK: must be in [1, %s], got %s",
        experts, topK);
    checkArgument(group != null, "exchange.group: must be given");
    checkArgument(experts % group.size() == 0, "exchange.experts: %s is not divisible by the"
        + " %s ranks of the group", experts, group.size());
    checkArgument(group.size() % group.perNode() == 0, "exchange.group: %s ranks per node do"
        + " not divide %s", group.perNode(), group.size());
  }

  /**
   * Probability that {@code m} given experts of {@code experts} receive none of a token's
   * {@code topK} distinct picks: {@code C(E − m, k) / C(E, k) = Π_{i<k} (E − m − i)/(E − i)}.
   */
  static double missProbability(int experts, int topK, int m) {
    double p = 1.0;
    for (int i = 0; i < topK; i++) {
      if (experts - m - i <= 0) {
        return 0.0;
      }
      p *= (double) (experts - m - i) / (experts - i);
    }
    return p;
  }

  /** Probability that a given rank holds at least one of a token's experts. */
  public double rankHitProbability() {
    return 1.0 - missProbability(experts, topK, experts / group.size());
  }

  /** Probability that a given node holds at least one of a token's experts. */
  public double nodeHitProbability() {
    return 1.0 - missProbability(experts, topK, experts / group.nodes());
  }

  /** Expected ranks of the group a token reaches, its own included (at most min(k, ep)). */
  public double ranksPerToken() {
    return group.size() * rankHitProbability();
  }

  /** Expected nodes a token reaches, its own included. */
  public double nodesPerToken() {
    return group.nodes() * nodeHitProbability();
  }

  /**
   * Bytes the rank sends through its network interface when each token crosses once per other
   * node it is routed to (DeepEP): {@code tokens · (N − 1) · P(node hit) · bytesPerToken}.
   */
  public double forwardedNetworkBytes() {
    return tokens * (group.nodes() - 1) * nodeHitProbability() * bytesPerToken;
  }

  /**
   * Bytes the rank sends over the intra-node fabric when tokens are forwarded once per
   * destination rank (DeepEP): in every node a token reaches, the rank it lands on (itself in its
   * own node, the rank of its local index in another) passes it to the other destination ranks
   * there, {@code (g − 1) · P(rank hit)} of them on average; over the N nodes that is
   * {@code (ep − N) · P(rank hit)} copies per token, spread evenly over the ranks by symmetry.
   */
  public double forwardedLocalBytes() {
    return tokens * (group.size() - group.nodes()) * rankHitProbability() * bytesPerToken;
  }

  /** Bytes of one copy of every token per routed expert ({@code tokens · k · bytesPerToken}). */
  public double copyBytes() {
    return tokens * topK * bytesPerToken;
  }
}
