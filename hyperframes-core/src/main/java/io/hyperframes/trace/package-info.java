/**
 * Trace files the serving and scheduling layers read (internal: not exported by the module).
 * It sits below both, so that serving can read a trace's request lengths without depending on
 * the scheduling layer above it.
 */
package io.hyperframes.trace;
