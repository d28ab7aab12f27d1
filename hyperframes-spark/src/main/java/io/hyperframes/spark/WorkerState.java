package io.hyperframes.spark;

import java.io.Serializable;

/**
 * One data-parallel worker between two steps, as a Spark partition holds it: its replica's
 * parameters (equal on every worker), its own optimizer state, its codec's state (the
 * error-feedback residual) and the message it sent last. A step never changes a state: it makes
 * the next one, so that a task Spark runs again (a lost executor, a speculative copy) starts from
 * the same state and sends the same bytes.
 */
final class WorkerState implements Serializable {
  private static final long serialVersionUID = 1L;

  final int worker;
  /** Steps taken: the parameters are those before the update of step {@code steps - 1}. */
  final long steps;
  final float[] params;
  /** The updater's state view (Adam's moments), or an empty array for a stateless updater. */
  final float[] updater;
  final byte[] codec;
  /** The message of the last step on the wire ({@code Encoded.toBytes}), empty before any. */
  final byte[] message;
  /** The loss of the last step's mini-batch (NaN before any). */
  final double score;
  /** Rows of the last step's mini-batch (0 before any). */
  final int rows;

  WorkerState(int worker, long steps, float[] params, float[] updater, byte[] codec,
      byte[] message, double score, int rows) {
    this.worker = worker;
    this.steps = steps;
    this.params = params;
    this.updater = updater;
    this.codec = codec;
    this.message = message;
    this.score = score;
    this.rows = rows;
  }

  /** What the driver collects of a step: the message and the loss, never the replica. */
  Sent sent() {
    return new Sent(worker, message, score, rows);
  }

  /** A worker's message of one step, as it reaches the driver. */
  record Sent(int worker, byte[] message, double score, int rows) implements Serializable {}
}
