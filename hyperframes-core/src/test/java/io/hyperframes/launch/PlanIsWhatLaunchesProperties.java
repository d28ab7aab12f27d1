package io.hyperframes.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.PlanRequests;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.plan.Candidate;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Planner;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The plan is what launches: for plans over models, clusters and engines (fixed or searched),
 * the layout parsed back from what {@code --emit} writes for the winning engine equals the
 * plan's best layout, and no candidate has an option its engine does not run.
 */
class PlanIsWhatLaunchesProperties {

  /** A plan request: model, accelerator, devices, global batch and the fixed layout fields. */
  record Ask(String model, String accelerator, int devices, int batch, String engine,
      Integer zeroStage, Integer pp) {

    String json() {
      StringBuilder layout = new StringBuilder();
      if (engine != null) {
        layout.append("\"engine\": \"").append(engine).append('"');
      }
      if (zeroStage != null) {
        layout.append(layout.length() > 0 ? ", " : "").append("\"zeroStage\": ").append(zeroStage);
      }
      if (pp != null) {
        layout.append(layout.length() > 0 ? ", " : "").append("\"pp\": ").append(pp);
      }
      return "{\"model\": {\"catalog\": \"" + model + "\"}, \"cluster\": {\"accelerator\": \""
          + accelerator + "\", \"devices\": " + devices + "}, \"workload\": {\"type\":"
          + " \"training\", \"precision\": \"bf16-mixed\", \"globalBatchSize\": " + batch
          + ", \"trainingTokens\": 1e10}" + (layout.length() > 0 ? ", \"layout\": {" + layout
              + "}" : "") + "}";
    }
  }

  @Provide
  Arbitrary<Ask> asks() {
    Arbitrary<String> models = Arbitraries.of("gpt3-1.3b", "gpt3-2.7b", "llama2-7b", "llama3-8b",
        "mistral-7b", "gpt3-13b", "qwen3-30b-a3b");
    Arbitrary<String> accelerators = Arbitraries.of("a100-sxm-80gb", "h100-sxm-80gb",
        "a100-sxm-40gb");
    Arbitrary<Integer> devices = Arbitraries.of(8, 16, 32);
    Arbitrary<Integer> batches = Arbitraries.of(64, 128, 256);
    Arbitrary<String> engines = Arbitraries.of("megatron", "deepspeed", "fsdp").injectNull(0.4);
    Arbitrary<Integer> zeros = Arbitraries.integers().between(0, 3).injectNull(0.7);
    Arbitrary<Integer> pps = Arbitraries.of(1, 2, 4).injectNull(0.7);
    return Combinators.combine(models, accelerators, devices, batches, engines, zeros, pps)
        .as(Ask::new)
        .filter(a -> a.engine() == null || Engine.fromId("e", a.engine()).unsupported(
            a.pp() == null ? 1 : a.pp(), 1, a.zeroStage() == null ? 0 : a.zeroStage(), 0, true)
            == null);
  }

  @Property(tries = 500)
  void theEmittedLaunchIsTheBestLayout(@ForAll("asks") Ask ask) {
    PlanRequest r = PlanRequests.parse(ask.json());
    Plan plan = Planner.analytical().plan(r);
    Layout best = plan.best().estimate().layout();
    // Law: no candidate has an option its engine does not run.
    List<Candidate> all = new ArrayList<>(plan.alternatives());
    all.add(plan.best());
    all.addAll(plan.scaling());
    for (Candidate c : all) {
      Layout l = c.estimate().layout();
      assertNull(l.engine().unsupported(l.pp(), l.virtualStages(), l.zeroStage(),
          l.shardGroupSize(), l.reshardAfterForward()), l.toString());
      assertTrue(r.engines().contains(l.engine()), l + " not among " + r.engines());
    }
    if (ask.engine() != null) {
      assertEquals(ask.engine(), best.engine().id());
    }
    Parsed launched = launched(plan, (TransformerSpec) r.model());
    assertEquals(best, launched.layout(), () -> "emitted for " + ask);
    assertEquals(plan.best().workload().globalBatchSize(), launched.globalBatch());
  }

