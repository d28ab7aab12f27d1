package io.hyperframes.inference;

import java.util.ArrayList;
import java.util.List;
import org.apache.commons.math3.complex.Complex;
import org.apache.commons.math3.special.Gamma;
import org.apache.commons.math3.transform.DftNormalization;
import org.apache.commons.math3.transform.FastFourierTransformer;
import org.apache.commons.math3.transform.TransformType;

/**
 * The analytical latency model of a continuous-batching server: a linear self-exciting (Hawkes)
 * cluster process in decode-step time, solved through its characteristic function.
 *
 * <p>Counted in decode steps, every running sequence lives exactly {@code O − 1} steps, so the
 * population at step j is the number of admissions in the last {@code O − 1} gaps between steps.
 * Admissions in a gap are the Poisson arrivals during the previous step ({@code λ·t(n)}) and
 * during the prefill iterations of the gap (vLLM's scheduler prefills whatever is waiting before
 * the next decode step). With the decode step linear in the population, {@code t(n) ≈ τ + c·n},
 * and the prefill time of a gap linear in its admissions, {@code κ + p·A}, every admission raises
 * the arrival intensity of the same gap by {@code λ·p} and of each of the next {@code O − 1} gaps
 * by {@code λ·c}: a discrete-time linear Hawkes process (Hawkes 1971; as a branching cluster
 * process, Hawkes and Oakes 1974) with immigration {@code λ·(τ + κ)} per gap and branching ratio
 * {@code m = λ·(p + (O − 1)·c)}.
 *
 * <p>A request's latency is its time to first token plus {@code Σ t(n_j)} over its own decode
 * steps plus the prefills admitted meanwhile: a linear functional {@code Σ_s w(s)·A_s} of the
 * admissions around it. By PASTA the request sees the stationary process; as a point of that
 * process its view is the Palm distribution of a Poisson cluster process (Daley and Vere-Jones,
 * An Introduction to the Theory of Point Processes, vol. I, 2nd ed., §6.3 and §13.2): the
 * independent clusters of all other immigrants, its own descendants, and its ancestry, a chain
 * that continues with probability m, each ancestor bringing its other offspring. The
 * characteristic function of the functional follows from the cluster recursion
 * {@code G_s(ω) = e^{iω·w(s)}·exp(Σ_k μ_k·(G_{s+k}(ω) − 1))}, the same-gap cascade solved by
 * Newton's method; the latency distribution is recovered by an inverse FFT.
 *
 * <p>The three inputs the linearisation needs are taken from the server's own tables: the
 * expected prefill time and admissions of a gap from the exact Poisson cascade over the prefill
 * table (p is its marginal cost per admission, κ the rest); c and τ by statistical linearisation
 * (Booton 1954) of the decode table over the population a request sees, which is size-biased:
 * each step serves n sequences (Gamma-distributed with the model's own mean and variance,
 * iterated to a fixed point). Time to first token is the rest of the iteration in progress
 * (a decode step, or a prefill iteration of j prompts chosen in proportion to its frequency in
 * the cascade times its length) plus the prefill of the request's group. The batch limit is not
 * modelled: where the population reaches it the model reports the latency as unbounded.
 */
final class ClusterLatency {

  private static final int FFT_POINTS = 2048;
  private static final int GRID = 900;

  private final double[] prefill;
  private final double[] decode;
  private final int maxBatch;
  private final int steps;
  private final double prefillSlope;

  /** Fitted parameters of the linear cluster model at one arrival rate. */
  record Fit(double rate, double meanPopulation, double sdPopulation, double stepSlope,
      double immigrationSeconds, double marginalPrefill, double meanStep,
      double prefillPerRequest, double branchingRatio, double admissionsPerGap,
      double[] iterationSizes) {}

  ClusterLatency(double[] prefill, double[] decode, int outputTokens) {
    this.prefill = prefill.clone();
    this.decode = decode.clone();
    this.maxBatch = prefill.length - 1;
    this.steps = outputTokens - 1;
    this.prefillSlope = maxBatch > 1 ? (prefill[maxBatch] - prefill[1]) / (maxBatch - 1)
        : prefill[1];
  }

