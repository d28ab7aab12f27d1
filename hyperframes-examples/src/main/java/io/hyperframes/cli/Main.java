package io.hyperframes.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code hyperframes} command line. Exit status: 0 success, 1 failure at run time, 2 bad
 * input (one line on stderr naming the field and value, no stack trace).
 */
@Command(name = "hyperframes", mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Plan and measure AI compute: estimate training layouts, validate the planner,"
        + " benchmark kernels.",
    subcommands = {PlanCommand.class, EstimateCommand.class, ValidateCommand.class,
        CalibrateCommand.class,
        CatalogCommand.class, BenchCommand.class, DatasetCommand.class, CompareCommand.class,
        DoctorCommand.class, ProbeCommand.class, ScheduleCommand.class, ServePlanCommand.class})
public final class Main {

  /** Runs the command line and exits with its status. */
  public static void main(String[] args) {
    System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** Runs the command line with the given streams and returns the exit status (for tests). */
  public static int run(String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cl = new CommandLine(new Main());
    cl.setOut(out);
    cl.setErr(err);
    cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
      if (e instanceof IllegalArgumentException) {
        cmd.getErr().println("error: " + e.getMessage());
        return 2;
      }
      cmd.getErr().println("error: " + e);
      return 1;
    });
    cl.setParameterExceptionHandler((e, a) -> {
      e.getCommandLine().getErr().println("error: " + e.getMessage());
      return 2;
    });
    return cl.execute(args);
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"hyperframes " + io.hyperframes.HyperFrames.version()};
    }
  }
}
