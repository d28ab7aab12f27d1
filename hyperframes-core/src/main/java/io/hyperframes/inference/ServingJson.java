package io.hyperframes.inference;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.hyperframes.diagnose.FindingDocument;
import io.hyperframes.hardware.StepInterval;
import java.util.List;

/**
 * The serving result documents of docs/user-guide.md ("Output"), as records written by Jackson:
 * one record per JSON object, one component per field, in the documented order ({@code capacity}
 * and {@code slo} are {@link CapacityEstimate} and {@link SloEstimate} themselves, the engine by
 * its id). Field names are
 * a contract read by other programs: add, never rename. Absent ({@code null}) fields are omitted.
 */
public final class ServingJson {
  private ServingJson() {}

  /** A serving estimate: configuration, memory, latency and findings. */
  public record Serving(boolean feasible, List<String> reasons, ServingLayout layout,
      double parameters, ServingMemory memory, Inference inference, CapacityEstimate capacity,
      SloEstimate slo, Disaggregated disaggregated, List<FindingDocument> findings) {

    /** The document of {@code result}. */
    public static Serving of(InferenceResult result) {
      InferenceEstimate e = result.estimate();
      return new Serving(e.feasible(), e.reasons(),
          new ServingLayout(e.tp(), e.ep(), e.pp(), e.replicas(),
              e.ep() > e.tp() ? e.twoBatchOverlap() : null,
              result.redundantExperts() > 0 ? result.redundantExperts() : null), e.parameters(),
          new ServingMemory(e.weightsBytes(), e.kvCacheBytes(), e.activationsBytes(),
              e.otherBytes(), e.totalBytes()),
          new Inference(e.prefillSeconds(), e.decodeSecondsPerToken(), e.ttftSeconds(),
              e.tpotSeconds(), e.totalSeconds(), e.outputTokensPerSecondPerDevice(),
              e.kvCacheBytesPerToken(), e.kvCacheBytesPerSequence(), e.maxBatchSize(),
              result.p50LatencySeconds(), result.p99LatencySeconds(), result.ttftP50Seconds(),
              result.ttftP99Seconds(), result.latencyModel(), result.capacityPerSecond(),
              result.devicesNeeded(), e.expertWeightBytesPerDecodeStep(),
              Speculation.of(e)),
          result.capacity(), result.slo(),
          Disaggregated.of(result.disaggregated()), FindingDocument.of(result.findings()));
    }

    Serving withMoreFindings(List<FindingDocument> more) {
      List<FindingDocument> all = new java.util.ArrayList<>(findings);
      all.addAll(more);
      return new Serving(feasible, reasons, layout, parameters, memory, inference, capacity,
          slo, disaggregated, all);
    }
  }

  /**
   * {@code disaggregated}: the prefill and decode pools ({@code layout.disaggregated}; absent
   * otherwise), {@link io.hyperframes.inference.DisaggregatedEstimate}.
   */
  public record Disaggregated(boolean feasible, List<String> reasons, PrefillPool prefill,
      DecodePool decode, double kvBytesPerRequest, double kvTransferSeconds,
      double kvTransferExposedSeconds, double ttftSeconds, double requestsPerSecond,
      double outputTokensPerSecond, double outputTokensPerSecondPerDevice, String limitedBy,
      Balanced balanced) {

    static Disaggregated of(io.hyperframes.inference.DisaggregatedEstimate d) {
      if (d == null) {
        return null;
      }
      var p = d.prefill();
      var q = d.decode();
      var pe = p.estimate();
      var qe = q.estimate();
      return new Disaggregated(d.feasible(), d.reasons(),
          new PrefillPool(pe.devices(), pe.tp(), pe.ep(), pe.replicas(),
              d.pools().prefill().twoBatchOverlap(), d.pools().prefill().redundantExperts(),
              p.batch(),
              p.batchLimitedBy(), pe.prefillSeconds(), p.periodSeconds(),
              p.inputTokensPerSecond(), p.inputTokensPerSecondPerDevice(),
              p.inputTokensPerSecondPerNode(), p.requestsPerSecond(), pe.weightsBytes(),
              pe.totalBytes()),
          new DecodePool(qe.devices(), qe.tp(), qe.ep(), qe.replicas(),
              d.pools().decode().twoBatchOverlap(), d.pools().decode().redundantExperts(),
              q.batch(),
              q.batchLimitedBy(), q.maxBatch(), q.tpotSeconds(), q.outputTokensPerSecond(),
              q.outputTokensPerSecondPerDevice(), q.outputTokensPerSecondPerNode(),
              q.requestsPerSecond(), qe.weightsBytes(), qe.totalBytes()),
          d.kvBytesPerRequest(), d.kvTransferSeconds(), d.kvTransferExposedSeconds(),
          d.ttftSeconds(), d.requestsPerSecond(), d.outputTokensPerSecond(),
          d.outputTokensPerSecondPerDevice(), d.limitedBy(),
          new Balanced(d.balanced().prefillReplicas(), d.balanced().decodeReplicas(),
              d.balanced().requestsPerSecond(), d.balanced().devices()));
    }
  }