  ServingLoad.Percentiles percentiles(double rate) {
    if (steps == 0) {
      // Prompts only: no decode population to model; the wait for the prefill in progress.
      double t = prefill[1];
      double busy = Math.min(1, rate * prefill[1]);
      double p50 = t + residualQuantile(0.5, busy, t);
      double p99 = t + residualQuantile(0.99, busy, t);
      return new ServingLoad.Percentiles(p50, t + residualQuantile(0.9, busy, t), p99, p50, p99,
          0, q -> t + residualQuantile(q, busy, t));
    }
    Fit f = fit(rate);
    if (f == null) {
      double inf = Double.POSITIVE_INFINITY;
      return new ServingLoad.Percentiles(inf, inf, inf, inf, inf, maxBatch, q -> inf);
    }
    Ttft ttft = ttft(f);
    double[] q = latencyQuantiles(f, ttft, new double[] {0.5, 0.9, 0.99});
    return new ServingLoad.Percentiles(q[0], q[1], q[2], ttft.quantile(0.5), ttft.quantile(0.99),
        f.meanPopulation(), ttft::quantile);
  }

  /**
   * Time to first token: the rest of the iteration in progress (a decode step, a prefill
   * iteration, or nothing when idle, in the shares of time the fit gives) and then the prefill
   * of the request's group, itself plus the Poisson arrivals during that iteration.
   */
  private Ttft ttft(Fit f) {
    double gapsPerSecond = f.rate() / Math.max(1e-12, f.admissionsPerGap());
    double decodeShare = Math.min(1, gapsPerSecond * f.meanStep());
    double prefillShare = Math.min(1 - decodeShare, f.rate() * f.prefillPerRequest());
    return new Ttft(f.rate(), 1 - decodeShare - prefillShare, decodeShare, f.meanStep(),
        prefillShare, f.iterationSizes());
  }

  /**
   * The time-to-first-token mixture (see {@link #ttft(Fit)}): component 0 a decode step, the
   * others prefill iterations of j prompts, in proportion to their frequency times their length
   * (an arrival falls in an iteration with probability proportional to its length).
   */
  private final class Ttft {
    private final double idle;
    private final double[] share;
    private final double[] length;
    private final double[][] group;

    Ttft(double rate, double idle, double decodeShare, double step, double prefillShare,
        double[] sizes) {
      this.idle = Math.max(0, idle);
      double total = 0;
      for (int j = 1; j < sizes.length; j++) {
        total += sizes[j] * prefillOf(j);
      }
      List<double[]> parts = new ArrayList<>();
      parts.add(new double[] {decodeShare, Math.max(1e-12, step)});
      for (int j = 1; j < sizes.length && total > 0; j++) {
        double weight = sizes[j] * prefillOf(j) / total;
        if (weight > 1e-9) {
          parts.add(new double[] {prefillShare * weight, prefillOf(j)});
        }
      }
      int count = parts.size();
      share = new double[count];
      length = new double[count];
      for (int i = 0; i < count; i++) {
        share[i] = parts.get(i)[0];
        length[i] = parts.get(i)[1];
      }
      group = new double[count][];
      for (int i = 0; i < count; i++) {
        int k = (int) Math.ceil(rate * length[i] + 10 * Math.sqrt(rate * length[i]) + 10);
        group[i] = poisson(rate * length[i], k);
      }
    }

    /** E[exp(iωT)] as {re, im}. */
    double[] cf(double w) {
      double re = idle * Math.cos(w * prefill[1]);
      double im = idle * Math.sin(w * prefill[1]);
      for (int i = 0; i < share.length; i++) {
        double wl = w * length[i];
        double ure = wl == 0 ? 1 : Math.sin(wl) / wl;
        double uim = wl == 0 ? 0 : (1 - Math.cos(wl)) / wl;
        double gre = 0;
        double gim = 0;
        for (int n = 0; n < group[i].length; n++) {
          double pt = prefillOf(n + 1);
          gre += group[i][n] * Math.cos(w * pt);
          gim += group[i][n] * Math.sin(w * pt);
        }
        re += share[i] * (gre * ure - gim * uim);
        im += share[i] * (gre * uim + gim * ure);
      }
      return new double[] {re, im};
    }

