/* The ordering counts of one layer's chunk of scores (lnrecency.numerics.orderings), compiled.
 *
 * counts(s, b, n, greater, recent, rows)
 *   s        float64 (b, n, n), C order: masked scores, row i holds S_ij for j <= i
 *   greater  int64 (n, n, n), C order, added to: #{draws : S_ij > S_ik}, j, k <= i
 *   recent   int64 (b,), added to: #{j < k < i : S_ik > S_ij} per draw
 *   rows     float64 (n * b,) scratch
 *
 * Every pair j < k <= i of a row is compared once per draw, for both orders, over the draws held
 * contiguously (so the compiler vectorises the innermost loop). Exact integer counts of float64
 * comparisons: the same integers as the numpy fallback. The GIL is released during the loops. Plain C
 * and the buffer protocol only (no numpy headers).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

/* AVX2 where the CPU has it (4x faster here: the comparison masks and 64-bit sums vectorise), chosen at load
 * time by the compiler's function multi-versioning; the baseline build elsewhere. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("avx2", "default")))
#endif
#endif
static void count_chunk_portable(const double *restrict s, Py_ssize_t b, Py_ssize_t n, int64_t *restrict greater,
                                 int64_t *restrict recent, double *restrict rows) {
    for (Py_ssize_t i = 1; i < n; i++) {
        for (Py_ssize_t t = 0; t < b; t++) {
            const double *row = s + (t * n + i) * n;
            for (Py_ssize_t j = 0; j <= i; j++) rows[j * b + t] = row[j];
        }
        for (Py_ssize_t j = 0; j <= i; j++) {
            const double *restrict x = rows + j * b;
            for (Py_ssize_t k = j + 1; k <= i; k++) {
                const double *restrict y = rows + k * b;
                int64_t gt = 0, lt = 0;
                if (k < i) { /* j < k < i: S_ik > S_ij is a recency event of draw t */
                    for (Py_ssize_t t = 0; t < b; t++) {
                        int64_t a = x[t] > y[t], c = x[t] < y[t];
                        gt += a;
                        lt += c;
                        recent[t] += c;
                    }
                } else {
                    for (Py_ssize_t t = 0; t < b; t++) {
                        gt += x[t] > y[t];
                        lt += x[t] < y[t];
                    }
                }
                greater[(i * n + j) * n + k] += gt;
                greater[(i * n + k) * n + j] += lt;
            }
        }
    }
}

/* The same counts with AVX-512 (4.9 against 6.9 us a draw and layer for the AVX2 clone at n = 50, b = 32, best of
 * 6 in a harness; in place: benchmarks/bench_mc.py --sections breakdown): 8 draws per comparison, each comparison a bit mask counted by popcount, the recency
 * events added to the draws' counts under the mask. Integers, so the same counts as the loops above. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target)
#include <immintrin.h>
#define HAVE_AVX512_COUNTS 1
__attribute__((target("avx512f,popcnt")))
static void count_chunk_avx512(const double *restrict s, Py_ssize_t b, Py_ssize_t n, int64_t *restrict greater,
                               int64_t *restrict recent, double *restrict rows) {
    const __m512i one = _mm512_set1_epi64(1);
    const Py_ssize_t full = b - b % 8;
    const __mmask8 tail = (__mmask8)((1u << (b - full)) - 1u);
    for (Py_ssize_t i = 1; i < n; i++) {
        for (Py_ssize_t t = 0; t < b; t++) {
            const double *row = s + (t * n + i) * n;
            for (Py_ssize_t j = 0; j <= i; j++) rows[j * b + t] = row[j];
        }
        for (Py_ssize_t j = 0; j <= i; j++) {
            const double *x = rows + j * b;
            for (Py_ssize_t k = j + 1; k <= i; k++) {
                const double *y = rows + k * b;
                int64_t gt = 0, lt = 0;
                Py_ssize_t t = 0;
                for (; t < full; t += 8) {
                    __m512d xv = _mm512_loadu_pd(x + t), yv = _mm512_loadu_pd(y + t);
                    __mmask8 mg = _mm512_cmp_pd_mask(xv, yv, _CMP_GT_OQ), ml = _mm512_cmp_pd_mask(xv, yv, _CMP_LT_OQ);
                    gt += __builtin_popcount((unsigned)mg);
                    lt += __builtin_popcount((unsigned)ml);
                    if (k < i) { /* j < k < i: S_ik > S_ij is a recency event of draw t */
                        __m512i r = _mm512_loadu_si512((const void *)(recent + t));
                        _mm512_storeu_si512((void *)(recent + t), _mm512_mask_add_epi64(r, ml, r, one));
                    }
                }
                if (tail) {
                    __m512d xv = _mm512_maskz_loadu_pd(tail, x + t), yv = _mm512_maskz_loadu_pd(tail, y + t);
                    __mmask8 mg = _mm512_mask_cmp_pd_mask(tail, xv, yv, _CMP_GT_OQ);
                    __mmask8 ml = _mm512_mask_cmp_pd_mask(tail, xv, yv, _CMP_LT_OQ);
                    gt += __builtin_popcount((unsigned)mg);
                    lt += __builtin_popcount((unsigned)ml);
                    if (k < i) {
                        __m512i r = _mm512_maskz_loadu_epi64(tail, (const void *)(recent + t));
                        _mm512_mask_storeu_epi64((void *)(recent + t), tail, _mm512_mask_add_epi64(r, ml, r, one));
                    }
                }
                greater[(i * n + j) * n + k] += gt;
                greater[(i * n + k) * n + j] += lt;
            }
        }
    }
}
#endif
#endif

