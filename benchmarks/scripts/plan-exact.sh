#!/usr/bin/env bash
# Measures `rnicsim plan --exact` on workloads of 4 KiB pages: wall time, CPU time (user + system, all threads),
# peak resident memory and peak live heap (the largest heap in use after a garbage collection, from the GC log) for
# each total size given (default: 4G 16G 64G), as N regions of 1 GiB, with the heap capped (default -Xmx8g).
# Usage: benchmarks/scripts/plan-exact.sh [SIZE_GIB ...]     e.g. benchmarks/scripts/plan-exact.sh 16 64 1024
# Environment: HEAP (default 8g), REGION (region size, default 1G).
set -euo pipefail
cd "$(dirname "$0")/../.."
heap="${HEAP:-8g}"
region="${REGION:-1G}"
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(4 16 64)
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
./rnicsim plan --help > /dev/null   # build once, outside the measurement
region_gib=$(( ${region%G} ))
printf '%-10s %-10s %10s %10s %14s %15s %9s %s\n' "total" "regions" "wall (s)" "CPU (s)" "peak RSS (MiB)" \
  "live heap (MiB)" "heap cap" "verdict"
for gib in "${sizes[@]}"; do
  count=$(( gib / region_gib ))
  [ "$count" -lt 1 ] && count=1
  w="$dir/w-$gib.json"
  printf '{"groups":[{"name":"data","count":%d,"size":"%s","backing":"4k"}]}\n' "$count" "$region" > "$w"
  ram=$(( gib * 2 > 64 ? gib * 2 : 64 ))
  [ "$ram" -gt 4096 ] && ram=4096
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time" env JAVA_TOOL_OPTIONS="-Xmx$heap -Xlog:gc:file=$dir/gc.log" \
    ./rnicsim plan --exact --ram "${ram}G" --memlock unlimited --workload "$w" > "$dir/out" 2> "$dir/err" || true
  read -r wall user sys rss < <(tail -n 1 "$dir/time")
  cpu=$(echo "$user + $sys" | bc)
  verdict=$(grep -E '^(everything fits|first limit)' "$dir/out" || tail -n 1 "$dir/err")
  # "Pause Young (Normal) (G1 Evacuation Pause) 900M->120M(1024M) 3.1ms": the figure after the arrow, largest.
  live=$(grep -oE -- '->[0-9]+M' "$dir/gc.log" | tr -d '>M-' | sort -n | tail -n 1)
  printf '%-10s %-10s %10s %10s %14s %15s %9s %s\n' "${gib}G" "$count" "$wall" "$cpu" "$(( rss / 1024 ))" \
    "${live:-0}" "$heap" "$verdict"
done
