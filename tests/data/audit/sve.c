/* arm64 test program of the build audit per target (tests/unit/test_audit_targets_objdump.py):
   a loop GCC vectorises with SVE when the target has it (-O3 -march=armv8.2-a+sve). */
void axpy(float *restrict y, const float *restrict x, float a, int n) {
    for (int i = 0; i < n; i++) y[i] += a * x[i];
}

int main(int argc, char **argv) {
    (void)argv;
    float x[64], y[64];
    for (int i = 0; i < 64; i++) {
        x[i] = (float)i;
        y[i] = (float)argc;
    }
    axpy(y, x, 2.0f, argc * 16);
    return (int)y[3] & 1;
}
