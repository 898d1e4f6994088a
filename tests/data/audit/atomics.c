/* arm64 test program of the build audit (tests/unit/test_audit_programs.py): atomics in
   several functions, and CRC32 and PMULL when the target has them. Built by build.sh. */
#include <stdint.h>
#include <stddef.h>
#if defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif
#if defined(__ARM_FEATURE_AES)
#include <arm_neon.h>
#endif

long counter;
int flag;

long bump(long by) { return __atomic_fetch_add(&counter, by, __ATOMIC_ACQ_REL); }

int claim(int expected, int wanted) {
    return __atomic_compare_exchange_n(&flag, &expected, wanted, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

long swap(long value) { return __atomic_exchange_n(&counter, value, __ATOMIC_SEQ_CST); }

uint32_t checksum(const uint8_t *data, size_t size) {
    uint32_t crc = 0xffffffffu;
#if defined(__ARM_FEATURE_CRC32)
    for (size_t i = 0; i < size; i++) crc = __crc32cb(crc, data[i]);
#else
    for (size_t i = 0; i < size; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1u));
    }
#endif
    return ~crc;
}

uint64_t fold(uint64_t a, uint64_t b) {
#if defined(__ARM_FEATURE_AES)
    poly128_t product = vmull_p64((poly64_t)a, (poly64_t)b);
    return (uint64_t)product ^ (uint64_t)(product >> 64);
#else
    return a * b;
#endif
}

int main(int argc, char **argv) {
    (void)argv;
    uint8_t bytes[4] = {1, 2, 3, (uint8_t)argc};
    bump(argc);
    claim(0, argc);
    return (int)(swap(argc) + checksum(bytes, sizeof bytes) + fold((uint64_t)argc, 3)) & 1;
}
