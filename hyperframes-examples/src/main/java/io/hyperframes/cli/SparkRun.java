package io.hyperframes.cli;

import com.google.common.io.MoreFiles;
import com.google.common.io.RecursiveDeleteOption;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code bench compression --spark MASTER}: runs the Spark module's runnable jar
 * ({@code hyperframes-spark.jar}, {@code io.hyperframes.spark.SparkBench}) in a process of its
 * own and relays what it prints. The Spark module has its own dependencies (Spark 3.5 and the
 * Jackson 2.15 line Spark requires), so it does not share this command line's class path.
 */
final class SparkRun {
  /** Where {@code mvn -B package} leaves the jar, from the repository root. */
  static final String JAR = "hyperframes-spark/target/hyperframes-spark.jar";

  private SparkRun() {
  }

  /**
   * The Spark module's jar: {@code given} when set, else {@link #JAR} from the working directory
   * or beside this command line's own jar.
   *
   * @throws IllegalArgumentException naming {@code --spark-jar} when there is none
   */
  static Path jar(Path given) {
    if (given != null) {
      if (!Files.isRegularFile(given)) {
        throw new IllegalArgumentException("--spark-jar: " + given + " is not a file");
      }
      return given;
    }
    List<Path> tried = new ArrayList<>();
    tried.add(Path.of(JAR).toAbsolutePath());
    try {
      Path self = Path.of(SparkRun.class.getProtectionDomain().getCodeSource().getLocation()
          .toURI());
      // hyperframes-examples/target/hyperframes.jar (or target/classes) -> the repository root
      tried.add(self.getParent().getParent().getParent().resolve(JAR).normalize());
    } catch (java.net.URISyntaxException | RuntimeException e) {
      // No code source to look beside: the working directory was the only place.
    }
    for (Path p : tried) {
      if (Files.isRegularFile(p)) {
        return p;
      }
    }
    throw new IllegalArgumentException("--spark: the Spark module's jar is not built (looked for "
        + tried + "); `mvn -B package` builds " + JAR + ", or give its path with --spark-jar");
  }

  /**
   * Runs the jar with {@code args}; its standard output goes to {@code out}, its errors to this
   * process's. For a {@code local-cluster} master without {@code SPARK_HOME} it gives the child
   * a temporary Spark home (an empty {@code jars} folder: the classes come from the jar's class
   * path) and the Scala version, which Spark's executor launcher asks for.
   *
   * @return the child's exit status
   */
  static int run(Path jar, String master, List<String> args, PrintWriter out)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-jar");
    command.add(jar.toString());
    command.add("--master");
    command.add(master);
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command)
        .redirectError(ProcessBuilder.Redirect.INHERIT);
    Path home = null;
    Map<String, String> env = pb.environment();
    if (master.startsWith("local-cluster") && env.get("SPARK_HOME") == null) {
      home = Files.createTempDirectory("hf-spark-home");
      Files.createDirectories(home.resolve("jars"));
      env.put("SPARK_HOME", home.toString());
      env.putIfAbsent("SPARK_SCALA_VERSION", "2.12");
    }
    try {
      Process p = pb.start();
      try (InputStream in = p.getInputStream()) {
        out.print(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        out.flush();
      }
      return p.waitFor();
    } finally {
      if (home != null) {
        // Spark's worker writes the executors' logs under SPARK_HOME/work: the whole tree goes.
        MoreFiles.deleteRecursively(home, RecursiveDeleteOption.ALLOW_INSECURE);
      }
    }
  }
}
