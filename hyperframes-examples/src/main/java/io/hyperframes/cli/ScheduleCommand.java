package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.report.ScheduleReport;
import io.hyperframes.schedule.GoodputReplay;
import io.hyperframes.schedule.GpuJob;
import io.hyperframes.schedule.GpuNode;
import io.hyperframes.schedule.GpuPod;
import io.hyperframes.schedule.Placement;
import io.hyperframes.schedule.QueuePolicy;
import io.hyperframes.schedule.AllocationSweep;
import io.hyperframes.schedule.Replay;
import io.hyperframes.schedule.RoundPolicy;
import io.hyperframes.schedule.ScheduleJson;
import io.hyperframes.schedule.ServingReplay;
import io.hyperframes.schedule.TargetWorkload;
import io.hyperframes.schedule.TimeReplay;
import io.hyperframes.schedule.Traces;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes schedule}: replay a GPU cluster trace under placement policies. */
@Command(name = "schedule", mixinStandardHelpOptions = true,
    description = "Replay a GPU cluster trace under scheduling policies. --mode allocation"
        + " (default) and time replay an Alibaba openb task list on its node list under placement"
        + " policies (random, bestfit, fgd), as the simulator of Weng et al. (ATC'23) does;"
        + " --mode goodput replays training jobs whose progress follows measured throughput and"
        + " statistical efficiency (the Pollux artifact's workloads) under round policies"
        + " (tiresias, fifo) (docs/scheduling.md).")
