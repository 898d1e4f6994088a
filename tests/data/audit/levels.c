/* x86-64 test program of the build audit (tests/unit/test_audit_programs.py): integer,
   bit-counting and vector work spread over several functions, so a build for a level
   shows that level's instructions in most of them. `hot_path` alone may be built for
   AVX2 (a path a baseline program would choose at run time). Built by build.sh. */
#include <stddef.h>
#include <stdint.h>

#ifdef DISPATCH
#define TARGET_AVX2 __attribute__((target("avx2")))
#else
#define TARGET_AVX2
#endif

int bits(uint64_t x) { return __builtin_popcountll(x); }

int bits_total(const uint64_t *v, size_t n) {
    int total = 0;
    for (size_t i = 0; i < n; i++) total += __builtin_popcountll(v[i] ^ (v[i] >> 3));
    return total;
}

void scale(float *restrict a, const float *restrict b, size_t n) {
    for (size_t i = 0; i < n; i++) a[i] = a[i] * b[i] + 1.0f;
}

void widen(uint64_t *restrict a, const uint64_t *restrict b, size_t n) {
    for (size_t i = 0; i < n; i++) a[i] = a[i] * b[i];
}

void clamp(uint64_t *restrict a, const uint64_t *restrict b, size_t n) {
    for (size_t i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] : b[i];
}

uint64_t shifts(uint64_t x, unsigned by) { return (x << by) ^ (x >> (by + 1)) ^ ((int64_t)x >> (by + 2)); }

void floor_all(double *a, size_t n) {
    for (size_t i = 0; i < n; i++) a[i] = __builtin_floor(a[i]);
}

TARGET_AVX2 void hot_path(int32_t *restrict a, const int32_t *restrict b, size_t n) {
    for (size_t i = 0; i < n; i++) a[i] = a[i] * b[i] + (a[i] >> 2);
}

int main(int argc, char **argv) {
    (void)argv;
    uint64_t v[8] = {1, 2, 3, 4, 5, 6, 7, (uint64_t)argc};
    float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double d[4] = {1.5, 2.5, 3.5, 4.5};
    int32_t i[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    scale(f, f, 8);
    widen(v, v, 8);
    clamp(v, v, 8);
    floor_all(d, 4);
    hot_path(i, i, 8);
    return (bits(v[0]) + bits_total(v, 8) + (int)shifts(v[1], (unsigned)argc) + (int)f[0] + (int)d[0] + i[0]) & 1;
}
