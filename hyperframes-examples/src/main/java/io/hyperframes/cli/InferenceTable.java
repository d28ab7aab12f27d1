package io.hyperframes.cli;

import io.hyperframes.diagnose.Finding;
import io.hyperframes.inference.InferenceEstimate;
import io.hyperframes.inference.InferenceResult;
import java.util.Locale;

/** The readable table of an inference estimate. */
final class InferenceTable {
  private InferenceTable() {}

  static String render(InferenceResult r) {
    InferenceEstimate e = r.estimate();
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "HyperFrames inference estimate%s: tp=%d%s%s pp=%d"
        + " replicas=%d (%d devices)%n", r.disaggregated() != null ? " (disaggregated; memory"
            + " and TPOT: the decode pool)" : "", e.tp(), e.ep() > 1 ? " ep=" + e.ep() : "",
        r.redundantExperts() > 0 ? " redundantExperts=" + r.redundantExperts() : "",
        e.pp(), e.replicas(), e.devices()));
    b.append(String.format(Locale.ROOT, "feasible    %s%n", e.feasible() ? "yes" : "NO"));
    e.reasons().forEach(x -> b.append("  - ").append(x).append('\n'));
    b.append("memory per device\n");
    row(b, "weights", e.weightsBytes() / (1L << 30), "GiB");
    row(b, "KV cache", e.kvCacheBytes() / (1L << 30), "GiB");
    row(b, "activations", e.activationsBytes() / (1L << 30), "GiB");
    row(b, "other", e.otherBytes() / (1L << 30), "GiB");
    row(b, "total", e.totalBytes() / (1L << 30), "GiB");
    b.append("KV cache\n");
    row(b, "per token", e.kvCacheBytesPerToken() / 1024, "KiB (whole model)");
    row(b, "per sequence", e.kvCacheBytesPerSequence() / (1 << 20), "MiB (paged)");
    row(b, "max batch", e.maxBatchSize(), "sequences per replica");
    b.append("latency (unloaded)\n");
    row(b, "TTFT", e.ttftSeconds() * 1e3, String.format(Locale.ROOT,
        "ms (prefill %.4g ms + request path %.4g ms)", e.prefillSeconds() * 1e3,
        e.requestSeconds() * 1e3));
    row(b, "TPOT", e.tpotSeconds() * 1e3, "ms per output token");
    if (e.speculative() != null) {
      var s = e.speculative();
      row(b, "speculative", e.tokensPerDecodeStep(), String.format(Locale.ROOT,
          "tokens a step (%s, %d drafted, acceptance %.2f%s)", s.method().id(), s.tokens(),
          s.acceptance(), s.draft() == null ? "" : ", draft " + s.draft().name()));
    }
    row(b, "total", e.totalSeconds() * 1e3, "ms");
    row(b, "tokens/s/device", e.outputTokensPerSecondPerDevice(), "generated");
    if (r.devicesNeeded() > 0) {
      row(b, "devices needed", r.devicesNeeded(), "for the SLO");
    } else {
      // InferenceResult#devicesNeeded: 0 when no configuration it tries meets the SLO.
      b.append(String.format(Locale.ROOT, "  %-16s %12s %s%n", "devices needed", "none",
          "of the layouts tried meets the SLO (devicesNeeded 0)"));
    }
    capacity(b, r);
    slo(b, r);
    disaggregated(b, r);
    for (Finding f : r.findings()) {
      b.append(String.format(Locale.ROOT, "[%s] %s%n      %s; %s%n",
          f.severity().name().toLowerCase(Locale.ROOT), f.title(), f.evidence(), f.remedy()));
    }
    return b.toString();
  }

  /** Continuous batching at capacity ({@code workload.mode} capacity). */
  private static void capacity(StringBuilder b, InferenceResult r) {
    var c = r.capacity();
    if (c == null) {
      return;
    }
    b.append(String.format(Locale.ROOT, "at capacity (%s scheduler, max %s running, %d tokens"
        + " per iteration, memory fraction %.3f)%n", c.engine().id(),
        c.maxNumSeqs() == Integer.MAX_VALUE ? "unlimited" : String.valueOf(c.maxNumSeqs()),
        c.maxNumTokens(), c.memoryFraction()));
    if (!c.feasible()) {
      c.reasons().forEach(x -> b.append("  - ").append(x).append('\n'));
    } else {
      row(b, "output tokens/s", c.outputTokensPerSecond(), String.format(Locale.ROOT,
          "all replicas (%.4g per device)", c.outputTokensPerSecondPerDevice()));
      row(b, "requests/s", c.requestsPerSecond(), String.format(Locale.ROOT,
          "prompts %.4g, outputs %.4g tokens on average", c.meanPromptTokens(),
          c.meanOutputTokens()));
      row(b, "running", c.concurrency(), "requests per replica, limited by " + c.limitedBy());
      row(b, "KV cache", c.kvCacheTokens(), "tokens per replica");
      row(b, "iteration", c.iterationSeconds() * 1e3, String.format(Locale.ROOT,
          "ms (%.4g decodes, %.4g prefill tokens)", c.decodesPerIteration(),
          c.prefillTokensPerIteration()));
      row(b, "TPOT", c.tpotSeconds() * 1e3, "ms at capacity");
      row(b, "TTFT", c.ttftSeconds() * 1e3, "ms once admitted (the queue comes on top)");
    }
  }

  /** The highest load that meets the latency targets ({@code workload.mode} slo). */
  private static void slo(StringBuilder b, InferenceResult r) {
    var slo = r.slo();
    if (slo == null) {
      return;
    }
    b.append(String.format(Locale.ROOT, "under the SLO (TTFT p%s %s, TPOT %s%s; %d requests"
        + " simulated a rate, %d rates%s)%n", trim(slo.percentile()),
        slo.ttftSloSeconds() > 0 ? trim(slo.ttftSloSeconds() * 1e3) + " ms" : "none",
        slo.tpotPercentile() > 0 ? "p" + trim(slo.tpotPercentile()) + " " : "",
        slo.tpotSloSeconds() > 0 ? trim(slo.tpotSloSeconds() * 1e3) + " ms" : "none",
        slo.simulatedRequests(), slo.ratesTried(), slo.scheduler().equals("prefill-first") ? ""
            : ", " + slo.scheduler() + "'s scheduler"));
    if (!slo.feasible()) {
      slo.reasons().forEach(x -> b.append("  - ").append(x).append('\n'));
    } else {
      row(b, "requests/s", slo.requestsPerSecond(), String.format(Locale.ROOT,
          "all replicas, %.1f %% of capacity (%.4g), limited by %s",
          100 * slo.shareOfCapacity(), slo.capacityRequestsPerSecond(), slo.limitedBy()));
      row(b, "output tokens/s", slo.outputTokensPerSecond(), String.format(Locale.ROOT,
          "all replicas (%.4g per device)", slo.outputTokensPerSecondPerDevice()));
      row(b, "TTFT", slo.ttftSeconds() * 1e3, "ms at p" + trim(slo.percentile()));
      row(b, "TPOT", slo.tpotSeconds() * 1e3, slo.tpotPercentile() > 0
          ? "ms at p" + trim(slo.tpotPercentile()) + " of requests" : "ms (median request)");
      row(b, "latency p50", slo.p50LatencySeconds() * 1e3, "ms");
      row(b, "latency p99", slo.p99LatencySeconds() * 1e3, "ms");
      row(b, "batch limit", slo.batchLimit(), "sequences a replica (workload.maxNumSeqs, KV"
          + " cache)");
    }
  }

  /** Prefill and decode pools apart ({@code layout.disaggregated}). */
  private static void disaggregated(StringBuilder b, InferenceResult r) {
    var d = r.disaggregated();
    if (d == null) {
      return;
    }
    var p = d.prefill();
    var q = d.decode();
    b.append(String.format(Locale.ROOT, "disaggregated (prefill: %s; decode: %s)%n",
        pool(d.pools().prefill()), pool(d.pools().decode())));
    d.reasons().forEach(x -> b.append("  - ").append(x).append('\n'));
    row(b, "prefill", p.inputTokensPerSecond(), String.format(Locale.ROOT, "input tokens/s"
        + " (%.4g per device, %.4g per node); %d prompts a replica (%s), %.4g ms a batch",
        p.inputTokensPerSecondPerDevice(), p.inputTokensPerSecondPerNode(), p.batch(),
        p.batchLimitedBy(), p.estimate().prefillSeconds() * 1e3));
    row(b, "decode", q.outputTokensPerSecond(), String.format(Locale.ROOT, "output tokens/s"
        + " (%.4g per device, %.4g per node); %d sequences a replica (%s, at most %d), TPOT"
        + " %.4g ms", q.outputTokensPerSecondPerDevice(), q.outputTokensPerSecondPerNode(),
        q.batch(), q.batchLimitedBy(), q.maxBatch(), q.tpotSeconds() * 1e3));
    row(b, "KV transfer", d.kvTransferSeconds() * 1e3, String.format(Locale.ROOT, "ms a"
        + " prefill batch (%.4g MiB a request; %.4g ms exposed)",
        d.kvBytesPerRequest() / (1 << 20), d.kvTransferExposedSeconds() * 1e3));
    row(b, "TTFT", d.ttftSeconds() * 1e3, "ms without queueing");
    row(b, "requests/s", d.requestsPerSecond(), String.format(Locale.ROOT, "the pair, limited"
        + " by %s (prefill %.4g, decode %.4g)", d.limitedBy(), p.requestsPerSecond(),
        q.requestsPerSecond()));
    row(b, "output tokens/s", d.outputTokensPerSecond(), String.format(Locale.ROOT,
        "(%.4g per device)", d.outputTokensPerSecondPerDevice()));
    var bal = d.balanced();
    row(b, "balanced", bal.requestsPerSecond(), String.format(Locale.ROOT, "requests/s with"
        + " %d prefill and %d decode replicas (%d devices)", bal.prefillReplicas(),
        bal.decodeReplicas(), bal.devices()));
  }

  private static String pool(io.hyperframes.inference.Disaggregation.Pool p) {
    return String.format(Locale.ROOT, "%d devices, tp %d, ep %d, %d replicas%s%s", p.devices(),
        p.tp(), p.ep(), p.replicas(), p.twoBatchOverlap() ? ", two-batch overlap" : "",
        p.redundantExperts() > 0 ? ", " + p.redundantExperts() + " redundant experts" : "");
  }

  private static String trim(double v) {
    return v == Math.rint(v) ? String.valueOf((long) v) : String.format(Locale.ROOT, "%.4g", v);
  }

  private static void row(StringBuilder b, String name, double value, String unit) {
    b.append(String.format(Locale.ROOT, "  %-16s %12.4g %s%n", name, value, unit));
  }
}
