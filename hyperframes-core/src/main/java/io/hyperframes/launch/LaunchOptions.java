package io.hyperframes.launch;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Locale;

/**
 * How an emitted launch is named and scheduled.
 *
 * @param name job and pod name prefix, a DNS-1123 label of at most 40 characters (Kubernetes
 *     derives pod and service names from it)
 * @param image the image the pods run: the one built from the emitted Dockerfile
 * @param namespace Kubernetes namespace
 * @param gang gang scheduling: {@code volcano} (schedulerName and the job's minimum of all pods),
 *     {@code kueue} (the queue-name label: Kueue admits a job whole), or {@code none}
 * @param queue Volcano or Kueue queue name
 * @param script training script the FSDP image runs (its own parallelism settings)
 */
public record LaunchOptions(String name, String image, String namespace, String gang,
    String queue, String script) {

  private static final String LABEL = "[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?";

  public LaunchOptions {
    checkArgument(name != null && name.matches(LABEL),
        "launch.name: must be a DNS-1123 label of 1-40 lower-case letters, digits and '-',"
            + " got '%s'", name);
    checkArgument(image != null && !image.isBlank() && !image.contains(" "),
        "launch.image: must be an image reference, got '%s'", image);
    checkArgument(namespace != null && namespace.matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"),
        "launch.namespace: must be a DNS-1123 label, got '%s'", namespace);
    gang = gang == null ? "" : gang.toLowerCase(Locale.ROOT);
    checkArgument(gang.equals("volcano") || gang.equals("kueue") || gang.equals("none"),
        "launch.gang: expected volcano, kueue or none, got '%s'", gang);
    checkArgument(queue != null && queue.matches("[a-z0-9]([-.a-z0-9]{0,61}[a-z0-9])?"),
        "launch.queue: must be a DNS-1123 subdomain, got '%s'", queue);
    checkArgument(script != null && !script.isBlank(), "launch.script: must be given");
  }

  /**
   * Name {@code hyperframes-train}, image {@code hyperframes-train:latest} (build and push the
   * emitted Dockerfile under a name of your registry), namespace {@code default}, Volcano gang
   * scheduling on queue {@code default}, script {@code train.py}.
   */
  public static LaunchOptions defaults() {
    return new LaunchOptions("hyperframes-train", "hyperframes-train:latest", "default",
        "volcano", "default", "train.py");
  }

  /** These options with another name. */
  public LaunchOptions withName(String value) {
    return new LaunchOptions(value, image, namespace, gang, queue, script);
  }

  /** These options with another image. */
  public LaunchOptions withImage(String value) {
    return new LaunchOptions(name, value, namespace, gang, queue, script);
  }

  /** These options with another gang scheduler. */
  public LaunchOptions withGang(String value) {
    return new LaunchOptions(name, image, namespace, value, queue, script);
  }

  /** These options with another queue. */
  public LaunchOptions withQueue(String value) {
    return new LaunchOptions(name, image, namespace, gang, value, script);
  }

  /** These options in another namespace. */
  public LaunchOptions withNamespace(String value) {
    return new LaunchOptions(name, image, value, gang, queue, script);
  }
}