    double cdf(double x) {
      double c = x >= prefill[1] ? idle : 0;
      for (int i = 0; i < share.length; i++) {
        for (int n = 0; n < group[i].length; n++) {
          double u = (x - prefillOf(n + 1)) / length[i];
          c += share[i] * group[i][n] * Math.max(0, Math.min(1, u));
        }
      }
      return c;
    }

    double quantile(double q) {
      double lo = prefill[1] * 0.5;
      double hi = prefill[1];
      for (int i = 0; i < share.length; i++) {
        hi = Math.max(hi, prefillOf(group[i].length) + length[i]);
      }
      for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (cdf(mid) < q) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      return 0.5 * (lo + hi);
    }
  }

  /**
   * Whether the model's population stays clear of the batch limit at this rate (mean plus three
   * standard deviations below it): the domain where it is validated (outputs of two tokens or
   * more; a single-token workload has no decode population and gets only a rough estimate).
   * Beyond it admission waits, which the model leaves out, add to the latency, so its answers
   * are underestimates; near the edge the TTFT tail, which such waits hit first, already is.
   */
  boolean covers(double rate) {
    if (steps == 0) {
      return false;
    }
    Fit f = fit(rate);
    return f != null && f.meanPopulation() + 3 * f.sdPopulation() < maxBatch;
  }

  /** The model's parameters at a rate, or null where the population reaches the batch limit. */
  Fit fit(double rate) {
    int k = (int) Math.min(400, Math.max(64,
        Math.ceil(3 * rate * (decode[maxBatch] + prefill[1])) + 40));
    double[][] rows = new double[k + 1][];
    for (int j = 1; j <= k; j++) {
      rows[j] = poisson(rate * prefillOf(j), k);
    }
    double n = 1;
    double sd = 0;
    double slope = localSlope(1);
    double meanStep = decodeAt(1);
    double[] ca = null;
    double pm = prefill[1];
    double kappa = 0;
    double m = 0;
    for (int outer = 0; outer < 4; outer++) {
      for (int i = 0; i < 1000; i++) {
        meanStep = expectedStep(n, sd, false)[0];
        ca = cascade(rate, meanStep, rows, k);
        double next = steps * ca[1];
        if (!(next < maxBatch)) {
          return null;
        }
        if (Math.abs(next - n) <= 1e-9 * n) {
          n = next;
          break;
        }
        n = 0.5 * (n + next);
      }
      double[] ca2 = cascade(rate, meanStep * 1.001, rows, k);
      pm = (ca2[0] - ca[0]) / (ca2[1] - ca[1]);
      kappa = ca[0] - pm * ca[1];
      if (outer == 0) {
        slope = localSlope(n);
      }
      m = rate * (pm + steps * slope);
      if (!(m < 1)) {
        return null;
      }
      double tau = Math.max(0, meanStep - slope * n + kappa);
      sd = Math.sqrt(Math.max(1e-12, populationVariance(rate * pm, rate * slope, rate * tau)));
      slope = expectedStep(n, sd, true)[1];
    }
    m = rate * (pm + steps * slope);
    if (!(m < 1)) {
      return null;
    }
    double tau = Math.max(0, meanStep - slope * n + kappa);
    double[] sizes = new double[k + 1];
    cascade(rate, meanStep, rows, k, sizes);
    return new Fit(rate, n, sd, slope, tau, pm, meanStep, ca[0] / ca[1], m, ca[1], sizes);
  }

