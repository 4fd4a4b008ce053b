// code_mma.cu - the code kernel (fp8, int8, nvfp4, mxfp4; D 64 or 128, up
// to 8 query heads per KV head): q.k and p.v as mma.sync m16n8k16 with
// FP16 or BF16 operands (Op) and FP32 accumulators (FP8 path A: q.k as
// m16n8k32 on E4M3). The codes are staged as they are, by cp.async,
// several tiles ahead per warp, and each lane turns the bytes it reads
// from shared memory straight into its MMA fragments, so nothing converted
// goes back to memory and many loads are in flight.
//
// The order of channels and of tokens inside a tile is free as long as q,
// the keys, the probabilities and the values agree on it. It is chosen so
// that a lane's fragments come from contiguous bytes:
//  - q.k: lane (g, tig) reads the D/4 channels from tig * D/4 of one key
//    row, in the pairs its conversions produce: FP8 and INT8, each four
//    consecutive channels c0..c3 one k16 step, b0 = (c0, c1) and b1 =
//    (c2, c3); E2M1, each eight two steps, (c0, c4), (c1, c5), then
//    (c2, c6), (c3, c7). q is packed in the same order (pack_q). Path A
//    takes the bytes as they are, 32 channels per m16n8k32 step.
//  - the key row lane g reads for n-tile n is token 4 (g / 2) + 2 (g % 2)
//    + n, so the four scores of lane (g, tig) are tokens 4 tig .. 4 tig + 3:
//    column 2 tig + i of n-tile n is token 4 tig + 2 i + n.
//  - p.v, the values as A and the probabilities as B: lane (g, tig)
//    reads value rows 4 tig .. 4 tig + 3, the D/8 channels from g * D/8;
//    a0 and a1 = tokens (4 tig, 4 tig + 2) and a2 and a3 = (4 tig + 1,
//    4 tig + 3) of its channels 2 j and 2 j + 1 (rows g and g + 8 of
//    m-tile j), which is where those probabilities sit in B (its column g
//    is head g, as the scores of row g lie). Rows 0 and 2 (1 and 3) are
//    interleaved before conversion (Codes::MIX_LO, MIX_HI: byte by byte
//    for FP8 and INT8, by groups of four codes for E2M1), so each pair a
//    conversion makes is two tokens of one channel.
// Tiles are unpadded and their 16-byte chunks XOR-swizzled (chunk_at) so
// that the eight lanes of a quarter warp hit different banks in both reads.
#include "common.cuh"
#include "convert.cuh"
#include "mma.cuh"
#include "softmax.cuh"

// INT8's per-token scales ride with their tile (CODE_SCALES bytes: K's,
// then V's, each the 4-byte words that cover 16 FP16 scales).
#define CODE_SCALES 96

// Bytes of one stage: a tile of K and of V (and INT8's scales).
__host__ __device__ constexpr int code_stage_bytes(int fmt, int D)
{
    return 2 * MMA_TILE * (fmt == KV_NVFP4 || fmt == KV_MXFP4 ? D / 2 : D) +
           (fmt == KV_INT8 ? CODE_SCALES : 0);
}

template <int FMT, int D>
struct Codes {
    static constexpr bool FP4 = FMT == KV_NVFP4 || FMT == KV_MXFP4;
    static constexpr int ROW = FP4 ? D / 2 : D;                  // bytes of a token's codes
    static constexpr int CH = ROW / 16;                          // their 16-byte chunks
    static constexpr int TILE = MMA_TILE * ROW;                  // bytes of K (or V) per tile
    static constexpr int STAGE = code_stage_bytes(FMT, D);
    static constexpr int STAGES = code_stages(2 * TILE);
    static constexpr int KB = ROW / 4, VB = ROW / 8;             // bytes each lane reads of a K, V row
    static constexpr int EPW = FP4 ? 8 : 4;                      // codes per 32-bit word
    static constexpr int BS = KV_FP4_BLOCK(FMT);                 // E2M1 block
    static constexpr int NB = D / BS;                            // E2M1 block scales per row
    // byte permutes that interleave the low (high) halves of two value
    // words, a token's codes in each, so that to_pairs pairs the tokens:
    // byte by byte (FP8, INT8), or by groups of four codes (E2M1)
    static constexpr unsigned MIX_LO = FP4 ? 0x5410 : 0x5140, MIX_HI = FP4 ? 0x7632 : 0x7362;
};

