package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A replica's continuous-batching server under Poisson arrivals whose iterations an engine's
 * scheduler builds ({@code workload.engine} in {@code workload.mode} slo; docs/inference.md,
 * "SLO mode"), a discrete-event simulation over the estimator's iteration times
 * ({@link InferenceEstimator#iterationSeconds}), the scheduler capacity mode follows in its
 * steady state ({@link Capacity}):
 * <ul>
 *   <li>vLLM and TensorRT-LLM mix: every iteration decodes one token of each running sequence
 *       and, within the token budget left by those decodes, prefills waiting prompts, oldest
 *       first; a prompt the budget cannot hold whole is split over iterations where the engine
 *       chunks prefill, and waits for an iteration with room otherwise. vLLM's scheduler
 *       schedules the running requests first and then the waiting ones within
 *       {@code max_num_batched_tokens} (vllm-project/vllm {@code vllm/v1/core/sched/scheduler.py});
 *       TensorRT-LLM's in-flight batching puts context requests beside generation requests within
 *       {@code max_num_tokens} (NVIDIA/TensorRT-LLM docs, "In-flight Batching").
 *   <li>SGLang alternates: an iteration prefills the waiting prompts the budget holds whenever
 *       there are any and room to run them, and decodes every running sequence otherwise.
 * </ul>
 * Each request draws its prompt and output length from the workload's distributions
 * (independently; the same draws at every rate), and an iteration's prompts are counted in mean
 * prompts of tokens.
 * A sequence holds one of the replica's places from its first prefill chunk to its last token;
 * the places are those capacity mode finds (the request limit or the KV cache at the engine's
 * memory fraction), and the full-load rate that brackets the SLO search is capacity mode's
 * throughput. A request's first token comes at the end of the iteration that completes its
 * prompt, each later one at the end of an iteration; the request path delays every first token
 * without occupying an iteration, as in {@link ServingLoad}.
 */
final class EngineLoad implements SimulatedServer {

  /** Most intervals of the table over the prompts one iteration prefills. */
  static final int PROMPT_GRID = 32;

  /** Mixed into the seed of the length draws, apart from the arrivals'. */
  private static final long LENGTH_SEED = 0x1e9;

  private final boolean mixed;
  private final boolean chunked;
  private final int limit;
  private final int budget;
  private final double unit;
  private final int[] promptLengths;
  private final double[] promptShares;
  private final int[] outputLengths;
  private final double[] outputShares;
  private final double requestSeconds;
  private final double capacityPerSecond;
  private final double step;
  private final int grid;
  private final double[][] table;

  /**
   * @param capacity capacity mode's estimate of the same request and scheduler (feasible)
   */
  EngineLoad(InferenceEstimator estimator, InferenceRequest r, CapacityWorkload c,
      CapacityEstimate capacity) {
    checkArgument(capacity.feasible(), "capacity: the replica holds no request: %s",
        capacity.reasons());
    TransformerSpec m = r.model();
    InferenceWorkload w = r.workload();
    Cluster replica = r.cluster().withDevices(r.tp());
    this.mixed = c.engine().mixesPrefillAndDecode();
    this.chunked = c.chunkedPrefill();
    this.limit = (int) Math.max(1, Math.floor(capacity.concurrency()));
    this.budget = c.maxNumTokens();
    this.unit = Math.max(1.0, c.prompt().meanOf(p -> p - w.cachedPromptTokens(p)));
    // Each length as the tokens it prefills: its prompt less what the prefix cache holds.
    this.promptLengths = c.prompt().bins().stream().mapToInt(b -> fresh(w, b.tokens()))
        .toArray();
    this.promptShares = shares(c.prompt());
    this.outputLengths = tokens(c.output());
    this.outputShares = shares(c.output());
    int longest = fresh(w, c.prompt().max());
    checkArgument(chunked || longest <= budget, "workload.maxNumTokens: the longest prompt (%s"
        + " tokens to prefill) exceeds the budget of %s and %s does not chunk prefill here",
        longest, budget, c.engine().id());
    this.capacityPerSecond = capacity.requestsPerSecond() / r.replicas();
    this.requestSeconds = estimator.estimate(m, replica, w.withBatchSize(1), r.tp(), r.ep(), 1,
        1).requestSeconds();
    double most = Math.min(budget, (double) limit * longest) / unit;
    if (most <= PROMPT_GRID) {
      this.grid = (int) Math.ceil(most);
      this.step = 1.0;
    } else {
      this.grid = PROMPT_GRID;
      this.step = most / PROMPT_GRID;
    }
    // Decoding sequences attend, on average, to their prompt and half their output (Capacity).
    double context = c.prompt().mean() + c.output().meanSquare() / (2 * c.output().mean());
    this.table = new double[limit + 1][grid + 1];
    for (int n = 0; n <= limit; n++) {
      for (int j = 0; j <= grid; j++) {
        // An iteration of prompts alone starts from one token's: it still reads the weights.
        double prompts = n == 0 && j == 0 ? 1.0 / unit : j * step;
        table[n][j] = estimator.iterationSeconds(m, replica, w, r.tp(), r.ep(), n, context,
            prompts, c.prompt());
      }
    }
  }

  @Override
  public int batchLimit() {
    return limit;
  }

  @Override
  public double capacityPerSecond() {
    return capacityPerSecond;
  }

  /** Tokens a request prefills: its prompt less what the prefix cache holds. */
  private static int fresh(InferenceWorkload w, int prompt) {
    return Math.max(1, prompt - w.cachedPromptTokens(prompt));
  }

  private static int[] tokens(LengthDistribution d) {
    return d.bins().stream().mapToInt(LengthDistribution.Bin::tokens).toArray();
  }

  /** The bins' cumulative shares, the last exactly 1. */
  private static double[] shares(LengthDistribution d) {
    double total = d.bins().stream().mapToDouble(LengthDistribution.Bin::weight).sum();
    double[] cumulative = new double[d.bins().size()];
    double sum = 0;
    for (int i = 0; i < cumulative.length; i++) {
      sum += d.bins().get(i).weight();
      cumulative[i] = sum / total;
    }
    cumulative[cumulative.length - 1] = 1.0;
    return cumulative;
  }

  private static int draw(int[] lengths, double[] shares, double u) {
    int i = 0;
    while (shares[i] < u) {
      i++;
    }
    return lengths[i];
  }

  /**
   * An iteration's seconds: {@code decodes} sequences and {@code prompts} mean prompts' tokens.
   */
  double iterationSeconds(int decodes, double prompts) {
    double x = Math.min(prompts / step, grid);
    int lo = (int) Math.min(Math.floor(x), grid - 1.0);
    double f = x - lo;
    return (1 - f) * table[decodes][lo] + f * table[decodes][lo + 1];
  }

  @Override
  public ServingLoad.Percentiles simulate(double rate, int requests, long seed) {
    checkArgument(rate > 0 && Double.isFinite(rate), "workload.arrivalRatePerSecond: must be"
        + " > 0, got %s", rate);
    checkArgument(requests >= 100, "requests: must be >= 100, got %s", requests);
    double[] arrival = ServingLoad.poissonArrivals(rate, requests, seed);
    // Each request's lengths, drawn apart from the arrivals: the same requests at every rate.
    java.util.SplittableRandom draws = new java.util.SplittableRandom(seed ^ LENGTH_SEED);
    int[] prompt = new int[requests];
    int[] output = new int[requests];
    for (int i = 0; i < requests; i++) {
      prompt[i] = draw(promptLengths, promptShares, draws.nextDouble());
      output[i] = draw(outputLengths, outputShares, draws.nextDouble());
    }
    double[] done = new double[requests];
    double[] first = new double[requests];
    int[] remaining = new int[requests];
    int[] prefilled = new int[requests];
    ArrayDeque<Integer> waiting = new ArrayDeque<>();
    List<Integer> running = new ArrayList<>();
    List<Integer> completed = new ArrayList<>();
    int partial = -1;
    int next = 0;
    int finished = 0;
    double now = 0;
    double runningArea = 0;
    while (finished < requests) {
      while (next < requests && arrival[next] <= now) {
        waiting.add(next++);
      }
      if (waiting.isEmpty() && running.isEmpty() && partial < 0) {
        now = arrival[next];
        continue;
      }
      int places = limit - running.size() - (partial >= 0 ? 1 : 0);
      boolean prefill = mixed || partial >= 0 || (!waiting.isEmpty() && places > 0);
      int decodes = mixed || !prefill ? running.size() : 0;
      int left = prefill ? Math.max(0, budget - decodes) : 0;
      int tokens = 0;
      completed.clear();
      if (partial >= 0 && left > 0) {
        int take = Math.min(left, prompt[partial] - prefilled[partial]);
        prefilled[partial] += take;
        left -= take;
        tokens += take;
        if (prefilled[partial] == prompt[partial]) {
          completed.add(partial);
          partial = -1;
        }
      }
      while (partial < 0 && places > 0 && left > 0 && !waiting.isEmpty()
          && (chunked || prompt[waiting.peek()] <= left)) {
        int r = waiting.poll();
        places--;
        int take = Math.min(left, prompt[r]);
        prefilled[r] = take;
        left -= take;
        tokens += take;
        if (take == prompt[r]) {
          completed.add(r);
        } else {
          partial = r;
        }
      }
      if (decodes == 0 && tokens == 0) {
        throw new IllegalStateException("scheduler: an iteration with nothing to run");
      }
      double d = iterationSeconds(decodes, tokens / unit);
      runningArea += running.size() * d;
      now += d;
      if (decodes > 0) {
        finished += ServingLoad.decodeStep(now, remaining, done, running);
      }
      for (int r : completed) {
        finished += ServingLoad.firstToken(r, output[r], now, first, remaining, done, running);
      }
    }
    return ServingLoad.percentiles(arrival, first, done, output, runningArea / now,
        requestSeconds);
  }
}
