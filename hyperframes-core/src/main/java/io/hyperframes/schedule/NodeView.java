package io.hyperframes.schedule;

/** What a placement policy sees of a node: what is left of it, and what it is. */
public interface NodeView {

  /** The node. */
  GpuNode node();

  /** CPU left, thousandths of a core. */
  long cpuLeft();

  /** Memory left, MiB. */
  long memoryLeft();

  /** Thousandths left of GPU {@code i} (0 … gpus − 1). */
  int gpuLeft(int i);

  /** Thousandths left over all the node's GPUs. */
  long gpuLeftTotal();
}
