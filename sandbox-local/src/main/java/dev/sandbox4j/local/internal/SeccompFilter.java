package dev.sandbox4j.local.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The seccomp filter every sandboxed process runs under, as a classic BPF program in the layout bwrap's
 * {@code --seccomp FD} reads ({@code struct sock_filter[]}, native byte order). Written here rather
 * than with libseccomp so that nothing native is needed at run time.
 *
 * <p>The program: a call from another ABI (32-bit x86 or x32 on x86_64, AArch32 on aarch64) fails with
 * EPERM; each call of {@link #DENIED} fails with EPERM; {@code clone} with any namespace flag fails with
 * EPERM; {@code clone3} fails with ENOSYS (its flags sit in memory a filter cannot read, and ENOSYS
 * makes glibc and others fall back to {@code clone}); {@code socket} and {@code socketpair} with a
 * family not in {@link #ALLOWED_SOCKET_FAMILIES} fail with EAFNOSUPPORT (as on a kernel without that
 * family, which programs handle); everything else is allowed.
 */
public final class SeccompFilter {
    /** The calls denied with EPERM, by name; numbers per architecture in {@link Arch}. */
    public static final List<String> DENIED = List.of(
            // the kernel keyring: the caller's session keyring is shared across user namespaces
            "keyctl", "add_key", "request_key",
            // io_uring bypasses this filter for the operations it performs
            "io_uring_setup", "io_uring_enter", "io_uring_register",
            "ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open", "bpf", "userfaultfd",
            "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
            "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
            "mount_setattr", "swapon", "swapoff", "reboot", "acct", "open_by_handle_at",
            "unshare", "setns");

    /**
     * The socket families code may open, by name, with their (architecture-independent) numbers; every
     * other family fails with EAFNOSUPPORT. A network namespace does not cover every family: AF_VSOCK's
     * port space is the host's, and on a VM it reaches the hypervisor (issue 27, finding 4); AF_ALG is
     * the kernel's crypto API, AF_PACKET, AF_KEY, AF_XDP, AF_TIPC, AF_RDS, AF_BLUETOOTH and the rest are
     * kernel surface no sandboxed program needs. AF_NETLINK stays (getaddrinfo and getifaddrs use it;
     * in the sandbox's own network namespace it sees only that namespace). This is the local runner's
     * table; a runner with a seccomp profile of its own should deny the same.
     */
    public static final Map<String, Integer> ALLOWED_SOCKET_FAMILIES = orderedMap(
            "AF_UNIX", 1, "AF_INET", 2, "AF_INET6", 10, "AF_NETLINK", 16);
    /** Families named in tests and documentation as denied: AF_VSOCK, AF_ALG, AF_PACKET, AF_KEY, AF_XDP. */
    public static final Map<String, Integer> EXAMPLE_DENIED_SOCKET_FAMILIES = orderedMap(
            "AF_VSOCK", 40, "AF_ALG", 38, "AF_PACKET", 17, "AF_KEY", 15, "AF_XDP", 44);

    /** CLONE_NEWTIME | NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET. */
    public static final int CLONE_NAMESPACE_FLAGS = 0x00000080 | 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000
            | 0x10000000 | 0x20000000 | 0x40000000;
    static final int EPERM = 1;
    static final int ENOSYS = 38;
    static final int EAFNOSUPPORT = 97;

    private static final int RET_ALLOW = 0x7fff0000;
    private static final int RET_ERRNO = 0x00050000;
    // BPF opcodes
    private static final short LD_W_ABS = 0x20;
    private static final short JEQ_K = 0x15;
    private static final short JGE_K = 0x35;
    private static final short JSET_K = 0x45;
    private static final short RET_K = 0x06;
    // offsets in struct seccomp_data
    private static final int OFF_NR = 0;
    private static final int OFF_ARCH = 4;
    private static final int OFF_ARG0_LOW = 16; // little-endian: the low 32 bits of args[0]

    /** A system call table: the audit arch value and the numbers of the calls the filter names. */
    public enum Arch {
        X86_64(0xC000003E, 0x40000000, Map.ofEntries(
                Map.entry("keyctl", 250), Map.entry("add_key", 248), Map.entry("request_key", 249),
                Map.entry("io_uring_setup", 425), Map.entry("io_uring_enter", 426), Map.entry("io_uring_register", 427),
                Map.entry("ptrace", 101), Map.entry("process_vm_readv", 310), Map.entry("process_vm_writev", 311),
                Map.entry("perf_event_open", 298), Map.entry("bpf", 321), Map.entry("userfaultfd", 323),
                Map.entry("kexec_load", 246), Map.entry("kexec_file_load", 320), Map.entry("init_module", 175),
                Map.entry("finit_module", 313), Map.entry("delete_module", 176), Map.entry("mount", 165),
                Map.entry("umount2", 166), Map.entry("pivot_root", 155), Map.entry("move_mount", 429),
                Map.entry("open_tree", 428), Map.entry("fsopen", 430), Map.entry("fsconfig", 431),
                Map.entry("fsmount", 432), Map.entry("fspick", 433), Map.entry("mount_setattr", 442),
                Map.entry("swapon", 167), Map.entry("swapoff", 168), Map.entry("reboot", 169), Map.entry("acct", 163),
                Map.entry("open_by_handle_at", 304), Map.entry("unshare", 272), Map.entry("setns", 308),
                Map.entry("clone", 56), Map.entry("clone3", 435), Map.entry("socket", 41), Map.entry("socketpair", 53))),
        AARCH64(0xC00000B7, -1, Map.ofEntries(
                Map.entry("keyctl", 219), Map.entry("add_key", 217), Map.entry("request_key", 218),
                Map.entry("io_uring_setup", 425), Map.entry("io_uring_enter", 426), Map.entry("io_uring_register", 427),
                Map.entry("ptrace", 117), Map.entry("process_vm_readv", 270), Map.entry("process_vm_writev", 271),
                Map.entry("perf_event_open", 241), Map.entry("bpf", 280), Map.entry("userfaultfd", 282),
                Map.entry("kexec_load", 104), Map.entry("kexec_file_load", 294), Map.entry("init_module", 105),
                Map.entry("finit_module", 273), Map.entry("delete_module", 106), Map.entry("mount", 40),
                Map.entry("umount2", 39), Map.entry("pivot_root", 41), Map.entry("move_mount", 429),
                Map.entry("open_tree", 428), Map.entry("fsopen", 430), Map.entry("fsconfig", 431),
                Map.entry("fsmount", 432), Map.entry("fspick", 433), Map.entry("mount_setattr", 442),
                Map.entry("swapon", 224), Map.entry("swapoff", 225), Map.entry("reboot", 142), Map.entry("acct", 89),
                Map.entry("open_by_handle_at", 265), Map.entry("unshare", 97), Map.entry("setns", 268),
                Map.entry("clone", 220), Map.entry("clone3", 435), Map.entry("socket", 198), Map.entry("socketpair", 199)));

        final int auditArch;
        /** Numbers at or above this are another ABI sharing the arch value (x32), or -1. */
        final int foreignAbiBit;
        final Map<String, Integer> numbers;

        Arch(int auditArch, int foreignAbiBit, Map<String, Integer> numbers) {
            this.auditArch = auditArch;
            this.foreignAbiBit = foreignAbiBit;
            this.numbers = numbers;
        }

        public int number(String call) {
            Integer n = numbers.get(call);
            if (n == null) {
                throw new IllegalArgumentException("no number for " + call + " on " + this);
            }
            return n;
        }

        /** The table for {@code os.arch}, if there is one. */
        public static Optional<Arch> of(String osArch) {
            switch (osArch.toLowerCase(Locale.ROOT)) {
                case "amd64":
                case "x86_64":
                    return Optional.of(X86_64);
                case "aarch64":
                case "arm64":
                    return Optional.of(AARCH64);
                default:
                    return Optional.empty();
            }
        }
    }

    private SeccompFilter() {
    }

    /** The compiled program for {@code arch}: 8 bytes per instruction. */
    public static byte[] compile(Arch arch) {
        // instructions whose jump targets are labels, resolved once the layout is known
        List<int[]> prog = new ArrayList<>(); // {code, jtLabel, jfLabel, k}; label -1 = next instruction
        final int allow = -2;
        final int eperm = -3;
        final int enosys = -4;
        final int eafnosupport = -5;
        final int next = -1;
        prog.add(new int[] {LD_W_ABS, 0, 0, OFF_ARCH});
        prog.add(new int[] {JEQ_K, next, eperm, arch.auditArch});
        prog.add(new int[] {LD_W_ABS, 0, 0, OFF_NR});
        if (arch.foreignAbiBit > 0) {
            prog.add(new int[] {JGE_K, eperm, next, arch.foreignAbiBit});
        }
        for (String call : DENIED) {
            prog.add(new int[] {JEQ_K, eperm, next, arch.number(call)});
        }
        // socket / socketpair: the family (args[0], an int) must be one of ALLOWED_SOCKET_FAMILIES
        int families = ALLOWED_SOCKET_FAMILIES.size();
        int fam = prog.size() + 2;
        int afterFam = fam + 1 + families;
        prog.add(new int[] {JEQ_K, fam, next, arch.number("socket")});
        prog.add(new int[] {JEQ_K, fam, afterFam, arch.number("socketpair")});
        prog.add(new int[] {LD_W_ABS, 0, 0, OFF_ARG0_LOW});
        int k = 0;
        for (int family : ALLOWED_SOCKET_FAMILIES.values()) {
            prog.add(new int[] {JEQ_K, allow, ++k == families ? eafnosupport : next, family});
        }
        prog.add(new int[] {LD_W_ABS, 0, 0, OFF_NR});
        prog.add(new int[] {JEQ_K, enosys, next, arch.number("clone3")});
        prog.add(new int[] {JEQ_K, next, allow, arch.number("clone")});
        prog.add(new int[] {LD_W_ABS, 0, 0, OFF_ARG0_LOW});
        prog.add(new int[] {JSET_K, eperm, allow, CLONE_NAMESPACE_FLAGS});
        int allowAt = prog.size();
        int epermAt = allowAt + 1;
        int enosysAt = allowAt + 2;
        Map<Integer, Integer> at = new LinkedHashMap<>();
        at.put(allow, allowAt);
        at.put(eperm, epermAt);
        at.put(enosys, enosysAt);
        at.put(eafnosupport, allowAt + 3);

        ByteBuffer b = ByteBuffer.allocate((prog.size() + 4) * 8).order(ByteOrder.nativeOrder());
        for (int i = 0; i < prog.size(); i++) {
            int[] ins = prog.get(i);
            b.putShort((short) ins[0]);
            b.put(jump(ins[0], ins[1], i, at));
            b.put(jump(ins[0], ins[2], i, at));
            b.putInt(ins[3]);
        }
        putRet(b, RET_ALLOW);
        putRet(b, RET_ERRNO | EPERM);
        putRet(b, RET_ERRNO | ENOSYS);
        putRet(b, RET_ERRNO | EAFNOSUPPORT);
        return b.array();
    }

    private static byte jump(int code, int label, int from, Map<Integer, Integer> at) {
        if (code == LD_W_ABS || label == -1) {
            return 0;
        }
        // a label of 0 or more is an instruction's index, a negative one a named return
        int offset = (label >= 0 ? label : at.get(label)) - from - 1;
        if (offset < 0 || offset > 255) {
            throw new IllegalStateException("seccomp jump out of range: " + offset);
        }
        return (byte) offset;
    }

    private static Map<String, Integer> orderedMap(Object... kv) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (Integer) kv[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    private static void putRet(ByteBuffer b, int k) {
        b.putShort(RET_K);
        b.put((byte) 0);
        b.put((byte) 0);
        b.putInt(k);
    }
}
