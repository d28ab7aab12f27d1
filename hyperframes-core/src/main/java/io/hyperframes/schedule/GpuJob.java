package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * A job of a time-based replay: its members start together (a gang) and hold their resources for
 * {@code durationSeconds}.
 *
 * @param name job name
 * @param arrivalSeconds when it is submitted
 * @param durationSeconds how long it runs once started, &gt; 0
 * @param members its tasks (one for a single-task job), each placed on some node
 */
public record GpuJob(String name, double arrivalSeconds, double durationSeconds,
    List<GpuPod> members) {
  public GpuJob {
    checkArgument(name != null && !name.isBlank(), "job.name: must be given");
    checkArgument(Double.isFinite(arrivalSeconds) && arrivalSeconds >= 0,
        "job %s.arrivalSeconds: must be finite and >= 0, got %s", name, arrivalSeconds);
    checkArgument(Double.isFinite(durationSeconds) && durationSeconds > 0,
        "job %s.durationSeconds: must be finite and > 0, got %s", name, durationSeconds);
    checkArgument(members != null && !members.isEmpty(), "job %s.members: at least one", name);
    members = ImmutableList.copyOf(members);
  }

  /** A single-task job of a trace task: its arrival and duration (at least one second). */
  public static GpuJob of(GpuPod pod) {
    return new GpuJob(pod.name(), pod.arrivalSeconds(), Math.max(1, pod.durationSeconds()),
        List.of(pod));
  }

  /** GPU thousandths the job holds while it runs. */
  public long gpuMilli() {
    return members.stream().mapToLong(GpuPod::totalGpuMilli).sum();
  }
}
