package io.hyperframes.diagnose;

/** How urgent a finding is. */
public enum Severity {
  /** The plan cannot run as given. */
  CRITICAL,
  /** It runs, but leaves a large share of the hardware idle or risks failure. */
  WARNING,
  /** Worth knowing; no action needed. */
  INFO
}
