package io.hyperframes.plan;

import io.hyperframes.json.Ids;
import java.util.Map;


/** What the planner optimises. */
public enum Objective {
  /** Shortest time to train (or highest tokens/s without a token budget). */
  TIME,
  /** Lowest money for the token budget (device-hours × price + energy). */
  COST,
  /** Highest tokens per second. */
  THROUGHPUT,
  /** Fewest devices that meet the deadline, then lowest cost. */
  DEVICES;

  private final String id = Ids.lowerCase(this);

  public String id() {
    return id;
  }

  /** The objective named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
  public static Objective fromId(String field, String value) {
    return Ids.byId(Objective.class, Objective::id, Map.of("deadline", DEVICES), field, value,
        "objective");
  }
}
