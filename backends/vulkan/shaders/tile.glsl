// The tiling steps of the scalar forward: which key tiles a workgroup visits and
// whether a tile can be skipped whole. Tiles start at multiples of BK from key 0,
// so 2:4 groups and block-mask blocks that are multiples of BK never straddle one.
#ifndef PA_TILE_GLSL
#define PA_TILE_GLSL

// The key tiles [t_begin, t_end) of split `split` (of `splits`) for rows [i0, i1):
// the union of the rows' mask ranges, cut into `splits` runs of whole tiles.
void pa_tile_range(pa_mask m, int i0, int i1, int bk, uint split, uint splits,
                   out int t_begin, out int t_end) {
  int lo, hi;
  pa_mask_rows_range(m, i0, i1, lo, hi);
  if (hi <= lo) {
    t_begin = 0;
    t_end = 0;
    return;
  }
  int t0 = lo / bk, t1 = (hi + bk - 1) / bk;
  int per = (t1 - t0 + int(splits) - 1) / int(splits);
  t_begin = min(t1, t0 + int(split) * per);
  t_end = min(t1, t_begin + per);
}

// Whether any (row, key) of rows [i0, i1) x keys [j0, j1) lies in a kept mask
// block: a tile with none is skipped (time falls with the mask's density).
bool pa_tile_any_block(int b, int h, int i0, int i1, int j0, int j1) {
  if ((P.flags & PA_BLOCK_MASK) == 0u) return true;
  for (int qb = i0 / P.block_q; qb <= (i1 - 1) / P.block_q; ++qb)
    for (int kb = j0 / P.block_k; kb <= (j1 - 1) / P.block_k; ++kb)
      if (pa_block_mask_keep(b, h, qb, kb)) return true;
  return false;
}

#endif