  /** Quantiles of the end-to-end latency: deterministic part plus the inverted cluster law. */
  private double[] latencyQuantiles(Fit f, Ttft ttft, double[] qs) {
    double shift = steps * f.immigrationSeconds();
    double t = ttft.quantile(0.999);
    double eps = 1e-4 / Math.max(1e-9, steps * f.meanStep());
    double[] l = logCf(f, eps);
    double mean = l[1] / eps;
    double var = Math.max(0, -2 * l[0] / (eps * eps));
    double period = Math.max(6 * mean, mean + 30 * Math.sqrt(var)) + 2 * t;
    int half = FFT_POINTS / 2;
    Complex[] spectrum = new Complex[FFT_POINTS];
    for (int j = 0; j <= half; j++) {
      double w = 2 * Math.PI * j / period;
      double[] lc = j == 0 ? new double[] {0, 0} : logCf(f, w);
      double mod = Math.exp(lc[0]);
      double re = mod * Math.cos(lc[1]);
      double im = mod * Math.sin(lc[1]);
      double[] tc = ttft.cf(w);
      double mre = tc[0];
      double mim = tc[1];
      double pre = re * mre - im * mim;
      double pim = re * mim + im * mre;
      spectrum[j] = new Complex(pre, -pim);
      if (j > 0 && j < half) {
        spectrum[FFT_POINTS - j] = new Complex(pre, pim);
      }
    }
    Complex[] dens = new FastFourierTransformer(DftNormalization.STANDARD)
        .transform(spectrum, TransformType.INVERSE);
    double dx = period / FFT_POINTS;
    double[] out = new double[qs.length];
    double cdf = 0;
    int qi = 0;
    for (int j = 0; j < FFT_POINTS && qi < qs.length; j++) {
      double mass = Math.max(0, dens[j].getReal() * FFT_POINTS / period) * dx;
      while (qi < qs.length && cdf + mass >= qs[qi]) {
        double frac = mass > 0 ? (qs[qi] - cdf) / mass : 1;
        out[qi] = shift + (j + frac) * dx;
        qi++;
      }
      cdf += mass;
    }
    for (; qi < qs.length; qi++) {
      out[qi] = shift + period;
    }
    return out;
  }

  /**
   * log E[exp(iωX)] of the random part X of a request's decode time, as {re, im}: the request's
   * own weight, its descendants, its ancestry (Palm cluster) and all other clusters.
   */
  double[] logCf(Fit f, double w) {
    int len = steps;
    int back = 4 * len;
    int size = back + len;
    double c = f.stepSlope();
    double mu0 = f.rate() * f.marginalPrefill();
    double lc = f.rate() * c;
    double m = f.branchingRatio();
    double eta = f.rate() * f.immigrationSeconds();
    double p = f.marginalPrefill();
    // index i <-> position s = i - back, positions -back .. len-1
    double[] eRe = new double[size + len];
    double[] eIm = new double[size + len];
    double[] gRe = new double[size];
    double[] gIm = new double[size];
    double winRe = 0;
    double winIm = 0;
    double[] g = new double[2];
    for (int i = size - 1; i >= 0; i--) {
      int s = i - back;
      double weight = s >= 1 ? c * (len - s) + p : c * Math.max(0, len - Math.abs(s));
      gRe[i] = lc * winRe;
      gIm[i] = lc * winIm;
      double zMod = Math.exp(gRe[i]);
      double zRe = zMod * Math.cos(w * weight + gIm[i]);
      double zIm = zMod * Math.sin(w * weight + gIm[i]);
      cascadeRoot(zRe, zIm, mu0, g);
      eRe[i] = g[0] - 1;
      eIm[i] = g[1];
      winRe += eRe[i] - eRe[i + len];
      winIm += eIm[i] - eIm[i + len];
    }
    // the request's own descendants: children in its gap come after its prefill
    int i0 = back;
    double zMod = Math.exp(gRe[i0]);
    double arg = w * (c * len + p) + gIm[i0];
    cascadeRoot(zMod * Math.cos(arg), zMod * Math.sin(arg), mu0, g);
    double descRe = mu0 * (g[0] - 1) + gRe[i0];
    double descIm = mu0 * g[1] + gIm[i0];
    // all other clusters, with the linearised tail of clusters rooted before -back
    double immRe = 0;
    double immIm = 0;
    for (int i = 0; i < size; i++) {
      immRe += eRe[i];
      immIm += eIm[i];
    }
    double r = lc / (1 - mu0);
    double bRe = 0;
    double bIm = 0;
    for (int u = 0; u < len; u++) {
      bRe += eRe[u] * (len - u);
      bIm += eIm[u] * (len - u);
    }
    double tail = r / (1 - r * len);
    immRe = eta * (immRe + tail * bRe);
    immIm = eta * (immIm + tail * bIm);
    // ancestry: F(s) for s = -back .. 0, F = 1 before
    double[] fRe = new double[back + 1 + len];
    double[] fIm = new double[back + 1 + len];
    for (int j = 0; j < len; j++) {
      fRe[j] = 1;
    }
    double fwRe = len;
    double fwIm = 0;
    for (int i = 0; i <= back; i++) {
      int s = i - back;
      double weight = c * Math.max(0, len - Math.abs(s));
      double oRe = mu0 * eRe[i] + gRe[i];
      double oIm = mu0 * eIm[i] + gIm[i];
      double em = Math.exp(oRe);
      double esRe = em * Math.cos(w * weight + oIm);
      double esIm = em * Math.sin(w * weight + oIm);
      double numRe = (1 - m) + lc * fwRe;
      double numIm = lc * fwIm;
      double aRe = esRe * numRe - esIm * numIm;
      double aIm = esRe * numIm + esIm * numRe;
      double dRe = 1 - mu0 * esRe;
      double dIm = -mu0 * esIm;
      double dd = dRe * dRe + dIm * dIm;
      int j = i + len;
      fRe[j] = (aRe * dRe + aIm * dIm) / dd;
      fIm[j] = (aIm * dRe - aRe * dIm) / dd;
      fwRe += fRe[j] - fRe[j - len];
      fwIm += fIm[j] - fIm[j - len];
    }
    int j0 = back + len;
    double ancRe = (1 - m) + mu0 * fRe[j0] + lc * (fwRe - fRe[j0] + fRe[j0 - len]);
    double ancIm = mu0 * fIm[j0] + lc * (fwIm - fIm[j0] + fIm[j0 - len]);
    double re = descRe + immRe + 0.5 * Math.log(ancRe * ancRe + ancIm * ancIm);
    double im = w * c * len + descIm + immIm + Math.atan2(ancIm, ancRe);
    return new double[] {re, im};
  }