// A lane's share of staging tiles: chunk lane % CH of rows lane / CH + R j
// (R = 32 / CH) of K and of V, which lie 512 j bytes on from k and v in
// global memory; a stride of tiles at a time. INT8's scale words come
// from row0 (see stage_codes); the E2M1 block scales a lane needs are read
// a tile ahead (TileScales) from kb (its two key rows, token 4 (g / 2) +
// 2 (g % 2) + n, at their blocks of its D/4 channels) and vb (its four
// value rows, 4 tig + i, at the block of its D/8 channels), NB bytes per row.
struct CodeCopy {
    const uint8_t *k, *v, *kb, *vb;
};

template <int FMT, int D>
__device__ __forceinline__ CodeCopy code_copy(const RowParams &p, size_t row0, int t0, int lane)
{
    using C = Codes<FMT, D>;
    const int g = lane >> 2, tig = lane & 3;
    const size_t at = (row0 + t0 + lane / C::CH) * C::ROW + 16 * (lane % C::CH);
    CodeCopy cp = {p.k + at, p.v + at, nullptr, nullptr};
    if (C::FP4) {
        cp.kb = p.k_block + (row0 + t0 + 4 * (g >> 1) + 2 * (g & 1)) * C::NB + tig * (D / 4) / C::BS;
        cp.vb = p.v_block + (row0 + t0 + 4 * tig) * C::NB + g * (D / 8) / C::BS;
    }
    return cp;
}

// Stages the tile at cp (16 tokens from t0, those >= end as zeros) and
// moves cp a stride on.
template <int FMT, int D>
__device__ __forceinline__ void stage_codes(const RowParams &p, size_t row0, int t0, int end, CodeCopy &cp,
                                            unsigned buf, int lane)
{
    using C = Codes<FMT, D>;
    constexpr int R = 32 / C::CH, J = MMA_TILE / R;             // rows apart; chunks per lane of K (and of V)
    const int lr = lane / C::CH, c = lane % C::CH;
    // a whole tile without the end checks: written as one loop with `in`
    // constant, the compiler merged the two paths' addressing and the code
    // kernels came out 8 to 40 instructions longer
    if (end - t0 >= MMA_TILE) {
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int at = chunk_at<C::CH>(lr + R * j, c) * 16;
            cp_async16(buf + at, cp.k + 512 * j, 16);
            cp_async16(buf + C::TILE + at, cp.v + 512 * j, 16);
        }
    } else {
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int at = chunk_at<C::CH>(lr + R * j, c) * 16;
            const bool in = lr + R * j < end - t0;
            const size_t back = in ? 0 : (size_t)(lr + R * j) * C::ROW;   // past the end: a row in range, no bytes read
            cp_async16(buf + at, cp.k + 512 * j - back, in ? 16 : 0);
            cp_async16(buf + C::TILE + at, cp.v + 512 * j - back, in ? 16 : 0);
        }
    }
    if (FMT == KV_INT8 && lane < 18) {      // nine words of scales each, zero from `end`
        const int which = lane / 9;
        const size_t first = (row0 + t0) * 2, last = (row0 + end) * 2,
                     at = (first & ~(size_t)3) + 4 * (lane % 9);
        const int bytes = at >= last ? 0 : last - at < 4 ? (int)(last - at) : 4;
        cp_async4(buf + 2 * C::TILE + which * (CODE_SCALES / 2) + 4 * (lane % 9),
                  (const uint8_t *)(which ? p.v_scale : p.k_scale) + (bytes ? at : first & ~(size_t)3),
                  bytes);
    }
    cp.k += WARPS * MMA_TILE * C::ROW, cp.v += WARPS * MMA_TILE * C::ROW;
}

// The E2M1 block scales of one tile a lane needs, loaded a tile ahead (zero
// past the end): the bytes of its two key rows (k[n]: the blocks of its D/4
// channels) and of its four value rows (v, byte i).
struct TileScales {
    uint32_t k[2], v;
};

// Loads the scales of the tile at cp (rows from t0) and moves cp a stride on.
template <int FMT, int D>
__device__ __forceinline__ void load_scales(int t0, int end, int g, int tig, CodeCopy &cp, TileScales &s)
{
    using C = Codes<FMT, D>;
    s.k[0] = s.k[1] = s.v = 0;
    if (C::FP4) {
        constexpr int KBL = (D / 4 + C::BS - 1) / C::BS;        // blocks of a lane's D/4 channels
        const int rem = end - t0, rk = 4 * (g >> 1) + 2 * (g & 1);
#pragma unroll
        for (int n = 0; n < 2; n++)
            if (rk + n < rem)
                s.k[n] = KBL == 2 ? __ldg((const uint16_t *)(cp.kb + n * C::NB)) : __ldg(cp.kb + n * C::NB);
#pragma unroll
        for (int i = 0; i < 4; i++)
            if (4 * tig + i < rem)
                s.v |= (uint32_t)__ldg(cp.vb + i * C::NB) << (8 * i);
        cp.kb += WARPS * MMA_TILE * C::NB, cp.vb += WARPS * MMA_TILE * C::NB;
    }
}

