package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Piecewise-linear interpolation over the Delaunay triangulation of points in three dimensions,
 * as SciPy's {@code LinearNDInterpolator} does (the Pollux artifact interpolates its measured
 * step times this way): inside a tetrahedron the value is the barycentric combination of its
 * corners' values; outside the convex hull there is no value.
 *
 * <p>The triangulation is built by Bowyer–Watson insertion (Bowyer 1981; Watson 1981) with a
 * ghost cell on every hull face (the convention of CGAL's 3D triangulations, Boissonnat et al.
 * 2002, §3), so points outside the current hull need no enclosing super-tetrahedron. Coordinates
 * must be integers of magnitude at most 2^15 (the measurement grids are numbers of nodes,
 * replicas and per-replica batch sizes): the orientation and in-sphere predicates are then
 * evaluated exactly in 64- and 128-bit integer arithmetic (Shewchuk 1997 defines their signs),
 * so grids with many co-spherical points triangulate without failure. Among the triangulations
 * of such degenerate point sets this one is fixed by the insertion order; any of them
 * interpolates the grid's points exactly.
 */
final class Delaunay3 {
  private static final long LIMIT = 1L << 15;
  private final long[][] p;
  private final double[][] pd;
  private final double[][] values;
  private final List<int[]> cells = new ArrayList<>();
  private final int infinite;

  /**
   * @param points integer coordinates, each row three values
   * @param values one value row per point (all rows the same length)
   */
  Delaunay3(long[][] points, double[][] values) {
    checkArgument(points.length == values.length && points.length >= 4,
        "points: at least 4 with one value row each, got %s points, %s values", points.length,
        values.length);
    for (long[] q : points) {
      checkArgument(q.length == 3, "points: three coordinates each");
      for (long c : q) {
        checkArgument(Math.abs(c) <= LIMIT, "points: coordinates within +-%s, got %s", LIMIT, c);
      }
    }
    this.p = points.clone();
    this.pd = new double[p.length][];
    for (int i = 0; i < p.length; i++) {
      pd[i] = new double[] {p[i][0], p[i][1], p[i][2]};
    }
    this.values = values.clone();
    this.infinite = points.length;
    int[] first = firstTetrahedron();
    checkArgument(first != null, "points: all on one plane, no tetrahedron");
    int a = first[0];
    int b = first[1];
    if (orient(first[0], first[1], first[2], first[3]) < 0) {
      a = first[1];
      b = first[0];
    }
    int[] t = {a, b, first[2], first[3]};
    cells.add(t);
    for (int i = 0; i < 4; i++) {
      int[] g = t.clone();
      g[i] = infinite;
      int x = (i + 1) % 4;
      int y = (i + 2) % 4;
      int s = g[x];
      g[x] = g[y];
      g[y] = s;
      cells.add(g);
    }
    boolean[] used = new boolean[points.length];
    for (int v : first) {
      used[v] = true;
    }
    for (int v = 0; v < points.length; v++) {
      if (!used[v]) {
        insert(v);
      }
    }
    cells.removeIf(this::isGhost);
  }

  /** Number of tetrahedra. */
  int size() {
    return cells.size();
  }

  /**
   * The interpolated values at {@code (x, y, z)}, or {@code null} outside the convex hull (a
   * relative tolerance of 1e-12 on the barycentric weights admits points on the hull).
   */
  double[] at(double x, double y, double z) {
    double[] q = {x, y, z};
    for (int[] c : cells) {
      double whole = orientD(pd[c[0]], pd[c[1]], pd[c[2]], pd[c[3]]);
      double[] w = new double[4];
      boolean inside = true;
      for (int i = 0; i < 4 && inside; i++) {
        double[][] v = {pd[c[0]], pd[c[1]], pd[c[2]], pd[c[3]]};
        v[i] = q;
        w[i] = orientD(v[0], v[1], v[2], v[3]) / whole;
        inside = w[i] >= -1e-12;
      }
      if (!inside) {
        continue;
      }
      double[] out = new double[values[c[0]].length];
      for (int i = 0; i < 4; i++) {
        for (int k = 0; k < out.length; k++) {
          out[k] += w[i] * values[c[i]][k];
        }
      }
      return out;
    }
    return null;
  }

