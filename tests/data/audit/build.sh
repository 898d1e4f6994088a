#!/bin/sh
# Rebuilds the build audit's test programs (tests/unit/test_audit_programs.py) from
# atomics.c, bti.c and levels.c with Debian 12's compilers: gcc for x86-64 and
# gcc-aarch64-linux-gnu for arm64 (`apt-get install gcc-aarch64-linux-gnu`). The binaries
# are committed, so the tests need no compiler; rebuilding may change their bytes, never
# what the tests assert about them.
set -eu
cd "$(dirname "$0")"
# -z norelro keeps 64 KiB-aligned files small (no padding up to the next 64 KiB)
arm() { aarch64-linux-gnu-gcc -O2 -frecord-gcc-switches -Wl,-z,norelro "$@"; }
arm -march=armv8-a -mno-outline-atomics atomics.c -o arm64-v8.0
arm -march=armv8-a -moutline-atomics atomics.c -o arm64-outline
arm -march=armv8-a -moutline-atomics -s atomics.c -o arm64-outline-stripped
arm -march=armv8.1-a atomics.c -o arm64-lse
arm -march=armv8-a+crc+crypto -mno-outline-atomics atomics.c -o arm64-crc
arm -march=armv8-a -mno-outline-atomics -Wl,-z,max-page-size=4096 atomics.c -o arm64-4k
arm -march=armv8-a -mno-outline-atomics -Wl,-z,max-page-size=65536 atomics.c -o arm64-64k
aarch64-linux-gnu-gcc -O2 -nostdlib -static -mbranch-protection=standard bti.c -o arm64-bti
for level in x86-64 x86-64-v2 x86-64-v3 x86-64-v4; do
  gcc -O3 -frecord-gcc-switches -march="$level" levels.c -o "amd64-$level"
done
gcc -O3 -frecord-gcc-switches -march=x86-64 -DDISPATCH levels.c -o amd64-dispatch
printf '#!/bin/sh\nexec mariadbd "$@"\n' > script