  /** Solves G = z·exp(μ0·(G − 1)) (the same-gap cascade) by Newton's method; G into out. */
  private static void cascadeRoot(double zRe, double zIm, double mu0, double[] out) {
    double gr = zRe;
    double gi = zIm;
    for (int it = 0; it < 50; it++) {
      double em = Math.exp(mu0 * (gr - 1));
      double hr = em * Math.cos(mu0 * gi);
      double hi = em * Math.sin(mu0 * gi);
      double zhr = zRe * hr - zIm * hi;
      double zhi = zRe * hi + zIm * hr;
      double fr = gr - zhr;
      double fi = gi - zhi;
      double dr = 1 - mu0 * zhr;
      double di = -mu0 * zhi;
      double dd = dr * dr + di * di;
      double sr = (fr * dr + fi * di) / dd;
      double si = (fi * dr - fr * di) / dd;
      gr -= sr;
      gi -= si;
      if (sr * sr + si * si < 1e-28) {
        break;
      }
    }
    out[0] = gr;
    out[1] = gi;
  }

  /**
   * Variance of the population at a decode step: the count of admissions in the last O − 1
   * gaps, from the first two moments of each cluster (Poisson offspring).
   */
  private double populationVariance(double mu0, double lc, double eta) {
    int len = steps;
    int back = 12 * len;
    double[] m1 = new double[back + 1 + len];
    double[] m2 = new double[back + 1 + len];
    double r1 = 0;
    double r2 = 0;
    double total = 0;
    for (int i = back; i >= 0; i--) {
      int s = i - back;
      double v = s > -len ? 1 : 0;
      double a1 = (v + lc * r1) / (1 - mu0);
      double rest = mu0 * a1 + lc * r1;
      double a2 = (v * v + 2 * v * rest + lc * r2 + rest * rest) / (1 - mu0);
      m1[i] = a1;
      m2[i] = a2;
      r1 += a1 - m1[i + len];
      r2 += a2 - m2[i + len];
      total += a2;
    }
    return eta * total;
  }