// MXFP4's block scales for one tile. An E8M0 code c is 2^(c - 127); with
// the 2^126 that e2m1x8 leaves out for BF16 it is 2^(c - 1), which BF16
// holds only for c <= 128. So a tile's operands carry 2^(c - 1 - x), where
// x = max(0, cmax - 128) for the largest code cmax among the tile's key and
// value scales (0 unless some block's scale exceeds 2), and its scores and
// probabilities are multiplied by 2^x in FP32 instead; the factors'
// exponent fields, c + 126 - x, then lie in 0 .. 254 (0, a factor of zero,
// only for a block of 2^-127 in a tile that also holds one of 2^127).
// The factors are exact; a block more than 2^133 below the tile's largest
// becomes a BF16 subnormal operand, and zero below about 2^137, far under
// what FP32 sums of the larger ones keep. The cache never holds code 255
// (e8m0_from_exponent stops at 254), which would let x reach 127.
// Returns x; the bytes past the end are zeros and change nothing.
__device__ __forceinline__ int e8m0_tile_shift(const TileScales &s)
{
    uint32_t c = max(max(s.v & 0xFFu, s.v >> 8 & 0xFFu), max(s.v >> 16 & 0xFFu, s.v >> 24));
    c = max(c, max(s.k[0], s.k[1]));                // one byte each (a lane's D/4 channels <= a block)
    return max((int)__reduce_max_sync(0xFFFFFFFFu, c) - 128, 0);
}

// E8M0 block scale codes c as BF16 factors 2^(c - 1 - x), whose exponent
// field c + 126 - x stays below 255, so that no field carries into the
// next. e8m0_factor2: one code's factor in both halves; e8m0_fields: the
// fields of the codes in every byte of w, each to be moved to the low byte
// of a half and shifted up 7.
__device__ __forceinline__ uint32_t e8m0_factor2(uint32_t c, int x)
{
    return (c + 126 - x) * 0x10001u << 7;
}

__device__ __forceinline__ uint32_t e8m0_fields(uint32_t w, int x)
{
    return w + (126 - x) * 0x01010101u;
}

// A word of codes as operand pairs of elements (0, 1) and (2, 3) (FP8,
// INT8) or (k, k + 4) (E2M1, times the block scale pair s2).
template <int FMT>
__device__ __forceinline__ void to_pairs(uint32_t w, uint32_t s2, uint32_t *out)
{
    if (FMT == KV_FP8) {
        e4m3x4_pairs(w, out);
    } else if (FMT == KV_INT8) {
        int8x4_f16(w, out);
    } else {
        e2m1x8<(KvFormat)FMT>(w, out);
#pragma unroll
        for (int i = 0; i < 4; i++)
            out[i] = mul2<Op<FMT>::F16>(out[i], s2);
    }
}

// ---------------------------------------------------------------------------
// The kernel, and its parts in the order of a tile

// Stages the first STAGES - 1 tiles from t0 (a stride apart) before the
// loop, which stages one more per tile it uses.
template <int FMT, int D>
__device__ __forceinline__ void stage_first(const RowParams &p, size_t row0, int t0, int end, CodeCopy &cp,
                                            unsigned sbuf, int lane)
{
    using C = Codes<FMT, D>;
    const int stride = WARPS * MMA_TILE;
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; s++) {
        if (t0 + s * stride < end)
            stage_codes<FMT, D>(p, row0, t0 + s * stride, end, cp, sbuf + s * C::STAGE, lane);
        cp_async_commit();
    }
}

// q scaled by 1/sqrt(D) as A fragments (rows g < G, zero elsewhere) in the
// channel order of the key reads. Path A: in E4M3 with a scale per head
// that maps its largest |q| to E4M3_MAX, which score_scale (what q.k is
// multiplied by after the MMA, given as the keys' scale) then divides out.
template <int FMT, int D, int G, bool FP8_PATH_A>
__device__ __forceinline__ void pack_code_q(const float *qr, float scale, int g, float k_tensor,
                                            uint32_t (*qa)[2], float &score_scale)
{
    if (FP8_PATH_A) {
        float amax = 0;
#pragma unroll
        for (int d = 0; d < D / 4; d++)
            amax = fmaxf(amax, fabsf(qr[d] * scale));
        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
        const float qs = amax > 0 ? E4M3_MAX / amax : 1.0f, f = scale * qs;
        score_scale = k_tensor / qs;
#pragma unroll
        for (int kb = 0; kb < D / 32; kb++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const float *x = qr + kb * 8 + half * 4;    // channels 4 (2 kb + half) + 0 .. 3
                qa[kb][half] = g < G ? e4m3x4(x[0] * f, x[1] * f, x[2] * f, x[3] * f) : 0;
            }
    } else {
        pack_q<D, Op<FMT>::F16>(qr, scale, g < G, qa);
    }
}

