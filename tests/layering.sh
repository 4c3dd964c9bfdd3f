#!/usr/bin/env bash
# layering.sh [--selftest] ROOT
#
# Fails when a project #include goes up the layer order of DESIGN.md:
#
#   base < sim < cluster < replication < appprofile < instance < scenarios
#        < durable < api < metrics < cli
#
# A file in one of these folders may include only its own folder and the
# folders before it. Three more rules:
# - sim/asio/ (the wall-clock runtime) is included only by sim/asio/, api/
#   and cli/;
# - cluster/internal/ (the storage engine's mechanisms) is included only by
#   cluster/ (and by tests/cluster/);
# - the generated protobuf messages of proto/ ("btsim/...", "google/...")
#   are included only from scenarios/ on: the core below speaks C++ types.
# Quoted includes of any other folder are flagged too. tests/ and bench/
# may include every layer. Whole-line comments are not scanned. --selftest
# plants violations in a scratch tree and checks that each is caught.
set -u -o pipefail

layers=(base sim cluster replication appprofile instance scenarios durable api metrics cli)

rank() {  # rank FOLDER: its place in `layers`, or nothing
  local i
  for i in "${!layers[@]}"; do
    [[ ${layers[i]} == "$1" ]] && { echo "$i"; return; }
  done
}

scan() {  # scan ROOT: prints violations, returns 1 if any
  local root=$1 found=0 layer file line target top from to
  for layer in "${layers[@]}"; do
    [[ -d $root/$layer ]] || continue
    from=$(rank "$layer")
    while IFS=: read -r file line target; do
      top=${target%%/*}
      if [[ $target == sim/asio/* ]]; then
        [[ $file == "$root/sim/asio/"* || $layer == api || $layer == cli ]] &&
          continue
        echo "layering violation: ${file#"$root/"}:$line includes $target" \
          "(sim/asio/ is for api/ and cli/ only)"
        found=1
        continue
      fi
      if [[ $target == cluster/internal/* ]]; then
        [[ $layer == cluster ]] && continue
        echo "layering violation: ${file#"$root/"}:$line includes $target" \
          "(cluster/internal/ is private to cluster/)"
        found=1
        continue
      fi
      if [[ $top == btsim || $top == google ]]; then
        ((from >= $(rank scenarios))) && continue
        echo "layering violation: ${file#"$root/"}:$line includes $target" \
          "(generated protobuf messages are for scenarios/ and above)"
        found=1
        continue
      fi
      to=$(rank "$top")
      if [[ -z $to ]]; then
        echo "layering violation: ${file#"$root/"}:$line includes $target" \
          "(not a layer of DESIGN.md)"
        found=1
      elif ((to > from)); then
        echo "layering violation: ${file#"$root/"}:$line includes $target" \
          "($layer/ is below $top/)"
        found=1
      fi
    done < <(grep -rnE --include='*.h' --include='*.cc' \
               '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$root/$layer" |
             sed -E 's/^([^:]+):([0-9]+):[^"]*"([^"]+)".*/\1:\2:\3/')
  done
  return $found
}

if [[ ${1:-} == --selftest ]]; then
  root=${2:?usage: layering.sh --selftest ROOT}
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch"/{cluster,sim/asio,api,scenarios}
  printf '#include "base/status.h"\n#include "sim/clock.h"\n' \
    >"$scratch/cluster/ok.cc"
  echo '#include "sim/asio/asio_scheduler.h"' >"$scratch/api/ok.cc"
  echo '#include "btsim/scenario/v1/scenario.pb.h"' >"$scratch/scenarios/ok.cc"
  echo '// #include "cli/run.h"' >"$scratch/sim/asio/ok.cc"
  if ! scan "$scratch" >/dev/null; then
    echo "FAIL: an include down the layers is flagged"
    scan "$scratch"
    exit 1
  fi
  for bad in '#include "replication/replicas.h"' \
             '#include "sim/asio/wall_clock.h"' \
             '#include "google/bigtable/v2/data.pb.h"' \
             '  #  include "scenarios/runner.h"' \
             '#include "tests/cluster/table_fixture.h"'; do
    echo "$bad" >"$scratch/cluster/bad.cc"
    if scan "$scratch" >/dev/null; then
      echo "FAIL: not caught in cluster/: $bad"
      exit 1
    fi
  done
  rm "$scratch/cluster/bad.cc"
  echo '#include "cluster/internal/tablet.h"' >"$scratch/cluster/ok.cc"
  echo '#include "cluster/internal/tablet.h"' >"$scratch/api/bad.cc"
  if scan "$scratch" >/dev/null; then
    echo "FAIL: not caught in api/: cluster/internal/"
    exit 1
  fi
  echo "selftest passed: includes up the layers are caught"
  exit 0
fi

root=${1:?usage: layering.sh [--selftest] ROOT}
if scan "$root"; then
  echo "layering: ok"
else
  exit 1
fi
