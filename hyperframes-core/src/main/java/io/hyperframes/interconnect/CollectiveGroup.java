package io.hyperframes.interconnect;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

/**
 * The ranks taking part in a collective: {@code size} in all, {@code perNode} of them in each
 * node they span (so {@code size / perNode} nodes).
 */
public record CollectiveGroup(int size, int perNode) {
  public CollectiveGroup {
    Checks.positive("group.size", size);
    Checks.positive("group.perNode", perNode);
    checkArgument(perNode <= size, "group.perNode: %s exceeds group.size %s", perNode, size);
  }

  /** Whether all ranks sit in one node. */
  public boolean singleNode() {
    return perNode == size;
  }

  /** Nodes the group spans. */
  public int nodes() {
    return (size + perNode - 1) / perNode;
  }
}