// E2M1 block scales as operand pairs, both halves one block: keys ks2[n][b]
// (block b of row n's channels), values vbs (the lane's tokens 0 and 2, 1
// and 3). NVFP4's E4M3 as FP16 (e4m3x4_pairs) times 64 / E4M3_UNIT: a 256th
// of their values times the 2^14 e2m1x8 leaves out. MXFP4's as
// e8m0_factor2 over the tile's shift (one block per row), the 2^x that
// tile_scale gives back. Nothing for the other formats.
template <int FMT>
__device__ __forceinline__ void tile_block_scales(const TileScales &cur, uint32_t (*ks2)[2], uint32_t *vbs,
                                                  float &tile_scale)
{
    if (FMT == KV_NVFP4) {
        const uint32_t unit = E4M3_UNIT == 1.0f ? 0x54005400u : 0x74007400u;   // FP16 pairs of 2^6 or 2^14
        uint32_t k[2][2], v[2];
        e4m3x4_pairs(cur.k[0], k[0]);
        e4m3x4_pairs(cur.k[1], k[1]);
        e4m3x4_pairs(cur.v, v);
#pragma unroll
        for (int n = 0; n < 2; n++) {
            const uint32_t both = mul2<true>(k[n][0], unit);   // blocks 0 and 1 in its halves
            ks2[n][0] = __byte_perm(both, 0, 0x1010), ks2[n][1] = __byte_perm(both, 0, 0x3232);
        }
        vbs[0] = mul2<true>(__byte_perm(v[0], v[1], 0x5410), unit);
        vbs[1] = mul2<true>(__byte_perm(v[0], v[1], 0x7632), unit);
    } else if (FMT == KV_MXFP4) {
        const int x = e8m0_tile_shift(cur);
        tile_scale = __int_as_float((127 + x) << 23);
        const uint32_t v = e8m0_fields(cur.v, x);
#pragma unroll
        for (int n = 0; n < 2; n++)
            ks2[n][0] = ks2[n][1] = e8m0_factor2(cur.k[n], x);
        vbs[0] = __byte_perm(v, 0, 0x4240) << 7, vbs[1] = __byte_perm(v, 0, 0x4341) << 7;
    }
}

// q.k of one key row's words kw, the lane's D/4 channels, on FP16 or BF16
// operands (E2M1 times its block scales ks2n). The A fragments of k16 steps
// 2j and 2j + 1 share four registers (q4: rows g and g + 8), so even steps
// sum in the rows g of scn, odd ones in the rows g + 8 of son, and what
// each adds to its other rows is not used.
template <int FMT, int D>
__device__ __forceinline__ void qk_codes(const uint32_t *kw, const uint32_t (*q4)[4], const uint32_t *ks2n,
                                         float *scn, float *son)
{
    using C = Codes<FMT, D>;
    constexpr int KW = C::KB / 4, NP = C::EPW / 2;
#pragma unroll
    for (int w = 0; w < KW; w++) {
        uint32_t s2 = 0, pr[NP];
        if (C::FP4)                         // the block of the lane's channels 8 w ..
            s2 = ks2n[w * 8 / C::BS];
        to_pairs<FMT>(kw[w], s2, pr);
#pragma unroll
        for (int hf = 0; hf < NP / 2; hf++) {
            const int kk = w * (NP / 2) + hf;
            mma_16816<Op<FMT>::F16>(kk % 2 ? son : scn, q4[kk / 2], pr[2 * hf], pr[2 * hf + 1]);
        }
    }
}

