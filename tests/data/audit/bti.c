/* arm64 test program of the build audit: nothing but an exit, built without libc so every
   input carries the branch-protection notes (BTI and PAC end up in the program). */
void _start(void) {
    register long x8 __asm__("x8") = 93; /* exit */
    register long x0 __asm__("x0") = 0;
    __asm__ volatile("svc 0" : : "r"(x8), "r"(x0));
    for (;;) {}
}
