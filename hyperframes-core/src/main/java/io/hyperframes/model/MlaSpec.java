package io.hyperframes.model;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * Multi-head latent attention (MLA; DeepSeek-AI 2024, DeepSeek-V2, arXiv 2405.04434, §2.1;
 * DeepSeek-V3, arXiv 2412.19437, §2.1.1). Queries go through a low-rank down and up projection
 * ({@code qLoraRank}; 0: one full projection, as DeepSeek-V2-Lite); keys and values are
 * compressed into one latent vector of {@code kvLoraRank} elements per token, plus a decoupled
 * rotary key of {@code qkRopeHeadDim} elements shared by the heads. Per head, a query and a key
 * have {@code qkNopeHeadDim + qkRopeHeadDim} elements and a value {@code vHeadDim}.
 *
 * <p>Weights of one layer (Hugging Face {@code DeepseekV3Attention}, field names as its
 * {@code config.json}): {@code q_a_proj} h × r_q, {@code q_b_proj} r_q × a·(d_n + d_r) (or
 * {@code q_proj} h × a·(d_n + d_r) when r_q is 0), {@code kv_a_proj_with_mqa} h × (r_kv + d_r),
 * {@code kv_b_proj} r_kv × a·(d_n + d_v), {@code o_proj} a·d_v × h, and RMSNorm gains of r_q and
 * r_kv. The KV cache holds the latent and the rotary key: r_kv + d_r elements per token and
 * layer (DeepSeek-V2 §2.1.2, Table 1), whatever the number of heads.
 *
 * @param qLoraRank query compression rank r_q ({@code q_lora_rank}; 0 for no compression)
 * @param kvLoraRank key-value latent rank r_kv ({@code kv_lora_rank})
 * @param qkNopeHeadDim per-head query/key part without rotary positions d_n
 * @param qkRopeHeadDim per-head rotary part d_r (the key's is shared by the heads)
 * @param vHeadDim per-head value size d_v
 */
public record MlaSpec(int qLoraRank, int kvLoraRank, int qkNopeHeadDim, int qkRopeHeadDim,
    int vHeadDim) {

  /** @throws IllegalArgumentException naming the field and the value */
  public MlaSpec {
    checkArgument(qLoraRank >= 0, "model.mla.qLoraRank: must be >= 0, got %s", qLoraRank);
    checkArgument(kvLoraRank > 0, "model.mla.kvLoraRank: must be > 0, got %s", kvLoraRank);
    checkArgument(qkNopeHeadDim > 0, "model.mla.qkNopeHeadDim: must be > 0, got %s",
        qkNopeHeadDim);
    checkArgument(qkRopeHeadDim >= 0, "model.mla.qkRopeHeadDim: must be >= 0, got %s",
        qkRopeHeadDim);
    checkArgument(vHeadDim > 0, "model.mla.vHeadDim: must be > 0, got %s", vHeadDim);
    for (int v : new int[] {qLoraRank, kvLoraRank, qkNopeHeadDim, qkRopeHeadDim, vHeadDim}) {
      checkArgument(v <= 1 << 16, "model.mla: every size must be <= 65536, got %s", v);
    }
  }

  /** Elements of a query or key head: d_n + d_r. */
  public int qkHeadDim() {
    return qkNopeHeadDim + qkRopeHeadDim;
  }

  /** Attention weights of one layer with {@code heads} heads over {@code hidden}. */
  double parameters(int hidden, int heads) {
    double h = hidden;
    double qk = (double) heads * qkHeadDim();
    double q = qLoraRank > 0 ? h * qLoraRank + (double) qLoraRank * qk : h * qk;
    double kv = h * (kvLoraRank + qkRopeHeadDim)
        + (double) kvLoraRank * heads * (qkNopeHeadDim + vHeadDim);
    return q + kv + (double) heads * vHeadDim * h;
  }

  /** The output projection's weights, a·d_v × h. */
  double outputParameters(int hidden, int heads) {
    return (double) heads * vHeadDim * hidden;
  }

  /** RMSNorm gains of the two latents (r_q when the query is compressed, r_kv). */
  double normParameters() {
    return qLoraRank + (double) kvLoraRank;
  }

  /** KV-cache elements per token and layer: the latent and the shared rotary key. */
  public int kvCacheElements() {
    return kvLoraRank + qkRopeHeadDim;
  }
}