// o += p.v with the values as A and the probabilities as B (pb0, pb1): B's
// k = 2 tig + i (+ 8) is token 4 tig + 2 i (+ 1), its column g head g, just
// where the scores of row g lie. vw holds the lane's four value rows (4 tig
// + i, its D/8 channels); rows 0 and 2 (1 and 3) are interleaved first, so
// that each converted pair is two tokens of one channel (bytes for FP8 and
// INT8, groups of four codes for E2M1): channels c and c + 1 (c even) of
// the lane's D/8 are rows g and g + 8 of m-tile c / 2.
template <int FMT, int D>
__device__ __forceinline__ void pv_mma(const uint32_t (*vw)[Codes<FMT, D>::VB / 4], const uint32_t *vbs,
                                       uint32_t pb0, uint32_t pb1, float (*o)[4])
{
    using C = Codes<FMT, D>;
    constexpr int VW = C::VB / 4, NP = C::EPW / 2;
#pragma unroll
    for (int w = 0; w < VW; w++)
#pragma unroll
        for (int hi = 0; hi < 2; hi++) {
            uint32_t x[2][NP];
#pragma unroll
            for (int e = 0; e < 2; e++)
                to_pairs<FMT>(__byte_perm(vw[e][w], vw[e + 2][w], hi ? C::MIX_HI : C::MIX_LO), vbs[e], x[e]);
#pragma unroll
            for (int k = 0; k < NP; k += 2) {   // channels w EPW + hi NP + k, + 1
                const uint32_t a[4] = {x[0][k], x[0][k + 1], x[1][k], x[1][k + 1]};
                mma_16816<Op<FMT>::F16>(o[(w * C::EPW + hi * NP + k) / 2], a, pb0, pb1);
            }
        }
}

// ---------------------------------------------------------------------------
// FP8 path C: p.v on E4M3 MMAs, as FlashAttention-3 runs FP8
//
// m16n8k32 with the values as A (rows: 16 channels, k: 32 tokens) and
// the probabilities as B (k: the tokens, columns: the heads): one MMA
// takes the two tiles a warp uses one after the other, tile a's tokens as
// k 0-15 and tile b's as k 16-31, so that B's k = 4 tig + i (+ 16) is
// token 4 tig + i of tile a (b), where the scores of head g lie in lane
// (g, tig), and A's rows g and g + 8 of m-tile j are the lane's channels
// 2 j and 2 j + 1 (from g D/8), as in pv_mma. The value codes go to the
// MMA as they are, the token axis made the reduction by a 4 x 4 byte
// transpose of the lane's four value rows (e4m3_tokens). The
// probabilities of the 32 tokens are taken together against a reference
// m2 in powers of two (softmax_e4m3) and become E4M3 codes of
// P_E4M3_SCALE p: the scale of a block of 32 tokens is P_E4M3_SCALE e^-m,
// m = m2 ln 2, which moves by powers of two only (kv_attn.h, KvCpuOptions,
// repeats it on the CPU). The MMAs accumulate into acc over the tokens of
// the warp's tiles in its split, added into the FP32 o every `promote`
// MMAs (0: once, at the end); both are rescaled when m2 moves.

// A probability's E4M3 code holds P_E4M3_SCALE times it: the largest, 1,
// is 256 (E4M3 reaches 448).
#define P_E4M3_SCALE 256.0f

// 2^x on the SFU, results below 2^-126 flushed to zero.
__device__ __forceinline__ float exp2_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// The lane's four value rows (tokens 4 tig + i) of word w, 4 channels
// each, as one word per channel of its four tokens: out[c] byte i is
// token i of channel 4 w + c.
__device__ __forceinline__ void e4m3_tokens(uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3, uint32_t out[4])
{
    const uint32_t lo01 = __byte_perm(v0, v1, 0x5140), lo23 = __byte_perm(v2, v3, 0x5140);
    const uint32_t hi01 = __byte_perm(v0, v1, 0x7362), hi23 = __byte_perm(v2, v3, 0x7362);
    out[0] = __byte_perm(lo01, lo23, 0x5410), out[1] = __byte_perm(lo01, lo23, 0x7632);
    out[2] = __byte_perm(hi01, hi23, 0x5410), out[3] = __byte_perm(hi01, hi23, 0x7632);
}

// A tile's value operands: va[j] = rows g and g + 8 of m-tile j (the
// lane's channels 2 j, 2 j + 1), its four tokens each.
template <int D>
__device__ __forceinline__ void e4m3_value_operands(const uint32_t (*vw)[D / 32], uint32_t (*va)[2])
{
#pragma unroll
    for (int w = 0; w < D / 32; w++) {
        uint32_t t[4];
        e4m3_tokens(vw[0][w], vw[1][w], vw[2][w], vw[3][w], t);
        va[2 * w][0] = t[0], va[2 * w][1] = t[1], va[2 * w + 1][0] = t[2], va[2 * w + 1][1] = t[3];
    }
}

