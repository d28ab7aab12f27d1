package io.hyperframes.plan;

import java.util.Locale;

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
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    switch (v) {
      case "time":
        return TIME;
      case "cost":
        return COST;
      case "throughput":
        return THROUGHPUT;
      case "devices":
      case "deadline":
        return DEVICES;
      default:
        throw new IllegalArgumentException(field + ": unknown objective '" + value
            + "' (expected time, cost, throughput or devices)");
    }
  }
}
