#!/usr/bin/env bash
# The README's tour runs as written (issue 42): every command of its "A short tour" block,
# in order, in a scratch copy of the repository's layout, except those listed in
# `expensive` below (minutes of CPU, a GPU, or mpirun). A command passes when it exits 0,
# or with the exit code its comment names ("exit code 3").
set -u
bin=$1; root=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail=0
mkdir -p "$work/build"
ln -s "$bin" "$work/build/fabricsim"
cp -r "$root/configs" "$work/configs"   # the tour writes a trace into configs/
ln -s "$root/scripts" "$work/scripts"
ln -s "$root/tests" "$work/tests"
# Too slow or needing hardware for CI; each is run elsewhere or by hand.
expensive='k32|k64|k16_permutation|mpirun|dgx_h100_16node_llama70b|calibrate gpu|scripts/accuracy|scripts/validate|sweep configs/sweeps/dgx_2node|plot busbw out/dgx_2node|plot breakdown|plot queues step.json|llama70b.yaml --trace|-e 1G|-e 256M|fabricsim run +#'
commands=$(awk '/^## A short tour/ {tour = 1} tour && /^```sh/ {inside = 1; next} inside && /^```/ {exit} inside' "$root/README.md" |
  sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta')
ran=0; skipped=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  command=${line%%  #*}
  comment=${line#"$command"}
  if echo "$line" | grep -Eq -- "$expensive"; then
    skipped=$((skipped + 1)); echo "skip $command"; continue
  fi
  want=0
  if [[ $comment =~ exit\ code\ ([0-9]+) ]]; then want=${BASH_REMATCH[1]}; fi
  (cd "$work" && timeout 300 bash -c "$command" >"$work/last.out" 2>&1); rc=$?
  ran=$((ran + 1))
  if [ $rc -eq "$want" ]; then echo "ok   $command"; else echo "FAIL $command (exit $rc, expected $want)"; tail -5 "$work/last.out"; fail=1; fi
done <<<"$commands"
echo "tour: $ran run, $skipped skipped as expensive"
[ $ran -gt 10 ] || { echo "FAIL too few tour commands found"; fail=1; }
exit $fail
