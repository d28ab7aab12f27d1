package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Mixtral 8x7B served on 8 H100 under a TTFT/TPOT SLO: the plan splits the experts over the
 * tensor-parallel ranks, docs/inference.md prints the plan, and the emitted vLLM deployment
 * enables expert parallelism.
 */
class ServingExpertParallelCliTest {

  private static final String REQUEST = Path.of("..", "examples",
      "serve-mixtral-8xh100-slo.json").toString();

  @Test
  void thePlanUsesExpertParallelismAndTheDocsPrintIt() throws IOException {
    CliTest.Result r = CliTest.run("plan", "--request", REQUEST);
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("best: 6 devices (tp 1 ep 2 × 6 replicas)")
        && r.out().contains("\n  alt: 8 devices (tp 4 ep 4 × 2 replicas)"), r.out());
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), r.out());
    // A pod per pair of replicas: the experts over both (docs/inference.md, docs/launch.md).
    CliTest.Result k = CliTest.run("plan", "--request", REQUEST, "--emit", "kubernetes");
    assertEquals(0, k.status(), k.err());
    assertTrue(k.out().contains("--tensor-parallel-size=1")
        && k.out().contains("--enable-expert-parallel")
        && k.out().contains("--data-parallel-size=2") && k.out().contains("replicas: 3"),
        k.out());
  }
}