  private int[] firstTetrahedron() {
    int n = p.length;
    int a = 0;
    int b = -1;
    for (int i = 1; i < n && b < 0; i++) {
      if (!Arrays.equals(p[i], p[a])) {
        b = i;
      }
    }
    int c = -1;
    for (int i = 1; i < n && b >= 0 && c < 0; i++) {
      long[] nrm = cross(sub(p[b], p[a]), sub(p[i], p[a]));
      if (nrm[0] != 0 || nrm[1] != 0 || nrm[2] != 0) {
        c = i;
      }
    }
    for (int i = 1; i < n && c >= 0; i++) {
      if (orient(a, b, c, i) != 0) {
        return new int[] {a, b, c, i};
      }
    }
    return null;
  }

  private void insert(int v) {
    List<int[]> conflict = new ArrayList<>();
    List<int[]> keep = new ArrayList<>(cells.size());
    for (int[] c : cells) {
      if (conflicts(c, v)) {
        conflict.add(c);
      } else {
        keep.add(c);
      }
    }
    if (conflict.isEmpty()) {
      // A duplicate of a vertex: it lies on, never inside, the spheres around it.
      return;
    }
    Map<Long, int[]> faces = new HashMap<>();
    Map<Long, Integer> count = new HashMap<>();
    for (int[] c : conflict) {
      for (int i = 0; i < 4; i++) {
        long key = faceKey(c, i);
        count.merge(key, 1, Integer::sum);
        int[] made = c.clone();
        made[i] = v;
        faces.put(key, made);
      }
    }
    for (Map.Entry<Long, Integer> e : count.entrySet()) {
      if (e.getValue() == 1) {
        keep.add(faces.get(e.getKey()));
      }
    }
    cells.clear();
    cells.addAll(keep);
  }

  private long faceKey(int[] c, int opposite) {
    int[] f = new int[3];
    int k = 0;
    for (int i = 0; i < 4; i++) {
      if (i != opposite) {
        f[k++] = c[i];
      }
    }
    Arrays.sort(f);
    long m = infinite + 1L;
    return (f[0] * m + f[1]) * m + f[2];
  }

  private boolean isGhost(int[] c) {
    return c[0] == infinite || c[1] == infinite || c[2] == infinite || c[3] == infinite;
  }

  /** Whether inserting {@code v} destroys cell {@code c}. */
  private boolean conflicts(int[] c, int v) {
    int at = -1;
    for (int i = 0; i < 4; i++) {
      if (c[i] == infinite) {
        at = i;
      }
    }
    if (at < 0) {
      return inSphere(c[0], c[1], c[2], c[3], v) > 0;
    }
    // The finite face, ordered so that the infinite vertex would come last with the cell's
    // orientation: v beyond the face (the infinite vertex's side), or on its plane and inside
    // its circle.
    int[] f = new int[3];
    int k = 0;
    for (int i = 0; i < 4; i++) {
      if (i != at) {
        f[k++] = c[i];
      }
    }
    if ((3 - at) % 2 == 1) {
      int s = f[0];
      f[0] = f[1];
      f[1] = s;
    }
    long o = orient(f[0], f[1], f[2], v);
    if (o != 0) {
      return o > 0;
    }
    return inCircle(f[0], f[1], f[2], v);
  }

  /** Shewchuk's orient3d: det[a−d; b−d; c−d], exact (|entries| ≤ 2^16, so ≤ 2^51). */
  long orient(int a, int b, int c, int d) {
    long[] u = sub(p[a], p[d]);
    long[] w = sub(p[b], p[d]);
    long[] z = sub(p[c], p[d]);
    return det3(u, w, z);
  }

