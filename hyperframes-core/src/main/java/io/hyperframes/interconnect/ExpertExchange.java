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
 * <p>Group-limited routing ({@code groups} G of {@code m = E/G} consecutive experts, a token's
 * experts from {@code groupTopK} g of them; DeepSeek-V3 §2.1.2, Megatron-Core's
 * {@code group_limited_topk}) ranks the groups by the sum of their top {@code k/g} scores, so by
 * symmetry the chosen groups are g of the G drawn evenly, and each chosen group holds at least one
 * of the token's experts and {@code k/g} of them on average, drawn evenly within it. A node or
 * rank holding f whole groups is then missed with probability {@code C(G − f, g) / C(G, g)}; one
 * holding o experts of a group, with probability {@code 1 − (g/G)·(1 − C(m − o, k/g)/C(m, k/g))}
 * for that group (independently across the at most two groups it shares). Megatron-Core's
 * routing under random scores reaches 3.95 of its 4 groups where this says 4
 * ({@code ExpertExchangeTest}).
 *
 * @param tokens tokens the rank routes in this exchange
 * @param bytesPerToken bytes of one token's hidden state
 * @param experts routed experts E, divided evenly over the group
 * @param topK experts each token is routed to (k ≤ E)
 * @param group the expert-parallel ranks: {@code ep} in all, {@code perNode} in each node
 * @param groups expert groups of the router (1: no grouping)
 * @param groupTopK groups a token's experts come from ({@code groups} or 1 when not limited)
 */
public record ExpertExchange(double tokens, double bytesPerToken, int experts, int topK,
    CollectiveGroup group, int groups, int groupTopK) {

  /** An exchange without group-limited routing. */
  public ExpertExchange(double tokens, double bytesPerToken, int experts, int topK,
      CollectiveGroup group) {
    this(tokens, bytesPerToken, experts, topK, group, 1, 1);
  }

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
    checkArgument(groups >= 1 && experts % groups == 0, "exchange.groups: %s does not divide the"
        + " %s experts", groups, experts);
    checkArgument(groupTopK >= 1 && groupTopK <= groups
        && (groupTopK == groups || groupTopK <= topK),
        "exchange.groupTopK: must be in [1, min(groups %s, topK %s)], got %s", groups, topK,
        groupTopK);
  }

  /** Whether a token's experts come from fewer groups than there are. */
  private boolean limited() {
    return groupTopK < groups;
  }

  /**
   * Probability that a unit of {@code size} consecutive experts (a rank's or a node's) holds at
   * least one of a token's experts, averaged over the units.
   */
  private double hitProbability(int size) {
    if (!limited()) {
      return 1.0 - missProbability(experts, topK, size);
    }
    int m = experts / groups;
    if (size % m == 0 || m % size == 0) {
      // Every unit is placed alike against the groups.
      return 1.0 - limitedMiss(0, size);
    }
    double sum = 0.0;
    int units = experts / size;
    for (int u = 0; u < units; u++) {
      sum += 1.0 - limitedMiss(u * size, size);
    }
    return sum / units;
  }

  /** Probability that experts {@code [start, start + size)} get none of a token's picks. */
  private double limitedMiss(int start, int size) {
    int m = experts / groups;
    double perGroup = (double) topK / groupTopK;
    int whole = 0;
    double miss = 1.0;
    int end = start + size;
    for (int g = start / m; g * m < end; g++) {
      int overlap = Math.min(end, (g + 1) * m) - Math.max(start, g * m);
      if (overlap == m) {
        whole++;
      } else {
        double inGroup = 1.0 - interpolatedMiss(m, perGroup, overlap);
        miss *= 1.0 - (double) groupTopK / groups * inGroup;
      }
    }
    return miss * missProbability(groups, groupTopK, whole);
  }

  /** {@link #missProbability} at a fractional number of picks, linear between the integers. */
  private static double interpolatedMiss(int experts, double picks, int m) {
    int lo = (int) Math.floor(picks);
    double w = picks - lo;
    double low = missProbability(experts, lo, m);
    return w == 0.0 ? low : (1 - w) * low + w * missProbability(experts, lo + 1, m);
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
    return hitProbability(experts / group.size());
  }

  /** Probability that a given node holds at least one of a token's experts. */
  public double nodeHitProbability() {
    return hitProbability(experts / group.nodes());
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
