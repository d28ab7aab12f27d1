package io.hyperframes.spark;

import java.util.List;

/**
 * The JVM options Spark 3.5 needs on Java 17 (the {@code --add-opens} list of Spark's own
 * launcher, {@code org.apache.spark.launcher.JavaModuleOptions}): give them to the driver JVM
 * when it does not start through {@code spark-submit} (tests, an embedded driver) and to
 * executors started by hand through {@code spark.executor.extraJavaOptions}.
 */
public final class JvmOptions {
  /** The options, one per element. */
  public static final List<String> SPARK_ON_JAVA_17 = List.of(
      "-XX:+IgnoreUnrecognizedVMOptions",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED");

  private JvmOptions() {
  }
}
