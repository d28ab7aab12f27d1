package io.hyperframes.hardware;

/** Argument checks that name the field and the value; shared by the value types of core. */
public final class Checks {
  private Checks() {}

  /** Rejects NaN, infinities, and values above 1e300 that would overflow products. */
  public static double finite(String field, double value) {
    if (!Double.isFinite(value) || Math.abs(value) > 1e300) {
      throw new IllegalArgumentException(field + ": must be a finite number, got " + value);
    }
    return value;
  }

  public static double positive(String field, double value) {
    finite(field, value);
    if (value <= 0) {
      throw new IllegalArgumentException(field + ": must be > 0, got " + value);
    }
    return value;
  }

  public static double nonNegative(String field, double value) {
    finite(field, value);
    if (value < 0) {
      throw new IllegalArgumentException(field + ": must be >= 0, got " + value);
    }
    return value;
  }

  /** A fraction in (0, 1]. */
  public static double fraction(String field, double value) {
    positive(field, value);
    if (value > 1) {
      throw new IllegalArgumentException(field + ": must be in (0, 1], got " + value);
    }
    return value;
  }

  /** A share in [0, 1]. */
  public static double share(String field, double value) {
    nonNegative(field, value);
    if (value > 1) {
      throw new IllegalArgumentException(field + ": must be in [0, 1], got " + value);
    }
    return value;
  }

  public static int positive(String field, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException(field + ": must be > 0, got " + value);
    }
    return value;
  }
}