// The online softmax of head g over the 8 scores the lane holds of two
// tiles (-inf past the end), against m2, the largest score times log2 e
// rounded up, so that every factor is a power of two: updates m2 and l
// (the sum of the probabilities before rounding), leaves 2^(s log2 e -
// m2) in s8 and returns the factor the sums are rescaled by.
__device__ __forceinline__ float softmax_e4m3(float s8[8], float &m2, float &l)
{
    float mx = s8[0];
#pragma unroll
    for (int i = 1; i < 8; i++)
        mx = fmaxf(mx, s8[i]);
    mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
    const float mn = fmaxf(m2, ceilf(mx * LOG2E));
    float alpha = exp2_ftz(m2 - mn), sum = 0;
#pragma unroll
    for (int i = 0; i < 8; i++)
        sum += (s8[i] = exp2_ftz(s8[i] * LOG2E - mn));
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
    sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
    l = l * alpha + sum;
    m2 = mn;
    return alpha;
}

// The p.v of two tiles (scores sa, sb; value operands va, vb): their
// softmax, the probabilities as E4M3 B fragments, one m16n8k32 per m-tile
// into acc, and acc into o every `promote` such steps (`steps` counts
// them).
template <int D>
__device__ __forceinline__ void pv_e4m3_pair(const float *sa, const float *sb, const uint32_t (*va)[2],
                                             const uint32_t (*vb)[2], float &m2, float &l, float (*acc)[4],
                                             float (*o)[4], int &steps, int promote, int tig)
{
    float s8[8] = {sa[0], sa[1], sa[2], sa[3], sb[0], sb[1], sb[2], sb[3]};
    const float alpha = softmax_e4m3(s8, m2, l);
    rescale_cols<D / 16, false>(acc, alpha, tig);
    rescale_cols<D / 16, false>(o, alpha, tig);
    const float f = P_E4M3_SCALE;
    const uint32_t b0 = e4m3x4(s8[0] * f, s8[1] * f, s8[2] * f, s8[3] * f),
                   b1 = e4m3x4(s8[4] * f, s8[5] * f, s8[6] * f, s8[7] * f);
#pragma unroll
    for (int j = 0; j < D / 16; j++)
        mma_e4m3_16832(acc[j], va[j][0], va[j][1], vb[j][0], vb[j][1], b0, b1);
    if (promote > 0 && ++steps == promote) {
        steps = 0;
#pragma unroll
        for (int j = 0; j < D / 16; j++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                o[j][i] += acc[j][i], acc[j][i] = 0;
    }
}

// The rescale is skipped by a warp vote where no head's maximum moved
// (SKIP) for E2M1, bound by its arithmetic (FP8 and INT8 measured slower
// with it). Not the lazy softmax (the KIVI kernel's): its probabilities, up
// to 256, times MXFP4's 2^x could overflow BF16 and, times the value
// scales, NVFP4's FP32 output near FLT_MAX, as INT8's would overflow FP16.
// q.k: n-tile n, column 2 tig + i is token 4 tig + 2 i + n. A path A q.k
// adds its E4M3 MMAs' FP32 sums to sc every `every` blocks of 32 channels.
// FP8_PV (path C, with FP8_PATH_A): p.v on E4M3 MMAs (pv_e4m3_pair), a
// tile's scores and value operands kept until the warp's next tile.
// (The kernel keeps these steps in its own body where taking them out
// changed the machine code: kernels/PERF.md.)
template <int FMT, int D, int G, bool FP8_PATH_A = false, bool FP8_PV = false>
__global__ void __launch_bounds__(THREADS) code_kernel(RowParams p)
{
    release_dependents();
    using C = Codes<FMT, D>;
    constexpr bool F16 = Op<FMT>::F16, SKIP = C::FP4;
    constexpr int KW = C::KB / 4, VW = C::VB / 4, CPL = D / 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int split = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, tig = lane & 3;
    const int start = split * p.chunk, end = min(p.len, start + p.chunk);
    uint8_t *wbuf = smem_raw + warp * C::STAGES * C::STAGE;
    const size_t row0 = ((size_t)b * p.Hkv + h) * p.cap;
    const int stride = WARPS * MMA_TILE;
    int t0 = start + warp * MMA_TILE;
    // the lane's D/4 channels of q, in the keys' channel order
    float qr[D / 4];
    load_q<D, G, C::FP4 ? Q_BY8 : Q_BY4>(p, b, h, g, tig, qr);
    CodeCopy cp = code_copy<FMT, D>(p, row0, t0, lane);
    const unsigned sbuf = shared_at(wbuf);
    stage_first<FMT, D>(p, row0, t0, end, cp, sbuf, lane);
    TileScales cur;
    load_scales<FMT, D>(t0, end, g, tig, cp, cur);
    int read = 0, write = (C::STAGES - 1) * C::STAGE;     // the stages used and filled next

    const int ts = FMT == KV_FP8 && p.head_scales ? h : 0;     // NVFP4 has one per tensor
    // what an FP8 or NVFP4 operand holds of its value (E4M3_UNIT; E2M1 a
    // 256th, its block scale's bits moved) is made up in the scales
    const float code_scale = FMT == KV_FP8 ? 1.0f / E4M3_UNIT : FMT == KV_NVFP4 ? 256.0f : 1.0f;
    const float k_tensor = (FMT == KV_FP8 || FMT == KV_NVFP4) ? __ldg(p.k_tensor + ts) : 1.0f;
    const float v_tensor = ((FMT == KV_FP8 || FMT == KV_NVFP4) ? __ldg(p.v_tensor + ts) : 1.0f) * code_scale;
    const float scale = rsqrtf((float)D);
    float score_scale = k_tensor * code_scale;           // applied to q.k after the MMA
    uint32_t qa[D / 16][2];
    pack_code_q<FMT, D, G, FP8_PATH_A>(qr, scale, g, k_tensor, qa, score_scale);
    uint32_t q4[D / 32][4];                 // steps 2j (rows g) and 2j + 1 (rows g + 8)
#pragma unroll
    for (int j = 0; j < D / 32; j++)
        q4[j][0] = qa[2 * j][0], q4[j][1] = qa[2 * j + 1][0], q4[j][2] = qa[2 * j][1], q4[j][3] = qa[2 * j + 1][1];
    const int every = p.promote > 0 && !FP8_PV ? p.promote : D / 32;
    float o[D / 16][4];                     // m-tiles of 16 channels (values as A), heads as columns
    zero_acc<D / 16>(o);
    float m = -INFINITY, l = 0;
    // path C: the E4M3 MMAs' accumulators, the first tile of a pair (its
    // scores, value operands), the MMAs since the last promotion
    float acc[FP8_PV ? D / 16 : 1][4], sa[4];
    uint32_t va[FP8_PV ? D / 16 : 1][2];
    bool half = false;
    int steps = 0;
    if (FP8_PV)
        zero_acc<FP8_PV ? D / 16 : 1>(acc);

    for (; t0 < end; t0 += stride) {
        const int ahead = t0 + (C::STAGES - 1) * stride;
        if (ahead < end)                    // into the stage the last tile used
            stage_codes<FMT, D>(p, row0, ahead, end, cp, sbuf + write, lane);
        cp_async_commit();
        TileScales next;
        load_scales<FMT, D>(t0 + stride, end, g, tig, cp, next);
        cp_async_wait<C::STAGES - 1>();
        __syncwarp();
        const uint8_t *kt = wbuf + read, *vt = kt + C::TILE;
        read = next_stage(read, C::STAGE, C::STAGES), write = next_stage(write, C::STAGE, C::STAGES);

        uint32_t ks2[2][2], vbs[2] = {};
        float tile_scale = 1;
        tile_block_scales<FMT>(cur, ks2, vbs, tile_scale);
        float sc[2][4], so[2][4];           // q.k, even and odd k16 steps
#pragma unroll
        for (int n = 0; n < 2; n++) {
            sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0;
            so[n][0] = so[n][1] = so[n][2] = so[n][3] = 0;
            uint32_t kw[KW];
            lds<C::CH, KW>(kt, 4 * (g >> 1) + 2 * (g & 1) + n, tig * C::KB, kw);
            if constexpr (FP8_PATH_A) {
                float part[4] = {0, 0, 0, 0};
#pragma unroll
                for (int kb = 0; kb < D / 32; kb++) {
                    mma_e4m3(part, qa[kb][0], qa[kb][1], kw[kb * 2], kw[kb * 2 + 1]);
                    if ((kb + 1) % every == 0 || kb == D / 32 - 1)
#pragma unroll
                        for (int i = 0; i < 4; i++)
                            sc[n][i] += part[i], part[i] = 0;
                }
            } else {
                qk_codes<FMT, D>(kw, q4, ks2[n], sc[n], so[n]);
            }
        }
        // the lane's tokens 4 tig + j: scores (INT8 times the key scale), probabilities
        float s4[4], vsc[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int t = t0 + 4 * tig + j;
            float kscale = score_scale * tile_scale;
            vsc[j] = tile_scale;
            if (FMT == KV_INT8) {           // from the words staged with the tile
                const uint8_t *sw = kt + 2 * C::TILE + ((row0 + t0) * 2 & 3) + 2 * (4 * tig + j);
                kscale *= h2f(*(const uint16_t *)sw);
                vsc[j] = h2f(*(const uint16_t *)(sw + CODE_SCALES / 2));
            }
            s4[j] = t < end ? (sc[j % 2][j / 2] + so[j % 2][j / 2 + 2]) * kscale : -INFINITY;
        }
        if constexpr (FP8_PV) {             // m counts powers of two here
            uint32_t vw[4][VW], vt4[D / 16][2];      // the second tile's value operands
#pragma unroll
            for (int i = 0; i < 4; i++)
                lds<C::CH, VW>(vt, 4 * tig + i, g * C::VB, vw[i]);
            if (half) {                     // (a pointer chosen at run time put both in local memory)
                e4m3_value_operands<D>(vw, vt4);
                pv_e4m3_pair<D>(sa, s4, va, vt4, m, l, acc, o, steps, p.promote, tig);
            } else {
                e4m3_value_operands<D>(vw, va);
#pragma unroll
                for (int j = 0; j < 4; j++)
                    sa[j] = s4[j];
            }
            half = !half;
            cur = next;
            __syncwarp();
            continue;
        }
        const float alpha = softmax_step(s4, m, l);
        // o's columns are heads: a lane rescales by the factors of heads 2 tig and 2 tig + 1
        const uint32_t pb0 = pack_op<F16>(s4[0] * vsc[0], s4[2] * vsc[2]),
                       pb1 = pack_op<F16>(s4[1] * vsc[1], s4[3] * vsc[3]);
        rescale_cols<D / 16, SKIP>(o, alpha, tig);
        uint32_t vw[4][VW];
#pragma unroll
        for (int i = 0; i < 4; i++)
            lds<C::CH, VW>(vt, 4 * tig + i, g * C::VB, vw[i]);
        pv_mma<FMT, D>(vw, vbs, pb0, pb1, o);
        cur = next;
        __syncwarp();
    }
    float vs = v_tensor;
    if constexpr (FP8_PV) {                 // the last tile alone: a second of no tokens
        if (half) {
            const float none[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
            uint32_t zero[D / 16][2] = {};
            pv_e4m3_pair<D>(sa, none, va, zero, m, l, acc, o, steps, p.promote, tig);
        }
#pragma unroll
        for (int j = 0; j < D / 16; j++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                o[j][i] += acc[j][i];
        m *= 0.6931471805599453f;           // powers of two to e
        vs = __ldg(p.v_tensor + ts) / P_E4M3_SCALE;   // the codes as they are, P_E4M3_SCALE p
    }
    finish_block<D, G, true>(p, o, m, l, vs, [g](int j, int r) { return g * CPL + 2 * j + r; });
}

// ---------------------------------------------------------------------------
// Kernel selection

// The instances of one format (and FP8 path), by head dimension and group size.
template <int FMT, bool FP8_PATH_A = false, bool FP8_PV = false>
static const void *code_for(int D, int G)
{
    static const void *const BY_GROUP[2][4] = {
        {(const void *)code_kernel<FMT, 64, 1, FP8_PATH_A, FP8_PV>, (const void *)code_kernel<FMT, 64, 2, FP8_PATH_A, FP8_PV>,
         (const void *)code_kernel<FMT, 64, 4, FP8_PATH_A, FP8_PV>, (const void *)code_kernel<FMT, 64, 8, FP8_PATH_A, FP8_PV>},
        {(const void *)code_kernel<FMT, 128, 1, FP8_PATH_A, FP8_PV>, (const void *)code_kernel<FMT, 128, 2, FP8_PATH_A, FP8_PV>,
         (const void *)code_kernel<FMT, 128, 4, FP8_PATH_A, FP8_PV>, (const void *)code_kernel<FMT, 128, 8, FP8_PATH_A, FP8_PV>}};
    return BY_GROUP[D == 128][group_index(G)];
}

const void *code_mma_select(KvFormat f, int D, int G, Fp8Path fp8)
{
    switch (f) {
    case KV_FP8:
        return fp8 == FP8_C ? code_for<KV_FP8, true, true>(D, G)
             : fp8 == FP8_A ? code_for<KV_FP8, true>(D, G)
                            : code_for<KV_FP8>(D, G);
    case KV_INT8: return code_for<KV_INT8>(D, G);
    case KV_NVFP4: return code_for<KV_NVFP4>(D, G);
    default: return code_for<KV_MXFP4>(D, G);
    }
}

size_t code_mma_staging(KvFormat f, int D)
{
    const bool fp4 = f == KV_NVFP4 || f == KV_MXFP4;
    const int codes = 2 * MMA_TILE * (fp4 ? D / 2 : D);
    return (size_t)WARPS * code_stages(codes) * code_stage_bytes(f, D);
}
