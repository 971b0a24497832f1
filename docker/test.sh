#!/usr/bin/env bash
# `make docker-test`: docs/ci.md's container commands, run as written on a fresh copy of the
# checkout, and what that page promises about them.
#
#   1. the commands of docs/ci.md's sections "The image" and "Compose" (tools/doc_commands.py
#      extracts them), with no out/: the images build, --help, a scripted run, the kitbot's
#      autonomous scenario check in compose; each exits 0, scripted.json and
#      docker/out/result.json ("passed": true) are written, the image declares its healthcheck;
#   2. out/ made by a normal user (uid 1000, with `mkdir`: mode 755): "The image" commands
#      again; the files in out/ are that user's;
#   3. health: a running simserver is that user with no capabilities and is healthy; frozen
#      (SIGSTOP) the container turns unhealthy, thawed (SIGCONT) healthy again;
#   4. the same images with a scenario that must fail: exit 1, "overall: FAIL";
#   5. a robot program on the host (ROBOT_PYTHON, the make venv's) and the simserver image on
#      --network host beside it (the team recipes in examples/ci install with pip instead:
#      tests/e2e/test_ci_recipes.py runs them);
#   6. with ROOTLESS_USER set (a user with subuids) and podman: "The image" commands as that user
#      with rootless podman in their own copy; the files in out/ are theirs.
#
# Uses docker (with `docker compose`) when a Docker engine answers, else podman prepared by
# ../shared/tools/container-env, standing in for docker as docs/ci.md's "Podman" section says
# (BUILDAH_FORMAT=docker, podman-compose 1.6 from docker/.compose-venv).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
user=1000:1000  # "a normal user" of steps 2 and 3
fail() { echo "docker-test: FAIL: $*" >&2; echo "docker-test: logs and files in ${fresh:-(none yet)}" >&2; exit 1; }
step() { echo "docker-test: $(date +%T) $*" >&2; }

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
  export BUILDAH_FORMAT=docker  # keeps HEALTHCHECK, in podman-compose's builds too
  docker() {  # the docs' `docker ...` commands, with podman standing in
    if [ "$1" = compose ]; then shift; "${compose[@]}" "$@"; else podman "$@"; fi
  }
fi
step "engine: $engine"