  /** {@code disaggregated.prefill}: the prefill pool at its batch (bytes per device). */
  public record PrefillPool(int devices, int tp, int ep, int replicas, boolean twoBatchOverlap,
      int redundantExperts, int batchPerReplica,
      String batchLimitedBy, double prefillSeconds, double periodSeconds,
      double inputTokensPerSecond, double inputTokensPerSecondPerDevice,
      double inputTokensPerSecondPerNode, double requestsPerSecond, double weightsBytes,
      double totalBytes) {}

  /** {@code disaggregated.decode}: the decode pool at its batch (bytes per device). */
  public record DecodePool(int devices, int tp, int ep, int replicas, boolean twoBatchOverlap,
      int redundantExperts, int batchPerReplica,
      String batchLimitedBy, long maxBatchPerReplica, double tpotSeconds,
      double outputTokensPerSecond, double outputTokensPerSecondPerDevice,
      double outputTokensPerSecondPerNode, double requestsPerSecond, double weightsBytes,
      double totalBytes) {}

  /** {@code disaggregated.balanced}: the split of the same devices that sustains the most. */
  public record Balanced(int prefillReplicas, int decodeReplicas, double requestsPerSecond,
      int devices) {}

  /**
   * {@code layout} of a serving estimate ({@code ep}: the routed experts split over ep of the tp
   * ranks, or whole over ep/tp replicas where ep &gt; tp; {@code dp}: replicas;
   * {@code twoBatchOverlap}: only where ep &gt; tp; {@code redundantExperts}: copies of routed
   * experts beside them, only where there are some).
   */
  public record ServingLayout(int tp, int ep, int pp, int dp, Boolean twoBatchOverlap,
      Integer redundantExperts) {}

  /** {@code memory} of a serving estimate, bytes per device. */
  public record ServingMemory(double weightsBytes, double kvCacheBytes, double activationsBytes,
      double otherBytes, double totalBytes) {}

  /** {@code inference}: prefill, decode, percentiles under load, capacity, devices needed. */
  public record Inference(double prefillSeconds, double decodeSecondsPerToken, double ttftSeconds,
      double tpotSeconds, double totalSeconds, double outputTokensPerSecondPerDevice,
      double kvCacheBytesPerToken, double kvCacheBytesPerSequence, long maxBatchSize,
      double p50LatencySeconds, double p99LatencySeconds, double ttftP50Seconds,
      double ttftP99Seconds, String latencyModel, double capacityRequestsPerSecond,
      int devicesNeeded, double expertWeightBytesPerDecodeStep, Speculation speculative) {}

  /**
   * {@code inference.speculative}: the speculative decoding estimated (absent without it): the
   * draft, its tokens per step, the acceptance rate and the tokens a step yields on average.
   */
  public record Speculation(String method, int tokens, double acceptance, String draftModel,
      double tokensPerDecodeStep) {

    static Speculation of(io.hyperframes.inference.InferenceEstimate e) {
      io.hyperframes.inference.Speculative s = e.speculative();
      return s == null ? null : new Speculation(s.method().id(), s.tokens(), s.acceptance(),
          s.draft() == null ? null : s.draft().name(), e.tokensPerDecodeStep());
    }
  }

  /** One serving configuration of a serving plan. */
  public record ServingConfig(int tp, int ep, int replicas, int devices, String weights,
      String kvCache, int batchLimit, double usdPerMillionTokens, double p50LatencySeconds,
      double p99LatencySeconds, double ttftP99Seconds, boolean twoBatchOverlap,
      int redundantExperts, Integer pp) {

    /** The document of {@code c} ({@code pp} only where a replica has pipeline stages). */
    public static ServingConfig of(InferencePlanner.Config c) {
      return new ServingConfig(c.tp(), c.ep(), c.replicas(), c.devices(), c.weights().id(),
          c.kvCache().id(), c.batchLimit(), c.usdPerMillionTokens(), c.load().p50(),
          c.load().p99(), c.load().ttftP99(), c.twoBatchOverlap(), c.redundantExperts(),
          c.pp() > 1 ? c.pp() : null);
    }
  }

