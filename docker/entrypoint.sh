#!/bin/sh
# The server image's entrypoint: runs `simserver ARGS...` as the owner of the output directory
# (/out, or SIMSERVER_OUT), so the files it writes there belong to whoever made that directory
# on the host and no one has to open it up with chmod:
#   - `mkdir out` by a user (uid 1000) then `docker run -v "$PWD/out:/out"`: simserver runs as
#     1000:1000 and out/result.json is theirs;
#   - rootless podman: the host user is the container's root, so /out shows as owned by 0 and
#     simserver runs as that (unprivileged) user;
#   - a directory owned by root on the host (Docker made it for a missing path): root's;
#   - no /out: the image's unprivileged user `simserver` (10001).
# In every case with no capabilities, no supplementary groups and no_new_privs: the container's
# root only ever runs this script. Started with `--user`, it runs simserver as that user.
set -eu
out=${SIMSERVER_OUT:-/out}
if [ "$(id -u)" != 0 ]; then
  exec simserver "$@"
fi
if [ -d "$out" ]; then
  uid=$(stat -c %u "$out") gid=$(stat -c %g "$out")
else
  uid=10001 gid=10001
fi
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups \
  --inh-caps=-all --bounding-set=-all --no-new-privs -- simserver "$@"
