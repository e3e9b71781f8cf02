package dev.sandbox4j.spi;

import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.exception.SandboxException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;

/**
 * Lists one directory by a fixed bash script run as a command of its own, for providers whose API
 * lists nothing (Vercel) or follows links when it lists (Daytona's daemon {@code GET /files} stats
 * with {@code os.Stat}). The directory goes as an argument ({@code $1}), never into the script's
 * text; the script refuses a symbolic link anywhere on the path, and {@code find -P} reports the
 * entries without following any link.
 *
 * <p>The output is framed by a fresh random nonce ({@code $2}, 128 bits): only what lies between
 * {@code <nonce> begin} and {@code <nonce> end} counts, so output of the code's leftover processes
 * that reaches the same stream (Daytona mixes stdout and stderr, and a login shell may print its own
 * lines) cannot pass for entries. It is not proof against code that is root in its own VM (both
 * providers give the sandbox user passwordless sudo): such code can only misdescribe its own files.
 * Whatever comes back is untrusted: names are checked by {@link FileEntry#of} (an entry it refuses
 * is left out), the output is read up to {@link #MAX_OUTPUT_BYTES} (past it the listing is refused),
 * and reads go through the provider's file API, confined to the VM. The Docker and Kubernetes
 * runners list with a helper of their own, which reports refusals by exit status; they read its
 * records with {@link #entries}, under the same rules.
 *
 * @since 0.1.0
 */
public final class ListingScript {
    /** The most output a listing may produce; a larger directory is refused, never cut silently. */
    public static final int MAX_OUTPUT_BYTES = 4 << 20;
    /** {@code $0} of the script, as {@code ps} shows it. */
    public static final String NAME = "sandbox4j-list";
    /** The script: {@code $1} the directory (normalised, "" for the working directory), {@code $2} the nonce. */
    public static final String SCRIPT = String.join("\n",
            "set -f",
            "d=$1; n=$2; p=.",
            "IFS=/",
            "for c in $d; do p=$p/$c; if [ -L \"$p\" ]; then printf '%s link\\n' \"$n\"; exit 0; fi; done",
            "unset IFS",
            "if [ ! -d \"$p\" ]; then printf '%s missing\\n' \"$n\"; exit 0; fi",
            "printf '%s begin\\n' \"$n\"",
            "LC_ALL=C find -P \"$p\" -mindepth 1 -maxdepth 1 -printf '%y %s %f\\0' 2>/dev/null",
            "printf '\\n%s end %s\\n' \"$n\" \"$?\"",
            "");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String directory;
    private final String nonce;

    private ListingScript(String directory, String nonce) {
        this.directory = directory;
        this.nonce = nonce;
    }

    /**
     * A listing of {@code directory} with a fresh random nonce, which frames the output so the listed names
     * cannot forge it.
     *
     * @param directory already normalised by {@code SandboxPaths.normalize}; {@code ""} for the working
     *     directory
     * @return the script to run
     */
    public static ListingScript of(String directory) {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return new ListingScript(directory, HexFormat.of().formatHex(b));
    }

    /** {@return the arguments after the script: {@code $0}, the directory, the nonce} */
    public List<String> arguments() {
        return List.of(NAME, directory, nonce);
    }

    /** {@return one shell line that runs the script with its arguments, each single-quoted} */
    public String shellLine() {
        StringBuilder b = new StringBuilder("bash -c ").append(quote(SCRIPT));
        for (String a : arguments()) {
            b.append(' ').append(quote(a));
        }
        return b.toString();
    }

    /**
     * The entries in the output, sorted by path.
     *
     * @param output the script's standard output, as read
     * @param sandboxId for the exceptions
     * @return the entries, sorted by path; records that are malformed or name no addressable path are left
     *     out
     * @param provider for the exceptions
     * @param capped whether the output was cut at {@link #MAX_OUTPUT_BYTES}
     * @throws SandboxException when the directory is missing, is or lies under a link, cannot be read,
     *         or the output holds no complete frame
     */
    public List<FileEntry> parse(byte[] output, boolean capped, String provider, String sandboxId) {
        String shown = directory.isEmpty() ? "." : directory;
        byte[] n = nonce.getBytes(StandardCharsets.US_ASCII);
        if (indexOf(output, concat(n, " link\n"), 0) >= 0) {
            throw failure(provider, shown + ": a symbolic link is on the path (links are not followed) in sandbox " + sandboxId);
        }
        if (indexOf(output, concat(n, " missing\n"), 0) >= 0) {
            throw SandboxException.builder(provider + ": " + shown + ": no such directory in sandbox " + sandboxId)
                    .provider(provider).httpStatus(404).build();
        }
        byte[] begin = concat(n, " begin\n");
        int start = indexOf(output, begin, 0);
        int end = start < 0 ? -1 : lastIndexOf(output, concat(new byte[] {'\n'}, nonce + " end "), start + begin.length);
        if (start < 0 || end < 0) {
            throw failure(provider, capped
                    ? shown + " has more entries than a listing may hold (" + MAX_OUTPUT_BYTES + " bytes of output)"
                    : "the listing of " + shown + " in sandbox " + sandboxId + " did not complete");
        }
        int status = end + 1 + n.length + 5;
        if (status >= output.length || output[status] != '0') {
            throw failure(provider, shown + " could not be read in sandbox " + sandboxId);
        }
        return collect(output, start + begin.length, end, directory, Integer.MAX_VALUE);
    }

