package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The allocation mode's sweep over seeds is one builder run per seed, summarised. */
class AllocationSweepTest {

  private static List<GpuPod> pods() {
    List<GpuPod> out = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      int gpus = i % 5 == 0 ? 2 : 1;
      int milli = gpus == 1 && i % 3 == 0 ? 500 : 1000;
      out.add(new GpuPod("p" + i, 0, 0, gpus, milli, Set.of(), i, i + 100));
    }
    return out;
  }

  @Test
  void eachSeedIsTheBuildersRunAndTheSummaryIsOverSeeds() {
    List<GpuNode> nodes = ScheduleBuilderTest.uniform(4, 4);
    List<GpuPod> pods = pods();
    Placement fgd = Placement.named("fgd", TargetWorkload.of(pods));
    List<Long> told = new ArrayList<>();
    AllocationSweep sweep = AllocationSweep.run(nodes, pods, fgd, 1.3, 5, 7, told::add);
    assertEquals(List.of(5L, 6L, 7L), told);
    assertEquals(130, sweep.column());
    assertEquals(3, sweep.runs().size());
    double sum = 0;
    double failed = 0;
    for (int i = 0; i < 3; i++) {
      ScheduleResult direct = Schedule.builder().nodes(nodes).pods(pods).placement(fgd)
          .inflate(1.3).seed(5 + i).run();
      assertEquals(direct.placed(), sweep.runs().get(i).placed());
      assertEquals(direct.allocationAtArrivals(130), sweep.allocationAtArrivals()[i]);
      sum += direct.allocationAtArrivals(130);
      failed += direct.failed();
    }
    assertEquals(sum / 300, sweep.meanAllocationRatio(), 1e-12);
    assertEquals(failed / 3, sweep.failedMean(), 1e-12);
    double[] at = sweep.allocationAtArrivals().clone();
    java.util.Arrays.sort(at);
    assertEquals(at[1] / 100, sweep.medianAllocationRatio(), 1e-12);
    ObjectNode json = ScheduleJson.allocation(sweep);
    assertEquals("fgd", json.get("policy").asText());
    assertEquals(3, json.get("seeds").size());
    assertEquals(sweep.meanAllocationRatio(), json.get("allocationRatioMean").asDouble());
    assertTrue(sweep.meanAllocationRatio() > 0.5, "fgd fills most of 16 GPUs at 130 %");
  }

  @Test
  void aReversedSeedRangeIsNamed() {
    String m = assertThrows(IllegalArgumentException.class, () -> AllocationSweep.run(
        ScheduleBuilderTest.uniform(1, 1), pods(), Placement.bestFit(), 1.3, 9, 8, s -> { }))
        .getMessage();
    assertTrue(m.startsWith("seeds: first 9 after last 8"), m);
  }
}
