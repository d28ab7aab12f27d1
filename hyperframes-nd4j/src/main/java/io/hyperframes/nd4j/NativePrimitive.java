package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.*;

import org.bytedeco.dnnl.dnnl_exec_arg_t;
import org.bytedeco.dnnl.dnnl_memory;
import org.bytedeco.dnnl.dnnl_memory_desc_t;
import org.bytedeco.dnnl.dnnl_primitive;
import org.bytedeco.dnnl.dnnl_primitive_desc;
import org.bytedeco.dnnl.dnnl_stream;
import org.bytedeco.javacpp.Pointer;

/**
 * One oneDNN primitive with its own stream and one {@code dnnl_memory} per argument whose data
 * handle is swapped on every call. Not thread-safe: callers serialise on the owning plan.
 *
 * <p>oneDNN does not own user buffers: the Java objects that own the memory behind each bound
 * address must stay reachable until {@link #execute()} returns (callers use
 * {@link java.lang.ref.Reference#reachabilityFence}).
 */
final class NativePrimitive implements AutoCloseable {

  /** A pointer whose address is set in place, so binding allocates nothing. */
  static final class Address extends Pointer {
    Address set(long a) {
      this.address = a;
      return this;
    }
  }

  private final dnnl_primitive_desc pd;
  private final dnnl_primitive primitive;
  private final dnnl_stream stream;
  private final dnnl_memory[] memories;
  private final Address[] handles;
  private final dnnl_exec_arg_t args;
  private final int count;
  final String implementation;
  private boolean closed;

  /**
   * Creates the primitive of {@code pd} (taking ownership of it) with memories for the given
   * argument ids and descriptors.
   */
  NativePrimitive(Dnnl dnnl, dnnl_primitive_desc pd, int[] argIds, dnnl_memory_desc_t[] descs) {
    this.pd = pd;
    this.implementation = Dnnl.implementation(pd);
    this.primitive = new dnnl_primitive();
    Dnnl.check(dnnl_primitive_create(primitive, pd), "primitive create (" + implementation + ")");
    this.stream = new dnnl_stream();
    Dnnl.check(dnnl_stream_create(stream, dnnl.engine, dnnl_stream_default_flags),
        "stream create");
    this.count = argIds.length;
    this.memories = new dnnl_memory[count];
    this.handles = new Address[count];
    this.args = new dnnl_exec_arg_t(count);
    for (int i = 0; i < count; i++) {
      memories[i] = new dnnl_memory();
      Dnnl.check(dnnl_memory_create(memories[i], descs[i], dnnl.engine, null), "memory create");
      handles[i] = new Address();
      args.position(i).arg(argIds[i]).memory(memories[i]);
    }
    args.position(0);
    // oneDNN copied the descriptors into the primitive and memories: free them now rather than
    // leave them to the garbage collector.
    for (dnnl_memory_desc_t d : descs) {
      if (d != null && !d.isNull()) {
        d.close();
      }
    }
  }

  /** Points argument {@code index} at {@code address} for the next execution. */
  void bind(int index, long address) {
    Dnnl.check(dnnl_memory_set_data_handle(memories[index], handles[index].set(address)),
        "set data handle");
  }

  /** Runs the primitive and waits for it. */
  void execute() {
    int status = dnnl_primitive_execute(primitive, stream, count, args);
    if (status != dnnl_success) {
      // The message is built only on failure: execute runs per token while decoding.
      Dnnl.check(status, "execute " + implementation);
    }
    Dnnl.check(dnnl_stream_wait(stream), "stream wait");
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (dnnl_memory m : memories) {
      dnnl_memory_destroy(m);
    }
    dnnl_primitive_destroy(primitive);
    dnnl_stream_destroy(stream);
    dnnl_primitive_desc_destroy(pd);
    args.close();
  }

  /** A plain 2-D memory descriptor with explicit strides (elements). */
  static dnnl_memory_desc_t desc(long rows, long cols, long rowStride, long colStride, int type) {
    dnnl_memory_desc_t md = new dnnl_memory_desc_t();
    Dnnl.check(dnnl_memory_desc_init_by_strides(md, 2, new long[] {rows, cols}, type,
        new long[] {rowStride, colStride}), "memory desc " + rows + "x" + cols);
    return md;
  }

  /** A dense row-major 2-D descriptor. */
  static dnnl_memory_desc_t dense(long rows, long cols, int type) {
    return desc(rows, cols, cols, 1, type);
  }
}
