package io.hyperframes.plan;

import io.hyperframes.json.Ids;
import java.util.Map;


/** What the planner optimises. */
public enum Objective {
  /** Shortest time to train (or highest tokens/s without a token budget). */
  TIME("time"),
  /** Lowest money for the token budget (device-hours × price + energy). */
  COST("cost"),
  /** Highest tokens per second. */
  THROUGHPUT("throughput"),
  /** Fewest devices that meet the deadline, then lowest cost. */
  DEVICES("devices");

  private final String id;

  Objective(String id) {
    this.id = id;
  }

  public String id() {
    return id;
  }

  /** The objective named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
  public static Objective fromId(String field, String value) {
    return Ids.byId(Objective.class, Objective::id, Map.of("deadline", DEVICES), field, value,
        "objective");
  }
}