static void count_chunk(const double *restrict s, Py_ssize_t b, Py_ssize_t n, int64_t *restrict greater,
                        int64_t *restrict recent, double *restrict rows) {
#ifdef HAVE_AVX512_COUNTS
    static int avx512 = -1;
    if (avx512 < 0) {
        __builtin_cpu_init();
        avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
    }
    if (avx512 && !getenv("LNRECENCY_NO_AVX512")) {
        count_chunk_avx512(s, b, n, greater, recent, rows);
        return;
    }
#endif
    count_chunk_portable(s, b, n, greater, recent, rows);
}

/* elem * a * b * c in *out when every factor is >= 0 and the product fits a Py_ssize_t; otherwise 0 (never a
 * product that wraps around: every buffer size is checked with this before it is compared or used) */
static int size_of(Py_ssize_t *out, Py_ssize_t elem, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c) {
    const Py_ssize_t f[3] = {a, b, c};
    Py_ssize_t p = elem;
    for (int q = 0; q < 3; q++) {
        if (f[q] < 0 || (f[q] != 0 && p > PY_SSIZE_T_MAX / f[q])) return 0;
        p *= f[q];
    }
    *out = p;
    return 1;
}

/* whether each buffer holds exactly the bytes its (b, n) shape needs; a ValueError naming the first that does not
 * (or the sizes whose products overflow) otherwise */
static int sizes_match(const char *fn, Py_ssize_t b, Py_ssize_t n, int count, const char *const *names,
                       const Py_buffer *const *bufs, const Py_ssize_t (*shapes)[4]) {
    if (b < 0 || n < 0) {
        PyErr_Format(PyExc_ValueError, "%s: b and n must be >= 0; got b=%zd, n=%zd", fn, b, n);
        return 0;
    }
    for (int q = 0; q < count; q++) {
        Py_ssize_t need;
        if (!size_of(&need, shapes[q][0], shapes[q][1], shapes[q][2], shapes[q][3])) {
            PyErr_Format(PyExc_ValueError, "%s: b=%zd, n=%zd: the size of %s overflows; refused", fn, b, n,
                         names[q]);
            return 0;
        }
        if (bufs[q]->len != need) {
            PyErr_Format(PyExc_ValueError, "%s: %s holds %zd bytes; b=%zd, n=%zd need %zd", fn, names[q],
                         bufs[q]->len, b, n, need);
            return 0;
        }
    }
    return 1;
}

static PyObject *counts(PyObject *self, PyObject *args) {
    Py_buffer s, greater, recent, rows;
    Py_ssize_t b, n;
    if (!PyArg_ParseTuple(args, "y*nnw*w*w*", &s, &b, &n, &greater, &recent, &rows)) return NULL;
    PyObject *result = NULL;
    const char *const names[] = {"s", "greater", "recent", "rows"};
    const Py_buffer *const bufs[] = {&s, &greater, &recent, &rows};
    const Py_ssize_t shapes[][4] = {{(Py_ssize_t)sizeof(double), b, n, n}, {(Py_ssize_t)sizeof(int64_t), n, n, n},
                                    {(Py_ssize_t)sizeof(int64_t), b, 1, 1}, {(Py_ssize_t)sizeof(double), n, b, 1}};
    if (sizes_match("counts", b, n, 4, names, bufs, shapes)) {
        Py_BEGIN_ALLOW_THREADS
        count_chunk((const double *)s.buf, b, n, (int64_t *)greater.buf, (int64_t *)recent.buf, (double *)rows.buf);
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&s);
    PyBuffer_Release(&greater);
    PyBuffer_Release(&recent);
    PyBuffer_Release(&rows);
    return result;
}

