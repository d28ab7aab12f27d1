package io.hyperframes.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.hyperframes.inference.DecodeAttention;
import io.hyperframes.inference.ServingEngine;
import io.hyperframes.inference.Speculative;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.parallel.RecomputeModule;
import io.hyperframes.plan.Objective;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.Optimizer;
import java.util.Locale;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class IdsTest {

  /** Every constant is found by its id, in any case and with spaces around it. */
  private static <E extends Enum<E>> void roundTrips(Class<E> type, Function<E, String> id,
      BiFunction<String, String, E> fromId) {
    for (E e : type.getEnumConstants()) {
      assertSame(e, fromId.apply("f", id.apply(e)));
      assertSame(e, fromId.apply("f", " " + id.apply(e).toUpperCase(Locale.ROOT) + " "));
    }
  }

  @Test
  void everyEnumOfTheVocabularyRoundTripsItsIds() {
    roundTrips(NumberFormat.class, NumberFormat::id, NumberFormat::fromId);
    roundTrips(Optimizer.class, Optimizer::id, Optimizer::fromId);
    roundTrips(Objective.class, Objective::id, Objective::fromId);
    roundTrips(Engine.class, Engine::id, Engine::fromId);
    roundTrips(Recompute.class, Recompute::id, Recompute::fromId);
    roundTrips(RecomputeModule.class, RecomputeModule::id, RecomputeModule::fromId);
    roundTrips(Speculative.Method.class, Speculative.Method::id, Speculative.Method::fromId);
    roundTrips(DecodeAttention.class, DecodeAttention::id, DecodeAttention::fromId);
    roundTrips(ServingEngine.class, ServingEngine::id, ServingEngine::fromId);
  }

  private static <E extends Enum<E>> String ids(Class<E> type, Function<E, String> id) {
    return java.util.Arrays.stream(type.getEnumConstants()).map(id)
        .collect(java.util.stream.Collectors.joining(" "));
  }

  /**
   * The ids are derived from the constants' names ({@link Ids#lowerCase}, {@link Ids#hyphenated}):
   * they are the words requests, catalogs and command lines use, so a renamed constant must not
   * change them unseen.
   */
  @Test
  void theIdsAreTheRequestsWords() {
    assertEquals("fp64 fp32 tf32 fp16 bf16 fp8-e4m3 fp8-e5m2 int8 int4 nvfp4",
        ids(NumberFormat.class, NumberFormat::id));
    assertEquals("adam sgd adafactor", ids(Optimizer.class, Optimizer::id));
    assertEquals("time cost throughput devices", ids(Objective.class, Objective::id));
    assertEquals("megatron deepspeed fsdp maxtext", ids(Engine.class, Engine::id));
    assertEquals("none selective full", ids(Recompute.class, Recompute::id));
    assertEquals("core_attn layernorm mlp moe_act moe shared_experts mla_up_proj",
        ids(RecomputeModule.class, RecomputeModule::id));
    assertEquals("mtp eagle draft", ids(Speculative.Method.class, Speculative.Method::id));
    assertEquals("grouped per-head", ids(DecodeAttention.class, DecodeAttention::id));
    assertEquals("vllm sglang trtllm", ids(ServingEngine.class, ServingEngine::id));
    assertEquals("megatron deepspeed torchrun dockerfile kubernetes jobset vllm sglang trtllm"
        + " dynamo", ids(io.hyperframes.launch.Target.class, io.hyperframes.launch.Target::id));
  }

  @Test
  void aliasesResolveButAreNotListed() {
    assertSame(NumberFormat.FP8_E4M3, NumberFormat.fromId("f", "FP8"));
    assertSame(Optimizer.ADAM, Optimizer.fromId("f", "adamw"));
    assertSame(Objective.DEVICES, Objective.fromId("f", "deadline"));
    assertSame(ServingEngine.TRTLLM, ServingEngine.fromId("f", "TensorRT-LLM"));
    assertEquals("workload.engine: unknown serving engine 'tgi' (expected vllm, sglang or"
        + " trtllm)", assertThrows(IllegalArgumentException.class,
            () -> ServingEngine.fromId("workload.engine", "tgi")).getMessage());
  }

  @Test
  void anUnknownOrMissingValueNamesTheFieldTheValueAndTheIds() {
    assertEquals("training.optimizer: unknown optimizer 'lion' (expected adam, sgd or"
        + " adafactor)", assertThrows(IllegalArgumentException.class,
            () -> Optimizer.fromId("training.optimizer", "lion")).getMessage());
    assertEquals("layout.recompute: unknown recompute mode 'null' (expected none, selective or"
        + " full)", assertThrows(IllegalArgumentException.class,
            () -> Recompute.fromId("layout.recompute", null)).getMessage());
    assertEquals("a or b", Ids.listing(Two.class, Two::id));
    assertEquals("a", Ids.listing(One.class, One::id));
  }

  private enum Two {
    A, B;

    String id() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private enum One {
    A;

    String id() {
      return "a";
    }
  }
}
