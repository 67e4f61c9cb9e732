# Sourced by the scripts that make a Debian root with mmdebstrap and build in it
# (scripts/test_debian13.sh, scripts/cuda_compile_check.sh).

# Stops the calling script ($1: its name) unless it runs as root with the tools that make
# and enter a root: exit 2 (how it was called), 1 (a missing tool: scripts/setup.sh).
require_root_tools() {
  local name=$1 tool
  if [ "$(id -u)" -ne 0 ]; then
    echo "$name needs root (mmdebstrap, chroot, mounts): run it as root or with sudo." >&2
    exit 2
  fi
  for tool in mmdebstrap unshare chroot; do
    command -v "$tool" >/dev/null || { echo "$name: $tool is missing: run scripts/setup.sh" >&2; exit 1; }
  done
}
