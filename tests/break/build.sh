#!/bin/bash
# builds the break attacks into build/tests/break
cd "$(dirname "$0")/../.." || exit 1
mkdir -p build/tests/break
for f in tests/break/*.c; do
  gcc -std=c11 -D_GNU_SOURCE -D__HIP_PLATFORM_AMD__ -O1 -g -pthread -Isimhip -Itests/common -Itests/legacy "$f" \
    -o build/tests/break/$(basename "$f" .c) -L/usr/lib/x86_64-linux-gnu -lamdhip64 -ldl || echo "FAILED $f"
done
