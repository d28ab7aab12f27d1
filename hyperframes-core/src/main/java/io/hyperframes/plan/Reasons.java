package io.hyperframes.plan;

import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;
import java.util.function.Supplier;

/**
 * An immutable list of reasons whose last entry is formatted only when it is read. The planner
 * evaluates millions of layouts, most of them infeasible for memory, and reads the reasons of a
 * few: formatting each message eagerly was over half of a large plan's time (a flight
 * recording of the DeepSeek-V3 plan of docs/planning.md). Formatting is deterministic, so a
 * race between two readers formats the same text twice at worst.
 */
final class Reasons extends AbstractList<String> implements RandomAccess {
  private final String[] eager;
  private final Supplier<String> last;
  private volatile String formatted;

  /** {@code eager} (copied) followed by the text {@code last} gives. */
  Reasons(List<String> eager, Supplier<String> last) {
    this.eager = eager.toArray(new String[0]);
    this.last = last;
  }

  @Override
  public String get(int index) {
    if (index == eager.length) {
      String f = formatted;
      if (f == null) {
        f = last.get();
        formatted = f;
      }
      return f;
    }
    return eager[index];
  }

  @Override
  public int size() {
    return eager.length + 1;
  }
}
