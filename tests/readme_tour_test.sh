#!/usr/bin/env bash
# The README's tour and the docs' commands run as written (issue 42): every command of
# the README's "A short tour" block, in order, then every fabricsim command in a code
# block of docs/*.md, in a scratch copy of the repository's layout, except those listed
# in `expensive` below (minutes of CPU, a GPU, or mpirun) and, in the docs, those naming
# an input file that is a placeholder (my_algo.xml, CONFIG). A command passes when it
# exits 0, or with the exit code its comment names ("exit code 3").
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
expensive='calibrate nic|k32|k64|k16_permutation|mpirun|dgx_h100_16node_llama70b|calibrate gpu|scripts/accuracy|scripts/validate|sweep configs/sweeps/dgx_2node|plot busbw out/dgx_2node|plot breakdown|plot queues step.json|llama70b.yaml --trace|-e 1G|-e 8G|-e 256M|fabricsim run +#'
commands=$(awk '/^## A short tour/ {tour = 1} tour && /^```sh/ {inside = 1; next} inside && /^```/ {exit} inside' "$root/README.md" |
  sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta')
docs=$(for f in "$root"/docs/*.md; do
  awk '/^```/ {inside = !inside; next} inside' "$f" | sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' |
    grep -E "^(build/)?fabricsim |^scripts/" | sed -E 's|^fabricsim |build/fabricsim |'
done)
# A docs command whose input files are not in the repository is a pattern to follow, not a command.
placeholder() {
  local previous="" token
  for token in $1; do
    case $previous in -o|--out|--dot|--trace) previous=$token; continue ;; esac
    previous=$token
    if [[ $token =~ ^[A-Z_]+$ || $token == \[* || ( $token =~ \.(yaml|log|xml|jsonl|txt)$ && ! -e $work/$token ) ]]; then return 0; fi
  done
  return 1
}
ran=0; skipped=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  if [[ $line == DOCS* ]]; then
    line=${line#DOCS }
    if placeholder "${line%%  #*}"; then skipped=$((skipped + 1)); echo "skip (placeholder) $line"; continue; fi
  fi
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
done <<<"$commands
$(echo "$docs" | sed 's/^/DOCS /')"
echo "tour: $ran run, $skipped skipped as expensive"
[ $ran -gt 10 ] || { echo "FAIL too few tour commands found"; fail=1; }
exit $fail