  /**
   * Shewchuk's insphere sign: positive when {@code e} is inside the sphere through a, b, c, d
   * and orient(a, b, c, d) &gt; 0, exact in 128-bit arithmetic.
   */
  int inSphere(int a, int b, int c, int d, int e) {
    long[][] r = {sub(p[a], p[e]), sub(p[b], p[e]), sub(p[c], p[e]), sub(p[d], p[e])};
    long[] lift = new long[4];
    for (int i = 0; i < 4; i++) {
      lift[i] = r[i][0] * r[i][0] + r[i][1] * r[i][1] + r[i][2] * r[i][2];
    }
    // Expansion along the lifted column: det = sum_i (-1)^(i+3) lift_i * minor_i.
    long hi = 0;
    long lo = 0;
    for (int i = 0; i < 4; i++) {
      long[][] m = new long[3][];
      int k = 0;
      for (int j = 0; j < 4; j++) {
        if (j != i) {
          m[k++] = r[j];
        }
      }
      long minor = det3(m[0], m[1], m[2]);
      if (i % 2 == 0) {
        minor = -minor;
      }
      long pl = lift[i] * minor;
      long ph = Math.multiplyHigh(lift[i], minor);
      long sum = lo + pl;
      long carry = Long.compareUnsigned(sum, lo) < 0 ? 1 : 0;
      lo = sum;
      hi = hi + ph + carry;
    }
    if (hi != 0) {
      return hi > 0 ? 1 : -1;
    }
    return lo == 0 ? 0 : 1;
  }

  /** Whether {@code v}, on the plane of a, b, c, is strictly inside their circumcircle. */
  private boolean inCircle(int a, int b, int c, int v) {
    long[] n = cross(sub(p[b], p[a]), sub(p[c], p[a]));
    int drop = 0;
    for (int i = 1; i < 3; i++) {
      if (Math.abs(n[i]) > Math.abs(n[drop])) {
        drop = i;
      }
    }
    int x = drop == 0 ? 1 : 0;
    int y = drop == 2 ? 1 : 2;
    long[][] r = new long[3][];
    int[] pts = {a, b, c};
    for (int i = 0; i < 3; i++) {
      long dx = p[pts[i]][x] - p[v][x];
      long dy = p[pts[i]][y] - p[v][y];
      r[i] = new long[] {dx, dy, dx * dx + dy * dy};
    }
    // det of rows (dx, dy, lift) expanded along lift; 2x2 minors <= 2^33, lift <= 2^33.
    long hi = 0;
    long lo = 0;
    for (int i = 0; i < 3; i++) {
      long[] u = r[(i + 1) % 3];
      long[] w = r[(i + 2) % 3];
      long minor = u[0] * w[1] - u[1] * w[0];
      long pl = r[i][2] * minor;
      long ph = Math.multiplyHigh(r[i][2], minor);
      long sum = lo + pl;
      long carry = Long.compareUnsigned(sum, lo) < 0 ? 1 : 0;
      lo = sum;
      hi = hi + ph + carry;
    }
    int sign = hi != 0 ? (hi > 0 ? 1 : -1) : (lo == 0 ? 0 : 1);
    long orient2 = (p[b][x] - p[a][x]) * (p[c][y] - p[a][y])
        - (p[b][y] - p[a][y]) * (p[c][x] - p[a][x]);
    return sign != 0 && (sign > 0) == (orient2 > 0);
  }

  private static long det3(long[] u, long[] w, long[] z) {
    return u[0] * (w[1] * z[2] - w[2] * z[1]) - u[1] * (w[0] * z[2] - w[2] * z[0])
        + u[2] * (w[0] * z[1] - w[1] * z[0]);
  }

  private static long[] sub(long[] a, long[] b) {
    return new long[] {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  }

  private static long[] cross(long[] u, long[] w) {
    return new long[] {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
        u[0] * w[1] - u[1] * w[0]};
  }

  private static double orientD(double[] a, double[] b, double[] c, double[] d) {
    double ux = a[0] - d[0];
    double uy = a[1] - d[1];
    double uz = a[2] - d[2];
    double wx = b[0] - d[0];
    double wy = b[1] - d[1];
    double wz = b[2] - d[2];
    double zx = c[0] - d[0];
    double zy = c[1] - d[1];
    double zz = c[2] - d[2];
    return ux * (wy * zz - wz * zy) - uy * (wx * zz - wz * zx) + uz * (wx * zy - wy * zx);
  }
}
