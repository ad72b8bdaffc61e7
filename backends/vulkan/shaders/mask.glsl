// The mask and score rules of common/mask.h (docs/semantics.md), mirrored name for
// name: which (i, j) a row keeps and how a dot product becomes a score. Positions
// are within one sequence; row i sits at key position i + len_k - len_q.
#ifndef PA_MASK_GLSL
#define PA_MASK_GLSL

#ifndef PA_NEG_INF
#define PA_NEG_INF uintBitsToFloat(0xff800000u)
#endif

struct pa_mask {
  int len_q, len_k;               // len_k already limited by seqused_k
  int window_left, window_right;  // resolved (causal folded in); -1 unbounded
};

// Row i's diagonal key position.
int pa_mask_diag(pa_mask m, int i) { return i + m.len_k - m.len_q; }

// Keys [lo, hi) that row i may keep (before block masks and 2:4).
void pa_mask_row_range(pa_mask m, int i, out int lo, out int hi) {
  int d = pa_mask_diag(m, i);
  lo = 0;
  hi = m.len_k;
  if (m.window_left >= 0 && d - m.window_left > lo) lo = d - m.window_left;
  if (m.window_right >= 0 && d + m.window_right + 1 < hi) hi = d + m.window_right + 1;
}

// Keys [lo, hi) that any row of [i0, i1) may keep (the ranges move monotonically).
void pa_mask_rows_range(pa_mask m, int i0, int i1, out int lo, out int hi) {
  int lo0, hi0, lo1, hi1;
  pa_mask_row_range(m, i0, lo0, hi0);
  pa_mask_row_range(m, i1 - 1, lo1, hi1);
  lo = min(lo0, lo1);
  hi = max(hi0, hi1);
}

bool pa_mask_keep(pa_mask m, int i, int j) {
  int lo, hi;
  pa_mask_row_range(m, i, lo, hi);
  return j >= lo && j < hi;
}

// The score of (i, j) from the raw dot product: scale, softcap, ALiBi bias.
float pa_score(float dot_qk, float scale, float softcap, float slope, pa_mask m, int i, int j) {
  float s = dot_qk * scale;
  if (softcap > 0.0) s = softcap * tanh(s / softcap);
  if (slope != 0.0) s -= slope * float(abs(pa_mask_diag(m, i) - j));
  return s;
}

// 2:4 over one aligned group of four keys: keep the (up to) two largest kept
// scores, ties to the lower index (PA_SELECT_2_4). Dropped scores become -inf.
void pa_select_2_4(inout float s[4]) {
  int n = 0;
  for (int a = 0; a < 4; ++a) n += s[a] != PA_NEG_INF ? 1 : 0;
  if (n <= 2) return;
  bool keep[4] = bool[4](false, false, false, false);
  for (int r = 0; r < 2; ++r) {
    int best = -1;
    for (int a = 0; a < 4; ++a) {
      if (s[a] == PA_NEG_INF || keep[a]) continue;
      if (best < 0 || s[a] > s[best]) best = a;
    }
    keep[best] = true;
  }
  for (int a = 0; a < 4; ++a)
    if (!keep[a]) s[a] = PA_NEG_INF;
}

#endif