  /**
   * {E t(N), Cov(t(N), N)/Var(N)} for N Gamma-distributed with the given mean and standard
   * deviation (size-biased when asked: the population a request's steps see).
   */
  private double[] expectedStep(double mean, double sd, boolean sizeBiased) {
    if (sd <= 1e-9) {
      return new double[] {decodeAt(mean), localSlope(mean)};
    }
    double shape = (mean / sd) * (mean / sd) + (sizeBiased ? 1 : 0);
    double scale = sd * sd / mean;
    double hi = mean + 12 * sd + scale;
    double lgShape = Gamma.logGamma(shape);
    double sw = 0;
    double sx = 0;
    double st = 0;
    double[] xs = new double[GRID];
    double[] ws = new double[GRID];
    double[] ts = new double[GRID];
    for (int i = 0; i < GRID; i++) {
      double x = 1e-3 + (hi - 1e-3) * i / (GRID - 1);
      double lw = (shape - 1) * Math.log(x) - x / scale - shape * Math.log(scale) - lgShape;
      xs[i] = x;
      ws[i] = Math.exp(lw);
      ts[i] = decodeAt(x);
      sw += ws[i];
      sx += ws[i] * x;
      st += ws[i] * ts[i];
    }
    double mx = sx / sw;
    double mt = st / sw;
    double cov = 0;
    double vx = 0;
    for (int i = 0; i < GRID; i++) {
      cov += ws[i] * (xs[i] - mx) * (ts[i] - mt);
      vx += ws[i] * (xs[i] - mx) * (xs[i] - mx);
    }
    return new double[] {mt, vx > 0 ? cov / vx : localSlope(mean)};
  }

  /**
   * {expected prefill seconds, admissions, prefill iterations} of one gap: Poisson(λt) arrivals during the
   * decode step, then prefill iterations until none arrived during the last (exact cascade over
   * the prefill table, truncated at k prompts per iteration).
   */
  private double[] cascade(double rate, double step, double[][] rows, int k) {
    return cascade(rate, step, rows, k, null);
  }

  /** As {@link #cascade(double, double, double[][], int)}; adds P(iteration of j prompts) to sizes. */
  private double[] cascade(double rate, double step, double[][] rows, int k, double[] sizes) {
    double[] pmf = poisson(rate * step, k);
    double seconds = 0;
    double admitted = 0;
    double iterations = 0;
    double[] next = new double[k + 1];
    for (int level = 0; level < 10_000; level++) {
      double busy = 0;
      for (int j = 1; j <= k; j++) {
        busy += pmf[j];
      }
      if (busy < 1e-13) {
        break;
      }
      iterations += busy;
      java.util.Arrays.fill(next, 0);
      for (int j = 1; j <= k; j++) {
        if (pmf[j] < 1e-18) {
          continue;
        }
        admitted += j * pmf[j];
        seconds += pmf[j] * prefillOf(j);
        if (sizes != null) {
          sizes[j] += pmf[j];
        }
        double[] row = rows[j];
        for (int x = 0; x <= k; x++) {
          next[x] += pmf[j] * row[x];
        }
      }
      double[] swap = pmf;
      pmf = next;
      next = swap;
    }
    return new double[] {seconds, admitted, iterations};
  }

  private static double[] poisson(double mean, int k) {
    double[] p = new double[k + 1];
    if (mean <= 0) {
      p[0] = 1;
      return p;
    }
    double lm = Math.log(mean);
    for (int j = 0; j <= k; j++) {
      p[j] = Math.exp(j * lm - mean - Gamma.logGamma(j + 1.0));
    }
    return p;
  }

  private double prefillOf(int k) {
    return k <= maxBatch ? prefill[k] : prefill[maxBatch] + prefillSlope * (k - maxBatch);
  }

  private double localSlope(double n) {
    double h = Math.max(1, 0.05 * n);
    double lo = Math.max(1, n - h);
    return (decodeAt(n + h) - decodeAt(lo)) / (n + h - lo);
  }

  private double decodeAt(double n) {
    if (n <= 1) {
      return decode[1];
    }
    if (n >= maxBatch) {
      return decode[maxBatch];
    }
    int lo = (int) Math.floor(n);
    double f = n - lo;
    return decode[lo] * (1 - f) + decode[lo + 1] * f;
  }

  /** Quantile of the wait for the iteration in progress: none when idle, else uniform. */
  private static double residualQuantile(double q, double busy, double step) {
    return q <= 1 - busy ? 0 : (q - (1 - busy)) / busy * step;
  }
}
