package io.hyperframes.plan;

import io.hyperframes.parallel.Recompute;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Provide;

/**
 * The layout degrees the planner's properties draw from, shared by the property classes that
 * implement this interface ({@code @ForAll("tps")} and so on find the providers here): catalog
 * models dense and mixture-of-experts, tensor- and pipeline-parallel degrees, a small exponent
 * for the degrees given as powers of two, ZeRO stages and recomputation policies.
 */
interface LayoutArbitraries {

  @Provide
  default Arbitrary<String> models() {
    return Arbitraries.of("llama3-8b", "gpt3-175b", "mixtral-8x7b", "qwen3-30b-a3b",
        "deepseek-v3", "gpt-oss-120b");
  }

  @Provide
  default Arbitrary<Integer> tps() {
    return Arbitraries.of(1, 2, 4, 8);
  }

  @Provide
  default Arbitrary<Integer> pps() {
    return Arbitraries.of(1, 2, 4);
  }

  /** 0, 1 or 2: an exponent of two, or a pick among three. */
  @Provide
  default Arbitrary<Integer> small() {
    return Arbitraries.of(0, 1, 2);
  }

  /** ZeRO stages 0 to 3. */
  @Provide
  default Arbitrary<Integer> zeros() {
    return Arbitraries.of(0, 1, 2, 3);
  }

  /** No, selective and full recomputation. */
  @Provide
  default Arbitrary<Recompute> recomputes() {
    return Arbitraries.of(Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL);
  }
}
