package io.hyperframes.interconnect;

/**
 * A collective operation, with the bus-bandwidth factor of the nccl-tests conventions
 * (NVIDIA/nccl-tests doc/PERFORMANCE.md): busBW = algBW · factor(n).
 */
public enum Collective {
  ALL_REDUCE,
  REDUCE_SCATTER,
  ALL_GATHER,
  ALL_TO_ALL,
  POINT_TO_POINT;

  /** Bytes each rank must move per byte of message, as a multiple: 2(n-1)/n, (n-1)/n or 1. */
  public double busFactor(int n) {
    switch (this) {
      case ALL_REDUCE:
        return 2.0 * (n - 1) / n;
      case REDUCE_SCATTER:
      case ALL_GATHER:
      case ALL_TO_ALL:
        return (double) (n - 1) / n;
      case POINT_TO_POINT:
        return 1.0;
      default:
        throw new AssertionError(this);
    }
  }

  /** Parses the camel-case names used in files ("allReduce", "reduceScatter" ...). */
  public static Collective fromId(String field, String value) {
    String v = value == null ? "" : value.replace("-", "").replace("_", "")
        .toLowerCase(java.util.Locale.ROOT);
    switch (v) {
      case "allreduce":
        return ALL_REDUCE;
      case "reducescatter":
        return REDUCE_SCATTER;
      case "allgather":
        return ALL_GATHER;
      case "alltoall":
        return ALL_TO_ALL;
      case "p2p":
      case "pointtopoint":
      case "sendrecv":
        return POINT_TO_POINT;
      default:
        throw new IllegalArgumentException(field + ": unknown collective '" + value + "'");
    }
  }
}
