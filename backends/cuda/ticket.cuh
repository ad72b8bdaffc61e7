/* Tagged arrival words: the ticket merges of the tensor-core decode kernel
 * (decode_mma.cuh) and of the Hopper forward's stream-K tail (fwd_hopper.cu). A word
 * holds tag << 16 | arrivals so far; a word without the caller's tag counts as zero, so a
 * workspace that held anything else needs no memset. The caller puts the word back to zero
 * once the last has arrived (so the next call in stream order starts at zero); only a word
 * already holding the tag with a count below the last (an aborted launch, two streams
 * sharing one workspace) would be misread. */
#ifndef PA_CUDA_TICKET_CUH
#define PA_CUDA_TICKET_CUH

/* Adds this arrival to *w, starting from the caller's load `cur`, with the caller's
 * compare-and-swap `cas(w, compare, value)` (its memory order is the caller's); returns
 * the arrivals before this one. */
template <typename Cas>
__device__ __forceinline__ unsigned long long pa_ticket_arrive(unsigned long long *w,
                                                               unsigned long long tag,
                                                               unsigned long long cur, Cas cas) {
  for (;;) {
    const unsigned long long seen = cur >> 16 == tag ? (cur & 0xffffull) : 0ull;
    const unsigned long long prev = cas(w, cur, tag << 16 | (seen + 1));
    if (prev == cur) return seen;
    cur = prev;
  }
}

#endif
