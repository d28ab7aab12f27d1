package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The throughput-interactivity front of a serving plan ({@link InferencePlanner#paretoFront}):
 * every point searched is matched or beaten on both axes by a point of the front, no point of
 * the front is beaten by any point searched, and along the front tokens per user fall while
 * tokens per GPU rise.
 */
class ParetoFrontProperties {

  @Property(tries = 1000)
  void theFrontCoversEveryPointAndNoPointBeatsIt(
      @ForAll @Size(max = 60) List<@IntRange(min = 1, max = 40) Integer> users,
      @ForAll @Size(max = 60) List<@IntRange(min = 1, max = 40) Integer> gpus) {
    List<InferencePlanner.FrontPoint> points = new ArrayList<>();
    for (int i = 0; i < Math.min(users.size(), gpus.size()); i++) {
      // Small integer values, so that ties on one axis or both are frequent.
      points.add(new InferencePlanner.FrontPoint(1, 1, NumberFormat.FP16, NumberFormat.FP16, i,
          gpus.get(i), users.get(i), 0.1, 1.0 / users.get(i), true, false, 0));
    }
    List<InferencePlanner.FrontPoint> front = InferencePlanner.paretoFront(points);
    assertTrue(points.isEmpty() == front.isEmpty(), "a front exists where points do");
    for (InferencePlanner.FrontPoint p : points) {
      assertTrue(front.stream().anyMatch(q -> q.tokensPerSecondPerUser()
          >= p.tokensPerSecondPerUser() && q.tokensPerSecondPerGpu() >= p.tokensPerSecondPerGpu()),
          () -> p + " is above the front " + front);
      for (InferencePlanner.FrontPoint q : front) {
        boolean beats = p.tokensPerSecondPerUser() >= q.tokensPerSecondPerUser()
            && p.tokensPerSecondPerGpu() >= q.tokensPerSecondPerGpu()
            && (p.tokensPerSecondPerUser() > q.tokensPerSecondPerUser()
                || p.tokensPerSecondPerGpu() > q.tokensPerSecondPerGpu());
        assertTrue(!beats, () -> p + " beats " + q + " of the front");
      }
    }
    for (int i = 1; i < front.size(); i++) {
      assertTrue(front.get(i).tokensPerSecondPerUser() < front.get(i - 1).tokensPerSecondPerUser()
          && front.get(i).tokensPerSecondPerGpu() > front.get(i - 1).tokensPerSecondPerGpu(),
          front::toString);
    }
  }
}
