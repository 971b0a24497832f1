#!/usr/bin/env bash
# `make docker-test`: build the images from docker/Dockerfile and run them for real.
#
#   1. the server image: `simserver --help`, non-root user, healthcheck declared;
#   2. a short scripted run inside the container (exit 0, JSON summary written);
#   3. docker/compose.yaml: the kitbot robot program and simserver's autonomous scenario check
#      in lock-step (exit 0, the JSON verdict "passed": true);
#   4. the same images with a scenario that must fail (exit 1, "overall: FAIL").
#
# Uses docker (with `docker compose`) when a Docker engine answers, else podman prepared by
# ../shared/tools/container-env with podman-compose from docker/.compose-venv (pinned).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
out="$here/out"
fail() { echo "docker-test: FAIL: $*" >&2; exit 1; }
step() { echo "docker-test: $*" >&2; }

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  engine=docker
  compose=(docker compose)
else
  env_script=${CONTAINER_ENV:-}
  for candidate in "$env_script" "$repo/../shared/tools/container-env" /work/shared/tools/container-env; do
    if [ -n "$candidate" ] && [ -f "$candidate" ]; then env_script=$candidate; break; fi
  done
  [ -f "${env_script:-/nonexistent}" ] || fail "no Docker engine and no podman setup script (set CONTAINER_ENV to ../shared/tools/container-env)"
  # shellcheck disable=SC1090
  source "$env_script"
  engine=podman
  if [ ! -x "$here/.compose-venv/bin/podman-compose" ]; then
    python3 -m venv "$here/.compose-venv"
    "$here/.compose-venv/bin/pip" install --quiet "podman-compose==1.6.0"
  fi
  compose=("$here/.compose-venv/bin/podman-compose")
fi
step "engine: $engine"

build=("$engine" build -q -f "$here/Dockerfile")
run=("$engine" run --rm)
if [ "$engine" = podman ]; then
  build+=(--format docker)  # keeps HEALTHCHECK (OCI images have none)
  run+=(--no-healthcheck)   # podman schedules health checks through systemd, absent here
fi
step "building simserver and simserver-robot"
"${build[@]}" -t simserver "$repo" >/dev/null
"${build[@]}" -t simserver-robot --target robot "$repo" >/dev/null

step "1. simserver --help as a non-root user"
help=$("${run[@]}" simserver --help)
grep -q "Usage: simserver" <<<"$help" || fail "--help printed: $help"
uid=$("${run[@]}" --entrypoint id simserver -u)
[ "$uid" != 0 ] || fail "the image runs as root"
health=$("$engine" image inspect --format '{{json .Config.Healthcheck}}' simserver)
grep -q "simserver" <<<"$health" || fail "no healthcheck declared: $health"
"${run[@]}" simserver --version >/dev/null || fail "the healthcheck command fails"

rm -rf "$out" && mkdir -p "$out" && chmod 777 "$out"
step "2. a scripted run in the container"
"${run[@]}" -v "$repo/simserver/data:/data:ro" -v "$out:/out" simserver \
  run --inputs /data/s_curve.csv --fast --duration 5 --json /out/scripted.json --no-progress \
  >"$out/scripted.log" 2>&1 || fail "scripted run exited $?: $(cat "$out/scripted.log")"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]; assert abs(s["sim_time"] - 5) < 0.02 and s["distance"] > 1, s' \
  "$out/scripted.json" || fail "scripted.json: $(cat "$out/scripted.json")"

step "3. compose: the kitbot's autonomous scenario check in lock-step (must pass)"
cd "$here"
set +e
"${compose[@]}" -f compose.yaml up --exit-code-from simserver >"$out/compose.log" 2>&1
code=$?
set -e
"${compose[@]}" -f compose.yaml down >/dev/null 2>&1 || true
[ "$code" = 0 ] || fail "compose exited $code: $(tail -30 "$out/compose.log")"
grep -q "overall: PASS" "$out/compose.log" || fail "no PASS in the compose log"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["passed"] is True' \
  "$out/result.json" || fail "result.json: $(cat "$out/result.json")"

step "4. a scenario that must fail: exit 1 with the report"
cat >"$out/bad-check.toml" <<'EOF'
enable = "autonomous"
duration = "6 s"
[expect]
final_pose = { x = "7.5 m", y = "5.5 m", tolerance = "0.15 m" }
EOF
"$engine" rm -f simserver-test-robot >/dev/null 2>&1 || true
"$engine" run -d --name simserver-test-robot simserver-robot >/dev/null
set +e
"${run[@]}" --network container:simserver-test-robot \
  -v "$repo/examples/kitbot:/robot:ro" -v "$out:/out" simserver \
  run /robot/simserver.toml --lockstep --fast --check /out/bad-check.toml --wait 120 \
  --no-progress >"$out/fail.log" 2>&1
code=$?
set -e
"$engine" rm -f simserver-test-robot >/dev/null 2>&1 || true
[ "$code" = 1 ] || fail "failing scenario exited $code: $(tail -20 "$out/fail.log")"
grep -q "overall: FAIL (1 of 1 checks failed)" "$out/fail.log" || fail "no FAIL report: $(tail -20 "$out/fail.log")"

step "5. examples/ci/simserver.yml's commands: robot program on the host, simserver image on --network host"
python=${PYTHON:-$repo/.venv/bin/python}
[ -x "$python" ] || fail "no $python with RobotPy (run make test first, or set PYTHON)"
(cd "$repo/examples/kitbot" && exec "$python" -m robotpy sim --nogui --simserver) >"$out/host-robot.log" 2>&1 &
robot_pid=$!
set +e
"${run[@]}" --network host -v "$repo/examples/kitbot:/robot:ro" -v "$out:/out" simserver \
  run /robot/simserver.toml --lockstep --fast --check /robot/auto-check.toml \
  --json /out/host-result.json --wait 120 --no-progress >"$out/host.log" 2>&1
code=$?
set -e
wait "$robot_pid" 2>/dev/null || true
[ "$code" = 0 ] || fail "the CI recipe's check exited $code: $(tail -20 "$out/host.log")"
grep -q "overall: PASS" "$out/host.log" || fail "no PASS: $(tail -20 "$out/host.log")"

step "all passed"