  @Test
  void aTargetThatCannotLaunchTheWinningEngineIsRejectedNamingBoth() {
    Plan plan = Planner.analytical().plan(PlanRequests.parse(new Ask("llama2-7b",
        "h100-sxm-80gb", 16, 128, "fsdp", 3, null).json()));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Launch.emit(plan, Target.MEGATRON));
    assertTrue(e.getMessage().contains("fsdp") && e.getMessage().contains("megatron"),
        e.getMessage());
    IllegalArgumentException d = assertThrows(IllegalArgumentException.class,
        () -> Launch.emit(plan, Target.DEEPSPEED));
    assertTrue(d.getMessage().contains("layout.engine"), d.getMessage());
  }

  @Test
  void aFixedFieldTheEngineDoesNotRunIsRejectedNamingFieldValueAndEngine() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PlanRequests.parse(new Ask("llama2-7b", "h100-sxm-80gb", 16, 128, "megatron", 3, 2)
            .json()));
    assertTrue(e.getMessage().startsWith("layout.zeroStage: 3") && e.getMessage()
        .contains("megatron"), e.getMessage());
    IllegalArgumentException f = assertThrows(IllegalArgumentException.class,
        () -> PlanRequests.parse(new Ask("llama2-7b", "h100-sxm-80gb", 16, 128, "fsdp", 1, null)
            .json()));
    assertTrue(f.getMessage().startsWith("layout.zeroStage: 1") && f.getMessage()
        .contains("fsdp"), f.getMessage());
  }

  record Parsed(Layout layout, int globalBatch) {}

  /** The layout read back from what the winning engine's launch target writes. */
  static Parsed launched(Plan plan, TransformerSpec model) {
    Engine engine = plan.best().estimate().layout().engine();
    return switch (engine) {
      case MEGATRON -> megatron(Launch.emit(plan, Target.TORCHRUN), model);
      case DEEPSPEED -> deepspeed(plan);
      case FSDP -> fsdp(Launch.training(plan, Target.TORCHRUN, LaunchOptions.defaults()));
      case MAXTEXT -> throw new AssertionError("maxtext is never searched");
    };
  }

  /** A torchrun line of Megatron-LM's pretrain_gpt.py, read back. */
  static Parsed megatron(String text, TransformerSpec model) {
    int devices = intOf(text, "--nnodes=(\\d+)") * intOf(text, "--nproc-per-node=(\\d+)");
    int tp = intOf(text, "--tensor-model-parallel-size (\\d+)");
    int pp = intOf(text, "--pipeline-model-parallel-size (\\d+)");
    int cp = text.contains("--context-parallel-size")
        ? intOf(text, "--context-parallel-size (\\d+)") : 1;
    io.hyperframes.parallel.CpCommType cpType = text.contains("--cp-comm-type")
        ? io.hyperframes.parallel.CpCommType.fromId("--cp-comm-type",
            stringOf(text, "--cp-comm-type (\\S+)")) : io.hyperframes.parallel.CpCommType.P2P;
    int dp = devices / (tp * pp * cp);
    int v = text.contains("--num-layers-per-virtual-pipeline-stage")
        ? model.layers() / (pp * intOf(text, "--num-layers-per-virtual-pipeline-stage (\\d+)"))
        : 1;
    int zero = text.contains("--data-parallel-sharding-strategy optim_grads_params") ? 3
        : text.contains("--data-parallel-sharding-strategy optim_grads") ? 2
            : text.contains("--use-distributed-optimizer") ? 1 : 0;
    int group = text.contains("--num-distributed-optimizer-instances")
        ? dp / intOf(text, "--num-distributed-optimizer-instances (\\d+)") : 0;
    int ep = text.contains("--expert-model-parallel-size")
        ? intOf(text, "--expert-model-parallel-size (\\d+)") : 1;
    // Megatron-LM's default expert tensor-parallel size is the tensor-parallel size.
    int etp = text.contains("--expert-tensor-parallel-size")
        ? intOf(text, "--expert-tensor-parallel-size (\\d+)") : tp;
    // The dispatcher: the flex dispatcher with the DeepEP backend, else the all-to-all one; the
    // EP A2A overlap, which the planner tries where the request leaves it open.
    io.hyperframes.parallel.MoeDispatcher dispatcher =
        text.contains("--moe-flex-dispatcher-backend deepep")
            ? io.hyperframes.parallel.MoeDispatcher.DEEPEP
            : io.hyperframes.parallel.MoeDispatcher.ALL_TO_ALL;
    return new Parsed(new Layout(tp, pp, dp, v, intOf(text, "--micro-batch-size (\\d+)"),
        text.contains("--sequence-parallel"), recompute(text), zero, Engine.MEGATRON, group,
        true, ep, cp, cpType, etp).withMoeDispatcher(dispatcher)
            .withOverlapMoeComm(text.contains("--overlap-moe-expert-parallel-comm")
                && text.contains("--delay-wgrad-compute")),
        intOf(text, "--global-batch-size (\\d+)"));
  }

  /** DeepSpeed's configuration, and the Megatron-DeepSpeed arguments every manifest runs. */
  static Parsed deepspeed(Plan plan) {
    JsonNode c = Json.parseObject("deepspeed", Launch.emit(plan, Target.DEEPSPEED));
    TrainingJob job = TrainingJob.of(plan, (TransformerSpec) plan.request().model(),
        LaunchOptions.defaults());
    assertEquals(c.toPrettyString(), job.deepspeedConfig(), "the manifests carry the same config");
    String args = String.join(" ", job.engineArgs());
    int batch = c.get("train_batch_size").asInt();
    int mb = c.get("train_micro_batch_size_per_gpu").asInt();
    int dp = batch / (mb * c.get("gradient_accumulation_steps").asInt());
    assertTrue(!args.contains("--use-distributed-optimizer"),
        "DeepSpeed's ZeRO is its configuration's, not Megatron's: " + args);
    return new Parsed(new Layout(intOf(args, "--tensor-model-parallel-size (\\d+)"),
        intOf(args, "--pipeline-model-parallel-size (\\d+)"), dp, 1, mb,
        args.contains("--sequence-parallel"), recompute(args),
        c.get("zero_optimization").get("stage").asInt(), Engine.DEEPSPEED, 0, true), batch);
  }

  private static final Pattern FSDP = Pattern.compile("FSDP layout: tp=(\\d+) pp=(\\d+) dp=(\\d+)"
      + " microBatch=(\\d+) globalBatch=(\\d+) sequenceParallel=(\\w+) recompute=(\\w+)"
      + " zeroStage=(\\d+) shardGroupSize=(\\d+) reshardAfterForward=(\\w+)"
      + "(?: ep=(\\d+) moeDispatcher=(\\w+))?");

  /** The torchrun line of an FSDP script and the layout its note tells the script to set. */
  static Parsed fsdp(LaunchConfigs.Emitted e) {
    String note = String.join("\n", e.notes());
    Matcher m = FSDP.matcher(note);
    assertTrue(m.find(), note);
    Layout l = new Layout(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
        Integer.parseInt(m.group(3)), 1, Integer.parseInt(m.group(4)),
        Boolean.parseBoolean(m.group(6)), Recompute.fromId("recompute", m.group(7)),
        Integer.parseInt(m.group(8)), Engine.FSDP, Integer.parseInt(m.group(9)),
        Boolean.parseBoolean(m.group(10)));
    if (m.group(11) != null) {
      l = l.withExperts(Integer.parseInt(m.group(11)), 1)
          .withMoeDispatcher(io.hyperframes.parallel.MoeDispatcher.fromId("moeDispatcher",
              m.group(12)));
    }
    assertEquals(l.devices(), (long) intOf(e.text(), "--nnodes=(\\d+)")
        * intOf(e.text(), "--nproc-per-node=(\\d+)"), "torchrun starts every rank");
    return new Parsed(l, Integer.parseInt(m.group(5)));
  }

  private static Recompute recompute(String args) {
    return args.contains("--recompute-activations") ? Recompute.SELECTIVE
        : args.contains("--recompute-granularity full") ? Recompute.FULL : Recompute.NONE;
  }

  private static String stringOf(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertTrue(m.find(), () -> regex + " not in " + text);
    return m.group(1);
  }

  private static int intOf(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertTrue(m.find(), () -> regex + " not in " + text);
    return Integer.parseInt(m.group(1));
  }
}
