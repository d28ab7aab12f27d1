package io.hyperframes.schedule;

/**
 * Test fixture: a {@link ReplicaModel} built by name instead of by the position of its fourteen
 * components. Until set, a replica holds one whole GPU, runs one sequence, keeps one KV token,
 * takes one prompt token per prefill and costs nothing; each setter names the component it sets.
 */
final class ReplicaFixture {
  private int gpus = 1;
  private int gpuMilli = 1000;
  private int maxBatch = 1;
  private long kvTokens = 1;
  private int prefillTokenBudget = 1;
  private double prefillFixed;
  private double prefillPerToken;
  private double prefillPerSquare;
  private double prefillFloor;
  private double decodeFixed;
  private double decodePerSequence;
  private double decodePerContextToken;
  private double requestSeconds;

  static ReplicaFixture replica() {
    return new ReplicaFixture();
  }

  ReplicaFixture maxBatch(int sequences) {
    maxBatch = sequences;
    return this;
  }

  ReplicaFixture kvTokens(long tokens) {
    kvTokens = tokens;
    return this;
  }

  ReplicaFixture prefillTokenBudget(int tokens) {
    prefillTokenBudget = tokens;
    return this;
  }

  /** Prefill seconds: fixed per iteration, per prompt token. */
  ReplicaFixture prefill(double fixed, double perToken) {
    prefillFixed = fixed;
    prefillPerToken = perToken;
    return this;
  }

  /** Decode seconds: fixed per step, per running sequence, per context token read. */
  ReplicaFixture decode(double fixed, double perSequence, double perContextToken) {
    decodeFixed = fixed;
    decodePerSequence = perSequence;
    decodePerContextToken = perContextToken;
    return this;
  }

  ReplicaFixture requestSeconds(double seconds) {
    requestSeconds = seconds;
    return this;
  }

  ReplicaModel build() {
    return new ReplicaModel(gpus, gpuMilli, maxBatch, kvTokens, prefillTokenBudget, prefillFixed,
        prefillPerToken, prefillPerSquare, prefillFloor, decodeFixed, decodePerSequence,
        decodePerContextToken, requestSeconds, 0);
  }
}