# A fresh copy of the checkout: its tracked and new files, no venv, no out/.
fresh=$(mktemp -d /tmp/simserver-docker-test.XXXXXX)
logs="$fresh/.docker-test"
mkdir -p "$logs"
(cd "$repo" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$fresh" -xf -
rm -rf "$fresh/out" "$fresh/docker/out"/*.json
cleanup() {
  "$engine" rm -f simserver-test-robot simserver-test-health >/dev/null 2>&1 || true
  (cd "$fresh/docker" && "${compose[@]}" -f compose.yaml down >/dev/null 2>&1) || true
}
trap cleanup EXIT

# run_docs SECTION...: the commands of those sections of docs/ci.md, as written, in the fresh
# copy; each must exit 0. Output in $logs/docs-N.log.
n=0
run_docs() {
  local cmds cmd
  cmds=$(python3 "$fresh/tools/doc_commands.py" "$fresh/docs/ci.md" "$@") || fail "docs/ci.md: $*"
  while IFS= read -r cmd; do
    n=$((n + 1))
    step "  \$ $cmd"
    (cd "$fresh" && eval "$cmd") >"$logs/docs-$n.log" 2>&1 </dev/null \
      || fail "exit $? from: $cmd: $(tail -30 "$logs/docs-$n.log")"
  done <<<"$cmds"
}
json() {  # json FILE PYTHON-EXPRESSION-OF-d: exit 1 unless true
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

step "1. docs/ci.md \"The image\" and \"Compose\" as written (no out/ yet)"
run_docs "The image" "Compose"
grep -qs "Usage: simserver" "$logs"/docs-*.log || fail "no --help output"
json "$fresh/out/scripted.json" 'abs(d["summary"]["sim_time"] - 5) < 0.02 and d["summary"]["distance"] > 1' \
  || fail "out/scripted.json: $(cat "$fresh/out/scripted.json")"
grep -qs "overall: PASS" "$logs"/docs-*.log || fail "no PASS in the compose log"
json "$fresh/docker/out/result.json" 'd["passed"] is True' \
  || fail "docker/out/result.json: $(cat "$fresh/docker/out/result.json")"
(cd "$fresh/docker" && "${compose[@]}" -f compose.yaml down >/dev/null 2>&1) || true
version=$(python3 "$fresh/tools/version.py")
[ "$("$engine" run --rm simserver --version)" = "simserver, version $version" ] \
  || fail "the image's simserver --version is not $version"
health=$("$engine" image inspect --format '{{json .Config.Healthcheck}}' simserver)
grep -q '"simserver","health"' <<<"$health" || fail "no healthcheck declared: $health"

step "2. out/ made by a normal user (uid ${user%:*}, mkdir, mode 755): \"The image\" again"
rm -rf "$fresh/out"
chown "$user" "$fresh"  # the top only: the build context keeps its owners, and its cached layers
setpriv --reuid="${user%:*}" --regid="${user#*:}" --clear-groups sh -c 'umask 022 && mkdir "$1"' \
  sh "$fresh/out"
run_docs "The image"
owner=$(stat -c '%u:%g %a' "$fresh/out" "$fresh/out/scripted.json" | sort -u | tr '\n' ' ')
[ "$owner" = "$user 644 $user 755 " ] || fail "out/ and out/scripted.json are $owner (expected $user, no chmod)"

step "3. health: healthy while running, unhealthy frozen (SIGSTOP), healthy thawed (SIGCONT)"
health_is() {  # health_is WANT SECONDS: the container's health status becomes WANT in time
  local until=$((SECONDS + $2)) status=
  while [ "$SECONDS" -le "$until" ]; do
    if [ "$engine" = podman ]; then  # no systemd here to schedule the checks: run one now
      podman healthcheck run simserver-test-health >/dev/null 2>&1 || true
    fi
    status=$("$engine" inspect --format '{{.State.Health.Status}}' simserver-test-health)
    [ "$status" = "$1" ] && return 0
    sleep 1
  done
  fail "health is $status after $2 s, expected $1: $("$engine" inspect --format '{{json .State.Health}}' simserver-test-health | tail -c 600)"
}
"$engine" run -d --name simserver-test-health -v "$fresh/simserver/data:/data:ro" \
  -v "$fresh/out:/out" simserver run --inputs /data/s_curve.csv --duration 600 \
  >/dev/null 2>"$logs/health-run.log"
proc=$("$engine" exec simserver-test-health grep -E '^(Uid|Gid|CapEff|CapBnd|NoNewPrivs):' /proc/1/status | tr -s '\t ' ' ')
for want in "Uid: ${user%:*} " "Gid: ${user#*:} " "CapEff: 0000000000000000" \
            "CapBnd: 0000000000000000" "NoNewPrivs: 1"; do
  grep -q "$want" <<<"$proc" || fail "the simserver process: $proc (expected $want)"
done
health_is healthy 60
"$engine" kill --signal STOP simserver-test-health >/dev/null
frozen=$SECONDS
health_is unhealthy 90
step "   unhealthy $((SECONDS - frozen)) s after SIGSTOP (3 failed checks after the 30 s start period)"
"$engine" kill --signal CONT simserver-test-health >/dev/null
health_is healthy 60
"$engine" rm -f simserver-test-health >/dev/null 2>&1

step "4. a scenario that must fail: exit 1 with the report"
cat >"$fresh/out/bad-check.toml" <<'EOF'
enable = "autonomous"
duration = "6 s"
[expect]
final_pose = { x = "7.5 m", y = "5.5 m", tolerance = "0.15 m" }
EOF
"$engine" rm -f simserver-test-robot >/dev/null 2>&1 || true
"$engine" run -d --name simserver-test-robot simserver-robot >/dev/null 2>&1
set +e
"$engine" run --rm --network container:simserver-test-robot \
  -v "$fresh/examples/kitbot:/robot:ro" -v "$fresh/out:/out" simserver \
  run /robot/simserver.toml --lockstep --fast --check /out/bad-check.toml --wait 120 \
  --no-progress >"$logs/fail.log" 2>&1
code=$?
set -e
"$engine" rm -f simserver-test-robot >/dev/null 2>&1 || true
[ "$code" = 1 ] || fail "failing scenario exited $code: $(tail -20 "$logs/fail.log")"
grep -q "overall: FAIL (1 of 1 checks failed)" "$logs/fail.log" || fail "no FAIL report: $(tail -20 "$logs/fail.log")"

step "5. a robot program on the host, the simserver image on --network host beside it"
python=${ROBOT_PYTHON:-$repo/.venv/bin/python}
case $python in /*) ;; *) python=$PWD/$python ;; esac  # a venv's python: its link, not its target
[ -x "$python" ] || fail "no $python with RobotPy (make docker-test sets it up; or set ROBOT_PYTHON)"
exec 9>>/tmp/simserver-5810.lock  # the host's port 5810, shared with the tests' robot programs
flock 9
(cd "$fresh/examples/kitbot" && exec "$python" -m robotpy sim --nogui --simserver) >"$logs/host-robot.log" 2>&1 &
robot_pid=$!
set +e
"$engine" run --rm --network host -v "$fresh/examples/kitbot:/robot:ro" -v "$fresh/out:/out" simserver \
  run /robot/simserver.toml --lockstep --fast --check /robot/auto-check.toml \
  --json /out/host-result.json --wait 120 --no-progress >"$logs/host.log" 2>&1
code=$?
set -e
wait "$robot_pid" 2>/dev/null || true
flock -u 9
[ "$code" = 0 ] || fail "the CI recipe's check exited $code: $(tail -20 "$logs/host.log")"
grep -q "overall: PASS" "$logs/host.log" || fail "no PASS: $(tail -20 "$logs/host.log")"

if [ -n "${ROOTLESS_USER:-}" ] && [ "$engine" = podman ]; then
  step "6. rootless podman as $ROOTLESS_USER: \"The image\"'s commands in their own copy, the image loaded"
  # Their podman has no base image to build from (no registry here): the build is the one
  # command left out. Needs newuidmap (uidmap) and subuids for that user; their own podman
  # configuration (~/.config/containers), not the one container-env made for root.
  as_user() { env -u CONTAINERS_CONF -u CONTAINERS_STORAGE_CONF su "$ROOTLESS_USER" "$@"; }
  podman save simserver | as_user -s /bin/sh -c 'podman load -q' >"$logs/rootless-load.log" 2>&1 \
    || fail "loading the image as $ROOTLESS_USER: $(tail -5 "$logs/rootless-load.log")"
  rcopy=$(as_user -s /bin/sh -c 'mktemp -d')  # theirs, where they can reach it
  (cd "$fresh" && tar --exclude=./rootless --exclude=./.docker-test --exclude=./out -cf - .) | tar -C "$rcopy" -xf -
  python3 "$fresh/tools/doc_commands.py" "$fresh/docs/ci.md" "The image" | grep -v '^docker build ' \
    >"$rcopy/.commands.sh"
  chown -R "$ROOTLESS_USER" "$rcopy"
  # shellcheck disable=SC2016
  as_user -s /bin/bash -c 'set -e; cd "$1"; docker() { podman "$@"; }
      while IFS= read -r cmd; do echo "\$ $cmd"; eval "$cmd" </dev/null; done <.commands.sh' \
    bash "$rcopy" >"$logs/rootless.log" 2>&1 </dev/null \
    || fail "rootless: $(tail -20 "$logs/rootless.log")"
  uid=$(id -u "$ROOTLESS_USER")
  owner=$(stat -c '%u %a' "$rcopy/out" "$rcopy/out/scripted.json" | sort -u | tr '\n' ' ')
  [ "$owner" = "$uid 644 $uid 755 " ] || fail "rootless: out/ and out/scripted.json are $owner (expected uid $uid)"
fi

trap - EXIT
cleanup
rm -rf "$fresh" "${rcopy:-}"
step "all passed"
