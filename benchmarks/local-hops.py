#!/usr/bin/env python3
"""What each hop of a local sandboxed exec costs, outside the JVM (issue 35, item 3).

The local runner's exec is: the JVM's process spawn, a fixed `sh` launcher (joins the cgroup, moves
fds), `setpriv` (as root), `bwrap` (namespaces, the mount set, pivot_root), the execute-only init `sh`
as PID 1, `prlimit`, the interpreter. This times, interleaved round robin with medians, a bare
`python3 -c 'print(1)'` against the same under each hop alone and under bwrap with and without
namespaces, and a tmpfs mount plus unmount (what a run() adds as root) by the mount(8)/umount(8)
binaries against the bare syscalls. Root only (setpriv, mount). Run it with real-time priority so
other work on the machine does not stretch the hops:

    chrt -f 10 python3 benchmarks/local-hops.py [rounds]      # default 40 rounds

It prints one line per case: the median and min in ms, and the median less the bare interpreter's.
"""
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PY = ["/usr/bin/python3", "-c", "print(1)"]
ROOTFS = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
          "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
ALL_NS = ["--unshare-all", "--unshare-user", "--disable-userns"]
LIMITS = ["--cpu=121:122", "--as=4294967296", "--fsize=268435456", "--nproc=128", "--nofile=1024", "--core=0"]
INIT = ["/bin/sh", "-c", '"$@"; exit $?', "init"]


def cases():
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    return {
        "python3 (bare)": PY,
        "sh child (the init's way)": INIT + PY,
        "prlimit": ["/usr/bin/prlimit"] + LIMITS + ["--"] + PY,
        "setpriv": ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs", "--"] + PY,
        "bwrap, mount ns only": [bwrap] + ROOTFS + ["--"] + PY,
        "bwrap, all namespaces": [bwrap] + ROOTFS + ALL_NS + ["--"] + PY,
        "bwrap, all but net": [bwrap] + ROOTFS + ALL_NS + ["--share-net", "--"] + PY,
        "all hops but the JVM's": ["/bin/sh", "-c", 'exec "$@" </dev/null', "launch", "/usr/bin/setpriv", "--reuid=65534",
                                   "--regid=65534", "--clear-groups", "--no-new-privs", "--", bwrap] + ROOTFS + ALL_NS
                                  + ["--as-pid-1", "--"] + INIT + ["/usr/bin/prlimit"] + LIMITS + ["--"] + PY,
    }


def timed(argv):
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1000


def mounts(rounds, d):
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    opts = "size=1073741824,nr_inodes=65536,mode=0700"
    binaries, calls = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run(["/usr/bin/mount", "-n", "-t", "tmpfs", "-o", opts + ",nosuid,nodev", "sandbox4j", d], check=True)
        subprocess.run(["/usr/bin/umount", "-n", d], check=True)
        binaries.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        if libc.mount(b"sandbox4j", d.encode(), b"tmpfs", 6, opts.encode()) != 0:  # MS_NOSUID | MS_NODEV
            raise OSError(ctypes.get_errno(), "mount")
        if libc.umount2(d.encode(), 0) != 0:
            raise OSError(ctypes.get_errno(), "umount2")
        calls.append((time.perf_counter() - t) * 1000)
    return binaries, calls


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    if os.geteuid() != 0:
        sys.exit("local-hops.py: run as root (setpriv and mount need it)")
    cs = cases()
    res = {k: [] for k in cs}
    for k, argv in cs.items():  # warm-up: page cache, ld.so cache
        timed(argv)
    for i in range(rounds):
        keys = list(cs)
        for k in keys[i % len(keys):] + keys[:i % len(keys)]:
            res[k].append(timed(cs[k]))
    d = tempfile.mkdtemp(prefix="local-hops-")
    try:
        binaries, calls = mounts(rounds, d)
    finally:
        os.rmdir(d)
    print("%d interleaved rounds; load %s" % (rounds, " ".join(open("/proc/loadavg").read().split()[:3])))
    bare = statistics.median(res["python3 (bare)"])
    print("%-34s %9s %9s %12s" % ("case", "median", "min", "over bare"))
    for k, v in res.items():
        m = statistics.median(v)
        print("%-34s %7.2f ms %7.2f ms %+9.2f ms" % (k, m, min(v), m - bare))
    print("%-34s %7.2f ms %7.2f ms" % ("tmpfs mount+umount, binaries", statistics.median(binaries), min(binaries)))
    print("%-34s %7.2f ms %7.2f ms" % ("tmpfs mount+umount, syscalls", statistics.median(calls), min(calls)))


if __name__ == "__main__":
    main()