/* The fused pass of a sub-batch (lnrecency.numerics.orderings.accumulate): the ordering counts above, and the
 * row moments of the deviations d_ij = S_ij - ref_ij, j <= i, summed over the draws in draw order:
 *   sum1[i, j] += d_ij,   cross[i, j, k] += d_ij d_ik (j <= k <= i; the caller mirrors the other half).
 * No fused multiply-add (-ffp-contract=off): every clone rounds alike. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("avx2", "default")))
#endif
#endif
static void row_moments(const double *restrict s, Py_ssize_t b, Py_ssize_t n, const double *restrict ref,
                        double *restrict sum1, double *restrict cross, double *restrict d) {
    /* d: 4 rows of n deviations; four draws share one pass over row i's block of cross moments, each element
     * still adding the draws' products one after another in draw order (the same bits as one draw at a time) */
    double *d0 = d, *d1 = d + n, *d2 = d + 2 * n, *d3 = d + 3 * n;
    for (Py_ssize_t i = 0; i < n; i++) { /* row i's block of cross moments stays in the cache over the draws */
        const double *r = ref + i * n;
        double *s1 = sum1 + i * n;
        Py_ssize_t t = 0;
        for (; t + 4 <= b; t += 4) {
            const double *row0 = s + (t * n + i) * n, *row1 = row0 + n * n, *row2 = row1 + n * n,
                         *row3 = row2 + n * n;
            for (Py_ssize_t j = 0; j <= i; j++) {
                d0[j] = row0[j] - r[j];
                d1[j] = row1[j] - r[j];
                d2[j] = row2[j] - r[j];
                d3[j] = row3[j] - r[j];
                s1[j] = (((s1[j] + d0[j]) + d1[j]) + d2[j]) + d3[j];
            }
            for (Py_ssize_t j = 0; j <= i; j++) {
                const double a0 = d0[j], a1 = d1[j], a2 = d2[j], a3 = d3[j];
                double *restrict c = cross + (i * n + j) * n;
                for (Py_ssize_t k = j; k <= i; k++)
                    c[k] = (((c[k] + a0 * d0[k]) + a1 * d1[k]) + a2 * d2[k]) + a3 * d3[k];
            }
        }
        for (; t < b; t++) {
            const double *row = s + (t * n + i) * n;
            for (Py_ssize_t j = 0; j <= i; j++) {
                d0[j] = row[j] - r[j];
                s1[j] += d0[j];
            }
            for (Py_ssize_t j = 0; j <= i; j++) {
                const double a0 = d0[j];
                double *restrict c = cross + (i * n + j) * n;
                for (Py_ssize_t k = j; k <= i; k++) c[k] += a0 * d0[k];
            }
        }
    }
}

static PyObject *accumulate(PyObject *self, PyObject *args) {
    Py_buffer s, ref, sum1, cross, greater, recent, rows;
    Py_ssize_t b, n;
    if (!PyArg_ParseTuple(args, "y*nny*w*w*w*w*w*", &s, &b, &n, &ref, &sum1, &cross, &greater, &recent, &rows))
        return NULL;
    PyObject *result = NULL;
    const char *const names[] = {"s", "ref", "sum1", "cross", "greater", "recent", "rows"};
    const Py_buffer *const bufs[] = {&s, &ref, &sum1, &cross, &greater, &recent, &rows};
    const Py_ssize_t d = (Py_ssize_t)sizeof(double), i64 = (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t shapes[][4] = {{d, b, n, n}, {d, n, n, 1}, {d, n, n, 1}, {d, n, n, n}, {i64, n, n, n},
                                    {i64, b, 1, 1}, {d, n, b, 1}};
    if (sizes_match("accumulate", b, n, 7, names, bufs, shapes)) {
        Py_BEGIN_ALLOW_THREADS
        row_moments((const double *)s.buf, b, n, (const double *)ref.buf, (double *)sum1.buf, (double *)cross.buf,
                    (double *)rows.buf);
        count_chunk((const double *)s.buf, b, n, (int64_t *)greater.buf, (int64_t *)recent.buf, (double *)rows.buf);
        Py_END_ALLOW_THREADS
        result = Py_None;
        Py_INCREF(result);
    }
    PyBuffer_Release(&s);
    PyBuffer_Release(&ref);
    PyBuffer_Release(&sum1);
    PyBuffer_Release(&cross);
    PyBuffer_Release(&greater);
    PyBuffer_Release(&recent);
    PyBuffer_Release(&rows);
    return result;
}

static PyMethodDef methods[] = {
    {"counts", counts, METH_VARARGS, "counts(s, b, n, greater, recent, rows): see the file's comment."},
    {"accumulate", accumulate, METH_VARARGS,
     "accumulate(s, b, n, ref, sum1, cross, greater, recent, rows): row moments and ordering counts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_orderings", NULL, -1, methods};

PyMODINIT_FUNC PyInit__orderings(void) { return PyModule_Create(&module); }