  /**
   * {@code pareto[]} of a serving plan: one point of the throughput-interactivity front, each
   * throughput with the ends of its interval (the plan's {@code interval}).
   */
  public record FrontPointDocument(int tp, int ep, String weights, String kvCache, int batch,
      double outputTokensPerSecondPerGpu, double outputTokensPerSecondPerGpuLow,
      double outputTokensPerSecondPerGpuHigh, double outputTokensPerSecondPerUser,
      double outputTokensPerSecondPerUserLow, double outputTokensPerSecondPerUserHigh,
      double ttftSeconds, double tpotSeconds, boolean meetsLatencyTargets,
      boolean twoBatchOverlap, int redundantExperts, Integer pp) {

    static FrontPointDocument of(InferencePlanner.FrontPoint p, InferencePlanner.ServingPlan in) {
      double gpu = p.tokensPerSecondPerGpu();
      double user = p.tokensPerSecondPerUser();
      return new FrontPointDocument(p.tp(), p.ep(), p.weights().id(), p.kvCache().id(),
          p.batch(), gpu, in.low(gpu), in.high(gpu), user, in.low(user), in.high(user),
          p.ttftSeconds(), p.tpotSeconds(), p.meetsLatencyTargets(), p.twoBatchOverlap(),
          p.redundantExperts(), p.pp() > 1 ? p.pp() : null);
    }
  }

  /**
   * A serving plan: the serving estimate of the best configuration (its findings followed by the
   * plan's), {@code best}, {@code alternatives}, {@code search}, {@code pareto} (the front of
   * output tokens per second per GPU against per user, over every configuration searched at
   * fixed batches, most interactive first, each throughput with its interval), {@code interval}
   * (the band of the front's throughputs: {@code low} and {@code high} factors of measured /
   * predicted time per token, the {@code cases} and {@code source} they rest on, the
   * {@code regime} they were looked up for), {@code bestDisaggregated} (the disaggregated
   * configuration with the fewest devices; absent when none meets the SLO) and {@code choice}
   * ("aggregated" or "disaggregated": what needs fewer devices). When no aggregated
   * configuration meets the SLO there is no estimate: {@code feasible} is false, {@code reasons}
   * says why and {@code findings} holds the plan's.
   */
  public record ServingPlanDocument(@JsonUnwrapped Serving estimate, Boolean feasible,
      List<String> reasons, ServingConfig best, List<ServingConfig> alternatives,
      List<FindingDocument> findings, ServingSearch search, List<FrontPointDocument> pareto,
      StepInterval interval, DisaggregatedConfigDocument bestDisaggregated, String choice) {

    /**
     * The document of {@code plan}, with {@code bestEstimate} the serving estimate of its best
     * configuration (null when there is none).
     */
    public static ServingPlanDocument of(InferencePlanner.ServingPlan plan,
        InferenceResult bestEstimate) {
      List<ServingConfig> alternatives =
          plan.alternatives().stream().map(ServingConfig::of).toList();
      ServingSearch search = new ServingSearch(plan.candidatesEvaluated());
      List<FrontPointDocument> pareto = plan.pareto().stream()
          .map(p -> FrontPointDocument.of(p, plan)).toList();
      List<FindingDocument> findings = FindingDocument.of(plan.findings());
      DisaggregatedConfigDocument apart = DisaggregatedConfigDocument.of(plan.disaggregated());
      if (plan.best() == null || bestEstimate == null) {
        // Where no replica fits memory, that is the reason, not the SLO.
        String none = plan.findings().stream()
            .filter(f -> f.id().equals(PipelineReplicas.NO_REPLICA_FITS)).map(io.hyperframes.diagnose.Finding::title).findFirst()
            .orElse("no configuration meets the SLO");
        return new ServingPlanDocument(null, false, List.of(apart == null ? none
            : "no aggregated configuration meets the SLO; bestDisaggregated does"), null,
            alternatives, findings, search, pareto, plan.interval(), apart, plan.choice());
      }
      return new ServingPlanDocument(Serving.of(bestEstimate).withMoreFindings(findings), null,
          null, ServingConfig.of(plan.best()), alternatives, null, search, pareto,
          plan.interval(), apart, plan.choice());
    }
  }

  /** {@code bestDisaggregated} of a serving plan ({@link InferencePlanner.DisaggregatedConfig}). */
  public record DisaggregatedConfigDocument(InferencePlanner.PoolConfig prefill,
      InferencePlanner.PoolConfig decode,
      String weights, String kvCache, int devices, double usdPerMillionTokens,
      double ttftSeconds, double tpotSeconds, boolean oneNode) {

    static DisaggregatedConfigDocument of(InferencePlanner.DisaggregatedConfig c) {
      return c == null ? null : new DisaggregatedConfigDocument(c.prefill(), c.decode(),
          c.weights().id(), c.kvCache().id(), c.devices(),
          c.usdPerMillionTokens(), c.ttftSeconds(), c.tpotSeconds(), c.oneNode());
    }
  }

  /** {@code search} of a serving plan. */
  public record ServingSearch(long candidatesEvaluated) {}
}
