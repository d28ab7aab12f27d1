package io.hyperframes.schedule;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The runs of a time replay that are running now: constant-time add and remove (swap with the
 * last), no boxing, and on demand the same runs by expected finish for reservations.
 */
final class RunningJobs {
  /** Expected finish, then submission: the order of {@link QueuePolicy.Queue#reservation}. */
  private static int byFinish(JobRun a, JobRun b) {
    int c = Double.compare(a.expectedFinish(), b.expectedFinish());
    return c != 0 ? c : Integer.compare(a.job(), b.job());
  }

  private JobRun[] runs = new JobRun[16];
  private int size;
  /**
   * The runs by expected finish, kept only once a policy asked for it (null before): a sorted
   * array with binary insertion and removal. A few hundred runs are a few hundred bytes to
   * move, cheaper than a red-black tree's node, rebalancing and iterator (a fifth of a
   * Random-fit EASY backfill replay went to TreeSet; ReplayBenchmark, JFR).
   */
  private JobRun[] sorted;
  private int sortedSize;

  /** The number of runs kept in finish order: {@link #byFinish(int)} for 0 to this − 1. */
  int byFinishSize() {
    if (sorted == null) {
      sorted = Arrays.copyOf(runs, Math.max(16, size));
      Arrays.sort(sorted, 0, size, RunningJobs::byFinish);
      sortedSize = size;
    }
    return sortedSize;
  }

  /** The {@code k}-th run by expected finish (then submission); after {@link #byFinishSize}. */
  JobRun byFinish(int k) {
    return sorted[k];
  }

  /** Where {@code r} is or would go in {@link #sorted}: its index, or −(insertion point) − 1. */
  private int search(JobRun r) {
    int lo = 0;
    int hi = sortedSize - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = byFinish(sorted[mid], r);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -(lo + 1);
  }

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  void add(JobRun r) {
    if (size == runs.length) {
      runs = Arrays.copyOf(runs, 2 * size);
    }
    r.slot()[0] = size;
    runs[size++] = r;
    if (sorted != null) {
      int at = -search(r) - 1;
      if (sortedSize == sorted.length) {
        sorted = Arrays.copyOf(sorted, 2 * sortedSize);
      }
      System.arraycopy(sorted, at, sorted, at + 1, sortedSize - at);
      sorted[at] = r;
      sortedSize++;
    }
  }

  void remove(JobRun r) {
    int at = r.slot()[0];
    JobRun last = runs[--size];
    runs[at] = last;
    last.slot()[0] = at;
    runs[size] = null;
    r.slot()[0] = -1;
    if (sorted != null) {
      int k = search(r);
      if (k < 0) {
        throw new AssertionError("run of job " + r.job() + " missing from the finish order");
      }
      System.arraycopy(sorted, k + 1, sorted, k, sortedSize - k - 1);
      sorted[--sortedSize] = null;
    }
  }

  List<JobRun> copy() {
    List<JobRun> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(runs[i]);
    }
    return out;
  }
}
