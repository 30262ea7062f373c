#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The full-disk episode of tests/chaos (`tally verify --broker-fault-cmd`):
#   disk_fault.sh MOUNT disk-full start NODE   fills MOUNT (the brokers' data tmpfs)
#   disk_fault.sh MOUNT disk-full end NODE     frees it again
# Other fault names are not this script's: it says so and fails.
set -u
mnt=$1 name=$2 phase=$3
[ "$name" = disk-full ] || { echo "disk_fault.sh: unknown fault $name" >&2; exit 2; }
case "$phase" in
  start) dd if=/dev/zero of="$mnt/ballast" bs=1M 2>/dev/null; exit 0 ;;
  end) rm -f "$mnt/ballast" ;;
  *) echo "disk_fault.sh: unknown phase $phase" >&2; exit 2 ;;
esac
