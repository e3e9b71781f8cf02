package dev.sandbox4j.docker.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The runner's own seccomp profile for its containers, sent in the create as {@code seccomp=<json>}
 * (the engine's default profile allows {@code io_uring} and, on older engines, every socket family). It
 * keeps the engine default's shape (deny with EPERM unless listed; {@code clone} only without namespace
 * flags; {@code clone3} fails with ENOSYS so C libraries fall back to {@code clone}; {@code personality}
 * only with the harmless values) and narrows it to what an unprivileged container needs, beside the local
 * runner's table ({@code sandbox-local}'s {@code SeccompFilter.DENIED}, every call of which is denied here
 * too, as this module's tests check):
 * <ul>
 *   <li>{@code socket} only for {@code AF_UNIX}, {@code AF_INET}, {@code AF_INET6} and {@code AF_NETLINK}
 *       (what interpreters, resolvers and {@code getifaddrs} use): no {@code AF_VSOCK}, whose port space is
 *       the host's and which no network namespace covers, no {@code AF_PACKET}, Bluetooth, CAN or the rest;
 *   <li>no {@code io_uring_setup}, {@code io_uring_enter}, {@code io_uring_register}: its operations bypass
 *       seccomp;
 *   <li>no {@code ptrace}, {@code process_vm_readv}, {@code process_vm_writev} (the engine's default allows
 *       them on kernels from 4.8): code cannot trace or rewrite the runner's helpers that run as its uid;
 *   <li>only the native ABI (no 32-bit x86 or x32 calls, no AArch32), as the local runner.
 * </ul>
 * Everything the engine's default grants only with a capability (mount, bpf, perf, modules, namespaces,
 * keyring calls are not listed at all) stays denied: the container has only {@code CAP_KILL}, held by its
 * root processes alone (the init and the runner's kill helper), never by code.
 */
final class DockerSeccomp {
    /** AF_UNIX, AF_INET, AF_INET6, AF_NETLINK: the socket families the profile allows. */
    static final List<Integer> SOCKET_FAMILIES = List.of(1, 2, 10, 16);
    /** CLONE_NEWTIME | NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET, as the local runner's filter. */
    static final long CLONE_NAMESPACE_FLAGS = 0x00000080L | 0x00020000L | 0x02000000L | 0x04000000L | 0x08000000L
            | 0x10000000L | 0x20000000L | 0x40000000L;
    /** personality(2) values allowed: PER_LINUX, UNAME26, ADDR_NO_RANDOMIZE (alone and with UNAME26), the query 0xffffffff. */
    static final List<Long> PERSONALITIES = List.of(0L, 8L, 0x20000L, 0x20008L, 0xffffffffL);
    static final int ENOSYS = 38;

    /** Allowed without condition (native 64-bit names; a name the kernel's table lacks is skipped by the runtime). */
    static final List<String> ALLOWED = List.of(
            "accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk", "capget", "capset", "chdir", "chmod", "chown",
            "clock_adjtime", "clock_getres", "clock_gettime", "clock_nanosleep", "close", "close_range", "connect",
            "copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait",
            "epoll_pwait2", "epoll_wait", "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat",
            "faccessat2", "fadvise64", "fallocate", "fanotify_mark", "fchdir", "fchmod", "fchmodat", "fchown", "fchownat",
            "fcntl", "fdatasync", "fgetxattr", "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstatfs",
            "fsync", "ftruncate", "futex", "futex_waitv", "futimesat", "getcpu", "getcwd", "getdents", "getdents64", "getegid",
            "geteuid", "getgid", "getgroups", "getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
            "getpriority", "getrandom", "getresgid", "getresuid", "getrlimit", "get_robust_list", "getrusage", "getsid",
            "getsockname", "getsockopt", "get_thread_area", "gettid", "gettimeofday", "getuid", "getxattr",
            "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch", "io_cancel", "ioctl", "io_destroy",
            "io_getevents", "io_pgetevents", "ioprio_get", "ioprio_set", "io_setup", "io_submit", "kill",
            "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "lchown", "lgetxattr", "link", "linkat",
            "listen", "listxattr", "llistxattr", "lremovexattr", "lseek", "lsetxattr", "lstat", "madvise", "membarrier",
            "memfd_create", "mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap",
            "mprotect", "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap",
            "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall", "munmap", "name_to_handle_at",
            "nanosleep", "newfstatat", "open", "openat", "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
            "pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl", "pread64", "preadv", "preadv2", "prlimit64",
            "process_mrelease", "pselect6", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink", "readlinkat",
            "readv", "recvfrom", "recvmmsg", "recvmsg", "remap_file_pages", "removexattr", "rename", "renameat", "renameat2",
            "restart_syscall", "rmdir", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
            "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo", "sched_getaffinity", "sched_getattr",
            "sched_getparam", "sched_get_priority_max", "sched_get_priority_min", "sched_getscheduler",
            "sched_rr_get_interval", "sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler",
            "sched_yield", "seccomp", "select", "semctl", "semget", "semop", "semtimedop", "sendfile", "sendmmsg", "sendmsg",
            "sendto", "setfsgid", "setfsuid", "setgid", "setgroups", "setitimer", "setpgid", "setpriority", "setregid",
            "setresgid", "setresuid", "setreuid", "setrlimit", "set_robust_list", "setsid", "setsockopt", "set_thread_area",
            "set_tid_address", "setuid", "setxattr", "shmat", "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack",
            "signalfd", "signalfd4", "socketpair", "splice", "stat", "statfs", "statx", "symlink", "symlinkat", "sync",
            "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create", "timer_delete",
            "timer_getoverrun", "timer_gettime", "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime",
            "times", "tkill", "truncate", "umask", "uname", "unlink", "unlinkat", "utime", "utimensat", "utimes", "vfork",
            "vmsplice", "wait4", "waitid", "write", "writev");
    /** Allowed on one architecture only (the engine's default does the same). */
    static final List<String> ALLOWED_X86_64 = List.of("arch_prctl");

    /** The profile as the create sends it: compact JSON, the same bytes every time (attach compares them). */
    static final String PROFILE = build().toString();

    private DockerSeccomp() {
    }

    /** {@code seccomp=<profile>}, the SecurityOpt entry. */
    static String securityOpt() {
        return "seccomp=" + PROFILE;
    }

    static ObjectNode build() {
        ObjectNode p = DockerApi.MAPPER.createObjectNode();
        p.put("defaultAction", "SCMP_ACT_ERRNO");
        ArrayNode archMap = p.putArray("archMap");
        // no sub-architectures: calls of another ABI match no rule's arch and are refused
        archMap.addObject().put("architecture", "SCMP_ARCH_X86_64").putArray("subArchitectures");
        archMap.addObject().put("architecture", "SCMP_ARCH_AARCH64").putArray("subArchitectures");
        ArrayNode calls = p.putArray("syscalls");
        ObjectNode plain = calls.addObject();
        ArrayNode names = plain.putArray("names");
        ALLOWED.forEach(names::add);
        plain.put("action", "SCMP_ACT_ALLOW");
        ObjectNode x86 = calls.addObject();
        ArrayNode xn = x86.putArray("names");
        ALLOWED_X86_64.forEach(xn::add);
        x86.put("action", "SCMP_ACT_ALLOW");
        x86.putObject("includes").putArray("arches").add("amd64");
        for (int family : SOCKET_FAMILIES) {
            argRule(calls, "socket", 0, family, "SCMP_CMP_EQ", null);
        }
        for (long v : PERSONALITIES) {
            argRule(calls, "personality", 0, v, "SCMP_CMP_EQ", null);
        }
        // clone(flags, ...) without any namespace flag; s390's argument order is not covered (not a target)
        argRule(calls, "clone", 0, CLONE_NAMESPACE_FLAGS, "SCMP_CMP_MASKED_EQ", 0L);
        ObjectNode clone3 = calls.addObject();
        clone3.putArray("names").add("clone3");
        clone3.put("action", "SCMP_ACT_ERRNO");
        clone3.put("errnoRet", ENOSYS);
        return p;
    }

    private static void argRule(ArrayNode calls, String name, int index, long value, String op, Long valueTwo) {
        ObjectNode r = calls.addObject();
        r.putArray("names").add(name);
        r.put("action", "SCMP_ACT_ALLOW");
        ObjectNode a = r.putArray("args").addObject();
        a.put("index", index);
        a.put("value", value);
        if (valueTwo != null) {
            a.put("valueTwo", valueTwo);
        }
        a.put("op", op);
    }
}