    /**
     * The entries in NUL-terminated {@code <type> <size> <name>} records, as {@code find -printf
     * '%y %s %f\0'} writes them, for an adapter whose own helper lists a directory and reports its
     * refusals by exit status (the Docker and Kubernetes runners). The records are untrusted, as
     * {@link #parse} treats them: a record that is malformed, is not UTF-8 or names no path the file
     * API can address is left out, and so is an unterminated tail (a listing cut at its cap), never
     * taken for an entry with a shortened name.
     *
     * @param records the records as read
     * @param directory the directory listed, normalised by {@code SandboxPaths.normalize}; {@code ""} for
     *     the working directory (the entries' paths are under it)
     * @param maxEntries the most entries to return; records past it are left out
     * @return the entries, sorted by path
     * @throws IllegalArgumentException when {@code maxEntries} is negative
     */
    public static List<FileEntry> entries(byte[] records, String directory, int maxEntries) {
        if (maxEntries < 0) {
            throw new IllegalArgumentException("maxEntries must not be negative: " + maxEntries);
        }
        return collect(records, 0, records.length, directory, maxEntries);
    }

    /** The whole records in {@code b[from, to)}, sorted by path, at most {@code max}. */
    private static List<FileEntry> collect(byte[] b, int from, int to, String directory, int max) {
        List<FileEntry> entries = new ArrayList<>();
        int pos = from;
        while (pos < to && entries.size() < max) {
            int nul = indexOf(b, new byte[] {0}, pos);
            if (nul < 0 || nul > to) {
                break; // a record cut by the frame or the cap: never a whole entry
            }
            FileEntry e = entry(b, pos, nul, directory);
            if (e != null) {
                entries.add(e);
            }
            pos = nul + 1;
        }
        entries.sort(Comparator.comparing(FileEntry::path));
        return entries;
    }

    /** One {@code <type> <size> <name>} record, or null when it is malformed or its name cannot be addressed. */
    private static FileEntry entry(byte[] b, int from, int to, String directory) {
        if (to - from < 5 || b[from + 1] != ' ') {
            return null;
        }
        int sp = indexOf(b, new byte[] {' '}, from + 2);
        if (sp < 0 || sp >= to || sp == from + 2 || sp - (from + 2) > 19) {
            return null;
        }
        long size = 0;
        for (int i = from + 2; i < sp; i++) {
            if (b[i] < '0' || b[i] > '9') {
                return null;
            }
            size = size * 10 + (b[i] - '0');
        }
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(b, sp + 1, to - sp - 1)).toString();
        } catch (CharacterCodingException e) {
            return null; // not UTF-8: no path of ours can name it
        }
        if (name.isEmpty() || name.contains("/") || name.equals(".") || name.equals("..")) {
            return null;
        }
        FileEntry.Type type = switch (b[from]) {
            case 'f' -> FileEntry.Type.FILE;
            case 'd' -> FileEntry.Type.DIRECTORY;
            case 'l' -> FileEntry.Type.SYMLINK;
            default -> FileEntry.Type.OTHER;
        };
        try {
            return FileEntry.of(directory.isEmpty() ? name : directory + "/" + name, type,
                    type == FileEntry.Type.FILE ? size : 0);
        } catch (IllegalArgumentException e) {
            return null; // a name the file API cannot address (a control character, a backslash): left out
        }
    }

    private static SandboxException failure(String provider, String message) {
        return SandboxException.builder(provider + ": " + message).provider(provider).build();
    }

    /** {@code s} single-quoted for a POSIX shell. */
    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    private static byte[] concat(byte[] a, String tail) {
        byte[] t = tail.getBytes(StandardCharsets.US_ASCII);
        byte[] out = java.util.Arrays.copyOf(a, a.length + t.length);
        System.arraycopy(t, 0, out, a.length, t.length);
        return out;
    }

    private static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = Math.max(0, from); i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static int lastIndexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = hay.length - needle.length; i >= from; i--) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Override
    public String toString() {
        return "ListingScript[" + (directory.isEmpty() ? "." : directory) + "]";
    }
}
