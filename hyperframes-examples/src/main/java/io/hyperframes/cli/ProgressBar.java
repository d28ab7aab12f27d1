package io.hyperframes.cli;

import io.hyperframes.schedule.ReplayMonitor;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * A replay's progress on the terminal's error stream, redrawn in place at each percent; silent
 * when the error stream is not a terminal (logs and pipes stay clean).
 */
final class ProgressBar implements ReplayMonitor {
  private static final int WIDTH = 30;
  private final PrintWriter err;
  private final String label;
  private final boolean shown;
  private int percent = -1;

  ProgressBar(PrintWriter err, String label) {
    this.err = err;
    this.label = label;
    this.shown = System.console() != null;
  }

  @Override
  public void progress(double fraction) {
    if (!shown) {
      return;
    }
    int p = (int) Math.floor(100 * Math.max(0, Math.min(1, fraction)));
    if (p == percent) {
      return;
    }
    percent = p;
    int filled = p * WIDTH / 100;
    err.printf(Locale.ROOT, "\r%-10s [%s%s] %3d %%", label, "#".repeat(filled),
        ".".repeat(WIDTH - filled), p);
    if (p == 100) {
      err.println();
    }
    err.flush();
  }
}
