package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;

/**
 * The JSON objects of {@code hyperframes schedule --format json}, one per policy of each mode,
 * written beside the replays that produce them. Field names are a contract
 * (docs/user-guide.md, "schedule"); a figure that is not finite is written as null where the
 * guide says so.
 */
public final class ScheduleJson {
  private ScheduleJson() {}

  /** One placement policy of the allocation mode: its means over seeds and each seed's run. */
  public static ObjectNode allocation(AllocationSweep sweep) {
    checkArgument(sweep != null, "sweep: must be given");
    double[] at = sweep.allocationAtArrivals();
    ObjectNode o = Json.mapper().createObjectNode();
    o.put("policy", sweep.policy());
    o.put("allocationRatioMean", sweep.meanAllocationRatio());
    o.put("allocationRatioMedian", sweep.medianAllocationRatio());
    o.put("failedMean", sweep.failedMean());
    ArrayNode per = o.putArray("seeds");
    for (int i = 0; i < sweep.runs().size(); i++) {
      ScheduleResult r = sweep.runs().get(i);
      per.addObject().put("seed", r.seed()).put("allocationRatio", at[i] / 100)
          .put("finalAllocationRatio", r.allocationRatio()).put("arrivedRatio",
              r.arrivedRatio()).put("tasks", r.tasks()).put("placed", r.placed())
          .put("failed", r.failed());
    }
    return o;
  }

  /**
   * One placement policy of the time mode: the plan's job when there is one ({@code planJob},
   * else null), the training jobs' figures, fairness over {@code capacityGpus}, and each
   * service's.
   */
  public static ObjectNode time(TimeReplay.Run run, String policy, GpuJob planJob,
      double capacityGpus) {
    checkArgument(run != null && policy != null, "run and policy: must be given");
    ObjectNode po = Json.mapper().createObjectNode();
    Replay.Result r = run.training();
    if (planJob != null) {
      Replay.JobRecord rec = run.record(planJob);
      ObjectNode pn = po.putObject("plan").put("gpus", planJob.gpuMilli() / 1000)
          .put("members", planJob.members().size())
          .put("arrivalSeconds", planJob.arrivalSeconds())
          .put("durationSeconds", planJob.durationSeconds());
      if (Double.isNaN(rec.startSeconds())) {
        pn.putNull("startSeconds").putNull("finishSeconds").putNull("waitSeconds");
      } else {
        pn.put("startSeconds", rec.startSeconds()).put("finishSeconds", rec.finishSeconds())
            .put("waitSeconds", rec.queueingSeconds());
      }
    }
    po.put("policy", policy).put("meanJctSeconds", r.meanJctSeconds())
        .put("p50JctSeconds", r.jctPercentileSeconds(0.5))
        .put("p99JctSeconds", r.jctPercentileSeconds(0.99))
        .put("meanQueueingSeconds", run.meanQueueingSeconds())
        .put("utilisation", r.utilisation())
        .put("makespanSeconds", r.makespanSeconds()).put("unschedulable", r.unschedulable())
        .put("preemptions", r.preemptions()).put("failures", r.failures())
        .put("resizes", r.resizes())
        .put("fragmentation", run.cluster().fragmentation().meanShare());
    po.put("maxFinishTimeFairness", r.maxFinishTimeFairness(capacityGpus));
    if (!run.services().isEmpty()) {
      ArrayNode sv = po.putArray("services");
      for (ServingReplay.Result sr : run.services()) {
        ObjectNode so = sv.addObject().put("service", sr.service())
            .put("requests", sr.requests()).put("finished", sr.finished())
            .put("rejected", sr.rejected()).put("unfinished", sr.unfinished())
            .put("restarted", sr.restarted()).put("sloAttainment", sr.sloAttainment());
        Json.putFinite(so, "ttftP50Seconds", sr.ttftP50Seconds());
        Json.putFinite(so, "ttftP99Seconds", sr.ttftP99Seconds());
        Json.putFinite(so, "tpotP50Seconds", sr.tpotP50Seconds());
        Json.putFinite(so, "tpotP99Seconds", sr.tpotP99Seconds());
        so.put("replicaGpuHours", sr.replicaGpuHours()).put("meanReplicas",
            sr.meanReplicas());
      }
    }
    Json.putFinite(po, "jainFairness", r.jainFairness());
    return po;
  }

  /** One round policy of the goodput mode: its figures and each job's. */
  public static ObjectNode goodput(GoodputReplay.Result r) {
    checkArgument(r != null, "result: must be given");
    ObjectNode po = Json.mapper().createObjectNode().put("policy", r.policy())
        .put("meanJctSeconds", r.meanJctSeconds())
        .put("p50JctSeconds", r.jctPercentileSeconds(50))
        .put("p99JctSeconds", r.jctPercentileSeconds(99))
        .put("makespanSeconds", r.makespanSeconds()).put("utilisation", r.utilisation())
        .put("preemptions", r.preemptions()).put("restarts", r.restarts())
        .put("unschedulable", r.unschedulable());
    ArrayNode per = po.putArray("jobs");
    for (GoodputReplay.JobRecord j : r.jobs()) {
      ObjectNode jo = per.addObject().put("name", j.job().name())
          .put("application", j.job().application()).put("gpus", j.job().gpus())
          .put("arrivalSeconds", j.job().arrivalSeconds());
      if (Double.isNaN(j.finishSeconds())) {
        jo.putNull("startSeconds").putNull("finishSeconds").putNull("jctSeconds");
      } else {
        jo.put("startSeconds", j.startSeconds()).put("finishSeconds", j.finishSeconds())
            .put("jctSeconds", j.jctSeconds());
      }
      jo.put("restarts", j.restarts()).put("preemptions", j.preemptions())
          .put("gpuSeconds", j.gpuSeconds());
    }
    return po;
  }
}
