/**
 * Empirical quantiles, computed in one place (internal: not exported by the module). It sits in
 * the foundation layer so that the runtime, the serving estimators, the evidence layer and the
 * scheduling layer all read a percentile the same way.
 */
package io.hyperframes.stat;