final class ScheduleCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--trace", required = true, paramLabel = "FILE",
      description = "Task list (openb_pod_list_*.csv); in mode time also the Philly trace"
          + " (philly.csv, recognised by its header); in mode goodput a Pollux workload.")
  Path trace;

  @Option(names = "--cluster", paramLabel = "FILE",
      description = "Node list (openb_node_list_*.csv); modes allocation and time.")
  Path cluster;

  @Option(names = "--policy", split = ",",
      description = "Policies, comma-separated: random, bestfit, fgd (modes allocation and"
          + " time, default fgd); tiresias, fifo (mode goodput, default tiresias).")
  List<String> policies;

  @Option(names = "--applications", paramLabel = "FILE",
      description = "Mode goodput: the application index (docs/validation/pollux/"
          + "applications.json), with each application's tables in traces/NAME/ beside it.")
  Path applications;

  @Option(names = "--nodes", defaultValue = "16",
      description = "Modes goodput and time without --cluster: nodes of a uniform cluster"
          + " (default 16, the Pollux artifact's).")
  int nodeCount;

  @Option(names = "--gpus-per-node", defaultValue = "4",
      description = "Modes goodput (1-9) and time without --cluster (1-64): GPUs per node"
          + " (default 4).")
  int gpusPerNode;

  @Option(names = "--plan", paramLabel = "FILE",
      description = "Mode time: a plan request JSON (as plan --request); its best plan joins the"
          + " trace as one more job (its devices as a gang, its time to train as duration) and"
          + " the output says when it would start and finish.")
  Path plan;

  @Option(names = "--plan-at", defaultValue = "0", paramLabel = "SECONDS",
      description = "Mode time: submission time of the --plan job, seconds after the trace's"
          + " start (default 0).")
  double planAt;

  @Option(names = "--serve", paramLabel = "FILE",
      description = "Mode time: a serving request JSON (as serve --request: model, accelerator,"
          + " tp, pp, formats; workload.batchSize is the replica's batch limit): an inference"
          + " service whose replicas reserve whole GPUs beside the trace's jobs; needs"
          + " --requests.")
  Path serve;

  @Option(names = "--requests", paramLabel = "FILE",
      description = "Mode time with --serve: the service's requests, an Azure LLM inference"
          + " trace (TIMESTAMP,ContextTokens,GeneratedTokens).")
  Path requests;

  @Option(names = "--serve-at", defaultValue = "0", paramLabel = "SECONDS",
      description = "Mode time with --serve: when the request trace starts, seconds after the"
          + " job trace's start (default 0).")
  double serveAt;

  @Option(names = "--replicas", defaultValue = "1-8", paramLabel = "MIN-MAX",
      description = "Mode time with --serve: fewest and most replicas (default 1-8; N-N is a"
          + " fixed reservation).")
  String replicas;

  @Option(names = "--scale-window", defaultValue = "300", paramLabel = "SECONDS",
      description = "Mode time with --serve: autoscaling window (default 300 s).")
  double scaleWindow;

  @Option(names = "--target-load", defaultValue = "0.7", paramLabel = "SHARE",
      description = "Mode time with --serve: share of a replica's capacity the autoscaler plans"
          + " for, in (0, 1] (default 0.7).")
  double targetLoad;

  @Option(names = "--ttft-slo", paramLabel = "SECONDS",
      description = "Mode time with --serve: time-to-first-token target (default: the request's"
          + " workload.latencySlo.ttftSeconds).")
  Double ttftSlo;

  @Option(names = "--tpot-slo", paramLabel = "SECONDS",
      description = "Mode time with --serve: time-per-output-token target (default: the"
          + " request's workload.latencySlo.tpotSeconds).")
  Double tpotSlo;

  @Option(names = "--serve-share", defaultValue = "1000", paramLabel = "MILLI",
      description = "Mode time with --serve: thousandths of one GPU each replica holds (default"
          + " 1000, whole GPUs; less: a slice of one GPU with that share of its compute, memory"
          + " and bandwidth, for a replica with tp = pp = 1).")
  int serveShare;

  @Option(names = "--drain", defaultValue = "30", paramLabel = "SECONDS",
      description = "Mode time with --serve: how long a replica scaled down keeps finishing its"
          + " requests, taking no new ones (default 30 s, Kubernetes' termination grace"
          + " period).")
  double drain;

  @Option(names = "--serve-tier", defaultValue = "1", paramLabel = "N",
      description = "Mode time with --serve: priority tier of the replicas (training jobs are"
          + " 0; with --queue priority a higher tier preempts them; default 1).")
  int serveTier;

  @Option(names = "--elastic", description = "Modes goodput and time: every job may run on half"
      + " to twice its GPUs (goodput: at most its batch over the smallest measured per-GPU"
      + " batch; time: jobs of whole GPUs only, linear speed-up); use with --policy"
      + " elastic-fifo (goodput) or --queue elastic (time).")
  boolean elastic;

  @Option(names = "--interval", defaultValue = "60",
      description = "Mode goodput: scheduling interval in seconds (default 60).")
  int interval;

  @Option(names = "--inflate", defaultValue = "1.3",
      description = "Demand to reach as a multiple of GPU capacity (default 1.3).")
  double inflate;

  @Option(names = "--seeds", defaultValue = "42-51",
      description = "Seeds, FIRST-LAST or one (default 42-51, the published experiment's).")
  String seeds;

  private Format format = Format.table;

  @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT",
      description = "table (default), json, or html (modes time and goodput: a self-contained"
          + " report with GPUs allocated over time and the JCT distribution).")
  void format(Format f) {
    format = FormatOption.check(spec, f, Format.table, Format.json, Format.html);
  }

  @Option(names = "--mode", defaultValue = "allocation",
      description = "allocation (default: arrivals without departures, the GPU allocation"
          + " ratio), time (each task a job at its creation time for its trace duration,"
          + " queued; JCT, queueing delay, utilisation) or goodput (training jobs of a Pollux"
          + " workload, --trace workload-N.csv, progressing by measured goodput in rounds).")
  String mode;

  @Option(names = "--queue", defaultValue = "fifo",
      description = "Queueing policy of --mode time: fifo (default, strict), sjf (strict),"
          + " backfill (FIFO with EASY backfilling), priority (tiers with preemption), quotas"
          + " (per-tenant GPU quotas, --quota), elastic (FIFO; elastic jobs, --elastic, shrink"
          + " for the head and grow into idle GPUs).")
  String queue;

  @Option(names = "--quota", split = ",", paramLabel = "TENANT=GPUS",
      description = "With --queue quotas: GPU quota per tenant (the Philly trace's tenants are"
          + " its virtual clusters, column cluster).")
  List<String> quota;

  @Option(names = "--borrowing", description = "With --queue quotas: a tenant may borrow idle"
      + " GPUs beyond its quota, reclaimed by preemption when their owner needs them.")
  boolean borrowing;

  @Option(names = "--restart-seconds", defaultValue = "0",
      description = "Mode time: running time a preempted or failed job repeats on restart"
          + " (default 0).")
  double restartSeconds;

  @Option(names = "--node-mtbf-hours", paramLabel = "HOURS",
      description = "Mode time: mean time between failures of each node (exponential;"
          + " default: nodes never fail).")
  Double nodeMtbfHours;

  @Option(names = "--repair-hours", defaultValue = "1",
      description = "Mode time: hours a failed node stays down (default 1).")
  double repairHours;

  @Option(names = "--job-failure-probability", defaultValue = "0",
      description = "Mode time: chance that a run of a job fails on its own, in [0, 1)"
          + " (default 0).")
  double jobFailureProbability;

  @Override
  public Integer call() throws Exception {
    long[] range = seeds(seeds);
    if ((serve != null || requests != null) && !mode.equals("time")) {
      throw new IllegalArgumentException("--serve and --requests: only in --mode time, got"
          + " --mode " + mode);
    }
    if (mode.equals("goodput")) {
      return goodputReplay();
    }
    if (!mode.equals("allocation") && !mode.equals("time")) {
      throw new IllegalArgumentException("--mode: expected allocation, time or goodput, got "
          + mode);
    }
    if (policies == null) {
      policies = List.of("fgd");
    }
    if (mode.equals("time")) {
      return timeReplay(range[0]);
    }
    if (cluster == null) {
      throw new IllegalArgumentException("--cluster: the node list is required in mode "
          + mode);
    }
    if (format == Format.html) {
      throw new IllegalArgumentException("--format: mode allocation prints table or json; html"
          + " is for modes time and goodput, got " + format);
    }
    Traces.Read<GpuNode> nodes = Traces.openbNodes(cluster);
    Traces.Read<GpuPod> pods = Traces.openbPods(trace);
    TargetWorkload target = TargetWorkload.of(pods.items());
    ObjectNode root = Json.mapper().createObjectNode();
    root.put("nodes", nodes.items().size());
    root.put("tasks", pods.items().size());
    root.put("inflate", inflate);
    root.put("column", AllocationSweep.columnOf(inflate));
    ArrayNode out = root.putArray("policies");
    var err = spec.commandLine().getErr();
    for (String name : policies) {
      AllocationSweep sweep = AllocationSweep.run(nodes.items(), pods.items(),
          Placement.named(name, target), inflate, range[0], range[1], s -> {
            err.printf(Locale.ROOT, "schedule: %s seed %d done%n", name, s);
            err.flush();
          });
      out.add(ScheduleJson.allocation(sweep));
    }
    var o = spec.commandLine().getOut();
    if (format == Format.json) {
      o.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else {
      o.printf(Locale.ROOT, "%d nodes, %d tasks, demand inflated to %.0f %% of GPU capacity,"
          + " seeds %s%n", nodes.items().size(), pods.items().size(), 100 * inflate, seeds);
      o.printf(Locale.ROOT, "%-8s %18s %18s %12s%n", "policy", "GPU allocated, mean",
          "median", "failed tasks");
      for (var p : out) {
        o.printf(Locale.ROOT, "%-8s %17.2f%% %17.2f%% %12.0f%n", p.get("policy").asText(),
            100 * p.get("allocationRatioMean").asDouble(),
            100 * p.get("allocationRatioMedian").asDouble(), p.get("failedMean").asDouble());
      }
    }
    o.flush();
    return 0;
  }

  private int timeReplay(long seed) throws Exception {
    java.util.Map<String, Integer> quotaGpus = queue.equals("quotas") ? quotas() : null;
    cliName(() -> QueuePolicy.named(queue, quotaGpus, borrowing)); // the name, checked once
    if (quota != null && !queue.equals("quotas")) {
      throw new IllegalArgumentException("--quota: needs --queue quotas, got --queue " + queue);
    }
    Replay.Disruptions disruptions = disruptions();
    List<GpuNode> nodes = cluster != null ? Traces.openbNodes(cluster).items()
        : uniformNodes(64);
    TimeReplay.Workload workload = TimeReplay.read(trace, nodes);
    if (elastic) {
      workload = workload.elastic();
    }
    GpuJob planJob = planJob();
    if (planJob != null) {
      workload = workload.with(planJob);
    }
    List<ServingReplay.Load> services = services();
    TargetWorkload target = TargetWorkload.of(workload.pods());
    ObjectNode root = Json.mapper().createObjectNode();
    root.put("mode", "time");
    root.put("queue", queue);
    root.put("jobs", workload.jobs().size());
    root.put("trace", workload.philly() ? "philly" : "openb");
    ArrayNode out = root.putArray("policies");
    var err = spec.commandLine().getErr();
    List<ScheduleReport.Series> series = new ArrayList<>();
    double capacity = nodes.stream().mapToDouble(GpuNode::gpus).sum();
    for (String name : policies) {
      long t0 = System.nanoTime();
      Placement placement = Placement.named(name, target);
      TimeReplay.Run run = TimeReplay.run(nodes, workload.jobs(), services, placement,
          QueuePolicy.named(queue, quotaGpus, borrowing), disruptions, seed,
          new ProgressBar(err, name));
      err.printf(Locale.ROOT, "schedule: %s done in %.1f s%n", name,
          (System.nanoTime() - t0) / 1e9);
      err.flush();
      out.add(ScheduleJson.time(run, placement.name(), planJob, capacity));
      series.add(timeSeries(run, placement));
    }
    var o = spec.commandLine().getOut();
    if (format == Format.json) {
      o.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else if (format == Format.html) {
      o.print(ScheduleReport.render("HyperFrames schedule: " + trace.getFileName(),
          String.format(Locale.ROOT, "%d jobs at their trace times (%s), %d nodes, %.0f GPUs,"
              + " %s queue%s.", workload.jobs().size(), workload.philly() ? "Philly" : "openb",
              nodes.size(), capacity, queue, planJob == null ? "" : ", with the plan's job"),
          capacity, series));
    } else {
      printTime(o, out, workload.jobs().size());
    }
    o.flush();
    return 0;
  }

  /** A library call whose field names in errors become the command's option names. */
  private static <T> T cliName(java.util.function.Supplier<T> call) {
    try {
      return call.get();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--" + e.getMessage(), e);
    }
  }

  /** The uniform cluster of --nodes and --gpus-per-node (at most {@code maxGpus} a node). */
  private List<GpuNode> uniformNodes(int maxGpus) {
    if (nodeCount < 1 || nodeCount > 100_000) {
      throw new IllegalArgumentException("--nodes: must be in [1, 100000], got " + nodeCount);
    }
    if (gpusPerNode < 1 || gpusPerNode > maxGpus) {
      throw new IllegalArgumentException("--gpus-per-node: must be in [1, " + maxGpus
          + "], got " + gpusPerNode);
    }
    return GpuNode.uniform(nodeCount, gpusPerNode);
  }

  /** The failures and restart cost of --node-mtbf-hours, --repair-hours and the others. */
  private Replay.Disruptions disruptions() {
    if (nodeMtbfHours != null && !(nodeMtbfHours > 0)) {
      throw new IllegalArgumentException("--node-mtbf-hours: must be > 0, got "
          + nodeMtbfHours);
    }
    try {
      return new Replay.Disruptions(restartSeconds,
          nodeMtbfHours == null ? Double.POSITIVE_INFINITY : nodeMtbfHours * 3600,
          repairHours * 3600, jobFailureProbability);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage().replace("disruptions.restartSeconds",
          "--restart-seconds").replace("disruptions.repairSeconds", "--repair-hours")
          .replace("disruptions.jobFailureProbability", "--job-failure-probability"), e);
    }
  }

  /** The job of the --plan request's best plan, submitted at --plan-at; null without one. */
  private GpuJob planJob() {
    if (plan == null) {
      return null;
    }
    if (!(planAt >= 0) || Double.isInfinite(planAt)) {
      throw new IllegalArgumentException("--plan-at: must be finite and >= 0, got " + planAt);
    }
    String json;
    try {
      json = java.nio.file.Files.readString(plan);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("--plan: cannot read " + plan + ": "
          + e.getMessage());
    }
    return GpuJob.fromPlan(io.hyperframes.plan.Planner.analytical().plan(
        io.hyperframes.PlanRequests.parse(json)), "plan", planAt);
  }

  /** One placement policy's series of the HTML report. */
  private static ScheduleReport.Series timeSeries(TimeReplay.Run run, Placement placement) {
    Replay.Result r = run.training();
    var row = summary(r.meanJctSeconds(), r.jctPercentileSeconds(0.5),
        r.jctPercentileSeconds(0.99), r.makespanSeconds(), r.utilisation(),
        "mean wait (s)", String.format(Locale.ROOT, "%.0f", run.meanQueueingSeconds()));
    row.put("fragmentation", String.format(Locale.ROOT, "%.2f %%",
        100 * run.cluster().fragmentation().meanShare()));
    for (var sr : run.services()) {
      row.put("SLO attainment, " + sr.service(), String.format(Locale.ROOT, "%.2f %%",
          100 * sr.sloAttainment()));
    }
    return new ScheduleReport.Series(placement.name(), run.cluster().allocatedGpus(600),
        r.jobs().stream().filter(j -> !Double.isNaN(j.finishSeconds()))
            .mapToDouble(Replay.JobRecord::jctSeconds).toArray(), row);
  }

  /** The time replay as a table: policies, then services, then the plan's job. */
  private void printTime(java.io.PrintWriter o, ArrayNode out, int jobs) {
    o.printf(Locale.ROOT, "%d jobs at their trace times, queue %s%n", jobs, queue);
    o.printf(Locale.ROOT, "%-8s %14s %14s %14s %14s %11s %7s %7s %8s %8s %6s%n", "policy",
        "mean JCT (s)", "p50 JCT (s)", "p99 JCT (s)", "mean wait (s)", "GPU util.", "frag.",
        "never", "preempt.", "failures", "Jain");
    for (var p : out) {
      o.printf(Locale.ROOT, "%-8s %14.0f %14.0f %14.0f %14.0f %10.1f%% %6.1f%% %7d %8d %8d"
          + " %6s%n",
          p.get("policy").asText(), p.get("meanJctSeconds").asDouble(),
          p.get("p50JctSeconds").asDouble(), p.get("p99JctSeconds").asDouble(),
          p.get("meanQueueingSeconds").asDouble(), 100 * p.get("utilisation").asDouble(),
          100 * p.get("fragmentation").asDouble(),
          p.get("unschedulable").asInt(), p.get("preemptions").asInt(),
          p.get("failures").asInt(), p.get("jainFairness").isNull() ? "-"
              : String.format(Locale.ROOT, "%.3f", p.get("jainFairness").asDouble()));
    }
    for (var p : out) {
      var sv = p.get("services");
      if (sv == null) {
        continue;
      }
      for (var x : sv) {
        o.printf(Locale.ROOT, "%s: service %s: %.2f %% of %d requests within the targets;"
            + " TTFT p50 %.3g s, p99 %.3g s; TPOT p50 %.3g s, p99 %.3g s; %.2f replicas on"
            + " average, %.1f GPU-hours; %d unfinished, %d rejected, %d restarted%n",
            p.get("policy").asText(), x.get("service").asText(),
            100 * x.get("sloAttainment").asDouble(), x.get("requests").asInt(),
            x.get("ttftP50Seconds").asDouble(), x.get("ttftP99Seconds").asDouble(),
            x.get("tpotP50Seconds").asDouble(), x.get("tpotP99Seconds").asDouble(),
            x.get("meanReplicas").asDouble(), x.get("replicaGpuHours").asDouble(),
            x.get("unfinished").asInt(), x.get("rejected").asInt(),
            x.get("restarted").asInt());
      }
    }
    for (var p : out) {
      var pn = p.get("plan");
      if (pn == null) {
        continue;
      }
      if (pn.get("startSeconds").isNull()) {
        o.printf(Locale.ROOT, "%s: the plan's job (%d GPUs in %d members) never fits this"
            + " cluster%n", p.get("policy").asText(), pn.get("gpus").asInt(),
            pn.get("members").asInt());
      } else {
        o.printf(Locale.ROOT, "%s: the plan's job (%d GPUs, %.1f days) submitted at %.0f s"
            + " starts at %.0f s (waits %.2f days) and finishes at %.0f s (day %.1f)%n",
            p.get("policy").asText(), pn.get("gpus").asInt(),
            pn.get("durationSeconds").asDouble() / 86_400,
            pn.get("arrivalSeconds").asDouble(), pn.get("startSeconds").asDouble(),
            pn.get("waitSeconds").asDouble() / 86_400,
            pn.get("finishSeconds").asDouble(),
            pn.get("finishSeconds").asDouble() / 86_400);
      }
    }
  }

  /** The --serve service and its --requests, or none. */
  private List<ServingReplay.Load> services() {
    if (serve == null) {
      if (requests != null) {
        throw new IllegalArgumentException("--requests: needs --serve (the replica's serving"
            + " request)");
      }
      return List.of();
    }
    if (requests == null) {
      throw new IllegalArgumentException("--serve: needs --requests (an Azure LLM inference"
          + " trace)");
    }
    if (!(serveAt >= 0) || Double.isInfinite(serveAt)) {
      throw new IllegalArgumentException("--serve-at: must be finite and >= 0, got " + serveAt);
    }
    var m = java.util.regex.Pattern.compile("(\\d+)-(\\d+)").matcher(replicas.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException("--replicas: expected MIN-MAX (e.g. 1-8), got '"
          + replicas + "'");
    }
    String json;
    try {
      json = java.nio.file.Files.readString(serve);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("--serve: cannot read " + serve + ": "
          + e.getMessage());
    }
    var request = io.hyperframes.inference.Serving.parse(json,
        io.hyperframes.catalog.Catalog.builtIn());
    double ttft = ttftSlo != null ? ttftSlo : request.workload().ttftSloSeconds();
    double tpot = tpotSlo != null ? tpotSlo : request.workload().tpotSloSeconds();
    if (!(ttft > 0) || !(tpot > 0)) {
      throw new IllegalArgumentException("--ttft-slo and --tpot-slo: both targets are needed"
          + " (> 0; the request's workload.latencySlo gives ttftSeconds " + request.workload()
          .ttftSloSeconds() + ", tpotSeconds " + request.workload().tpotSloSeconds() + ")");
    }
    io.hyperframes.schedule.ReplicaModel replica;
    try {
      replica = io.hyperframes.schedule.ReplicaModel.fromServing(request,
          io.hyperframes.inference.InferenceEstimator.analytical(), serveShare);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage().replace("replica.gpuMilli",
          "--serve-share"), e);
    }
    String name = serve.getFileName().toString().replaceFirst("\\.json$", "");
    io.hyperframes.schedule.InferenceService service;
    try {
      service = new io.hyperframes.schedule.InferenceService(name, replica,
          Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), scaleWindow, targetLoad,
          ttft, tpot, "inference", serveTier, drain);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--replicas: too large, got '" + replicas + "'");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage().replace("service " + name + ".",
          "--").replace("--minReplicas", "--replicas (min)").replace("--maxReplicas",
          "--replicas (max)").replace("--windowSeconds", "--scale-window")
          .replace("--targetLoad", "--target-load").replace("--ttftSloSeconds", "--ttft-slo")
          .replace("--tpotSloSeconds", "--tpot-slo").replace("--drainSeconds", "--drain"), e);
    }
    var load = new ServingReplay.Load(service,
        Traces.azureLlm(requests).items());
    return List.of(serveAt > 0 ? load.startingAt(serveAt) : load);
  }

  private int goodputReplay() throws Exception {
    if (applications == null) {
      throw new IllegalArgumentException("--applications: the application index is required in"
          + " mode goodput (docs/validation/pollux/applications.json)");
    }
    List<GpuNode> nodes = uniformNodes(9);
    if (interval < 1) {
      throw new IllegalArgumentException("--interval: must be >= 1 second, got " + interval);
    }
    int[] cluster = nodes.stream().mapToInt(GpuNode::gpus).toArray();
    var apps = io.hyperframes.schedule.ApplicationProfile.readAll(applications);
    List<GoodputReplay.Job> jobs = Traces.polluxWorkload(trace).items();
    if (elastic) {
      jobs = GoodputReplay.elastic(jobs, apps);
    }
    ObjectNode root = Json.mapper().createObjectNode();
    root.put("mode", "goodput");
    root.put("jobs", jobs.size());
    root.put("nodes", nodeCount);
    root.put("gpusPerNode", gpusPerNode);
    root.put("intervalSeconds", interval);
    ArrayNode out = root.putArray("policies");
    var err = spec.commandLine().getErr();
    List<ScheduleReport.Series> series = new ArrayList<>();
    for (String name : policies == null ? List.of("tiresias") : policies) {
      cliName(() -> RoundPolicy.named(name));
      java.util.function.Supplier<RoundPolicy> policy = () -> RoundPolicy.named(name);
      GoodputReplay.Result r = GoodputReplay.run(cluster, jobs, apps, policy, interval,
          new ProgressBar(err, name));
      series.add(new ScheduleReport.Series(r.policy(),
          r.allocatedGpus(600), r.jobs().stream()
              .filter(j -> !Double.isNaN(j.finishSeconds()))
              .mapToDouble(GoodputReplay.JobRecord::jctSeconds).toArray(), summary(
                  r.meanJctSeconds(), r.jctPercentileSeconds(50), r.jctPercentileSeconds(99),
                  r.makespanSeconds(), r.utilisation(), "preemptions",
                  Integer.toString(r.preemptions()))));
      err.printf(Locale.ROOT, "schedule: %s done, %d rounds%n", name, r.rounds());
      err.flush();
      out.add(ScheduleJson.goodput(r));
    }
    var o = spec.commandLine().getOut();
    if (format == Format.json) {
      o.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else if (format == Format.html) {
      o.print(ScheduleReport.render("HyperFrames schedule: " + trace
          .getFileName(), String.format(Locale.ROOT, "%d training jobs on %d nodes x %d GPUs,"
          + " %d s scheduling rounds, progress by measured goodput (docs/scheduling.md).",
          jobs.size(), nodeCount, gpusPerNode, interval), (double) nodeCount * gpusPerNode,
          series));
    } else {
      o.printf(Locale.ROOT, "%d training jobs on %d nodes x %d GPUs, %d s rounds%n",
          jobs.size(), nodeCount, gpusPerNode, interval);
      o.printf(Locale.ROOT, "%-13s %14s %14s %14s %14s %11s %12s %9s%n", "policy",
          "mean JCT (s)", "p50 JCT (s)", "p99 JCT (s)", "makespan (s)", "GPU alloc.",
          "preemptions", "restarts");
      for (var p : out) {
        o.printf(Locale.ROOT, "%-13s %14.2f %14.0f %14.0f %14.0f %10.1f%% %12d %9d%n",
            p.get("policy").asText(), p.get("meanJctSeconds").asDouble(),
            p.get("p50JctSeconds").asDouble(), p.get("p99JctSeconds").asDouble(),
            p.get("makespanSeconds").asDouble(), 100 * p.get("utilisation").asDouble(),
            p.get("preemptions").asInt(), p.get("restarts").asInt());
      }
    }
    o.flush();
    return 0;
  }

  private java.util.Map<String, Integer> quotas() {
    if (quota == null || quota.isEmpty()) {
      throw new IllegalArgumentException("--quota: --queue quotas needs TENANT=GPUS,...");
    }
    java.util.Map<String, Integer> out = new java.util.LinkedHashMap<>();
    for (String q : quota) {
      String[] kv = q.split("=", 2);
      try {
        if (kv.length != 2 || kv[0].isBlank() || Integer.parseInt(kv[1].strip()) < 0) {
          throw new NumberFormatException();
        }
        out.put(kv[0].strip(), Integer.parseInt(kv[1].strip()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--quota: expected TENANT=GPUS with GPUS >= 0, got '"
            + q + "'");
      }
    }
    return out;
  }

  private static java.util.Map<String, String> summary(double mean, double p50, double p99,
      double makespan, double utilisation, String extraName, String extra) {
    java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
    m.put("mean JCT (s)", String.format(Locale.ROOT, "%.1f", mean));
    m.put("p50 JCT (s)", String.format(Locale.ROOT, "%.0f", p50));
    m.put("p99 JCT (s)", String.format(Locale.ROOT, "%.0f", p99));
    m.put("makespan (s)", String.format(Locale.ROOT, "%.0f", makespan));
    m.put("GPU utilisation", String.format(Locale.ROOT, "%.1f %%", 100 * utilisation));
    m.put(extraName, extra);
    return m;
  }

  private static long[] seeds(String text) {
    try {
      String[] parts = text.split("-", 2);
      long a = Long.parseLong(parts[0].strip());
      long b = parts.length == 2 ? Long.parseLong(parts[1].strip()) : a;
      if (b < a || b - a > 999) {
        throw new IllegalArgumentException("--seeds: FIRST-LAST with at most 1000 seeds, got "
            + text);
      }
      return new long[] {a, b};
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--seeds: FIRST-LAST or one number, got " + text);
    }
  }
}
