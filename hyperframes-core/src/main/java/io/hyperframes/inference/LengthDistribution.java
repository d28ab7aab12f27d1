package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * A distribution of request lengths in tokens (prompts or outputs): lengths with weights, the
 * weights normalised to sum to 1. A single length is the fixed workload's.
 *
 * @param bins lengths and their probabilities (at least one; each length ≥ 1)
 */
public record LengthDistribution(List<Bin> bins) {

  /** Longest length accepted, as for a fixed workload's prompt plus output. */
  static final int MAX_TOKENS = 1 << 24;

  /**
   * One length and its probability.
   *
   * @param tokens length in tokens
   * @param weight probability (normalised by the distribution)
   */
  public record Bin(int tokens, double weight) {}

  public LengthDistribution {
    checkArgument(bins != null && !bins.isEmpty(), "lengths: at least one (tokens, weight) must"
        + " be given");
    bins = ImmutableList.copyOf(bins);
  }

  /** A single length. */
  public static LengthDistribution of(int tokens) {
    return of("tokens", List.of(new Bin(tokens, 1.0)));
  }

  /**
   * The distribution of {@code bins}, the weights normalised; each bad length or weight is an
   * {@code IllegalArgumentException} naming {@code field}, its index and the value.
   */
  public static LengthDistribution of(String field, List<Bin> bins) {
    checkArgument(bins != null && !bins.isEmpty(), "%s: at least one (tokens, weight) must be"
        + " given", field);
    double total = 0;
    for (int i = 0; i < bins.size(); i++) {
      Bin b = bins.get(i);
      checkArgument(b != null, "%s[%s]: must be given", field, i);
      checkArgument(b.tokens() >= 1 && b.tokens() <= MAX_TOKENS, "%s[%s].tokens: must be in"
          + " [1, %s], got %s", field, i, MAX_TOKENS, b.tokens());
      checkArgument(Double.isFinite(b.weight()) && b.weight() >= 0, "%s[%s].weight: must be a"
          + " finite number >= 0, got %s", field, i, b.weight());
      total += b.weight();
    }
    checkArgument(total > 0, "%s: the weights sum to 0; at least one must be > 0", field);
    ImmutableList.Builder<Bin> out = ImmutableList.builder();
    for (Bin b : bins) {
      if (b.weight() > 0) {
        out.add(new Bin(b.tokens(), b.weight() / total));
      }
    }
    return new LengthDistribution(out.build());
  }

  /**
   * The distribution of observed lengths ({@code samples}, each in [1, 2^24]) summarised in at
   * most {@code groups} bins: the samples sorted and split into consecutive groups of equal
   * counts, each group a bin at its mean length rounded to a whole token and weighted by its
   * count, equal lengths merged. The longest sample is a bin of its own, since an engine refuses
   * by the longest prompt. The mean stays within half a token of the samples'.
   */
  public static LengthDistribution ofSamples(String field, int[] samples, int groups) {
    checkArgument(samples != null && samples.length > 0, "%s: no lengths to summarise", field);
    checkArgument(groups >= 2, "%s: groups must be >= 2, got %s", field, groups);
    int[] sorted = samples.clone();
    java.util.Arrays.sort(sorted);
    checkArgument(sorted[0] >= 1 && sorted[sorted.length - 1] <= MAX_TOKENS, "%s: every length"
        + " must be in [1, %s], got %s to %s", field, MAX_TOKENS, sorted[0],
        sorted[sorted.length - 1]);
    java.util.TreeMap<Integer, Double> merged = new java.util.TreeMap<>();
    int rest = sorted.length - 1;
    int k = Math.min(groups - 1, rest);
    for (int g = 0; g < k; g++) {
      int from = (int) ((long) rest * g / k);
      int to = (int) ((long) rest * (g + 1) / k);
      if (to > from) {
        double sum = 0;
        for (int i = from; i < to; i++) {
          sum += sorted[i];
        }
        merged.merge((int) Math.round(sum / (to - from)), (double) (to - from), Double::sum);
      }
    }
    merged.merge(sorted[rest], 1.0, Double::sum);
    List<Bin> bins = new java.util.ArrayList<>();
    merged.forEach((tokens, weight) -> bins.add(new Bin(tokens, weight)));
    return of(field, bins);
  }

  /** Mean length. */
  public double mean() {
    double m = 0;
    for (Bin b : bins) {
      m += b.weight() * b.tokens();
    }
    return m;
  }

  /** Mean of the squared length. */
  public double meanSquare() {
    double m = 0;
    for (Bin b : bins) {
      m += b.weight() * (double) b.tokens() * b.tokens();
    }
    return m;
  }

  /** Longest length. */
  public int max() {
    int m = 0;
    for (Bin b : bins) {
      m = Math.max(m, b.tokens());
    }
    return m;
  }

  /** Mean of {@code f(tokens)}. */
  double meanOf(java.util.function.IntToDoubleFunction f) {
    double m = 0;
    for (Bin b : bins) {
      m += b.weight() * f.applyAsDouble(b.tokens());
    }
    return m;
  }
}
