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
