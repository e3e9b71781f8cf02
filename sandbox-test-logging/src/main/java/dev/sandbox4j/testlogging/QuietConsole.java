package dev.sandbox4j.testlogging;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Keeps a test JVM's console quiet without lowering its log level.
 *
 * <p>Tests log at DEBUG (slf4j-simple, to {@code System.err}) because the secret-leak tests swap
 * {@code System.err} for a buffer and must see every line. This listener, loaded once per test JVM
 * by the JUnit launcher, puts a {@link LineFilter} in front of the console's {@code System.err}: log
 * records below the threshold and the stack traces of all records are left out of the console (a
 * test that installs its own {@code System.err} still gets everything). Every line, shown or not,
 * also goes to the file named by {@code sandbox4j.test.logFile} when that is set.
 *
 * <p>The switch: {@code -Dsandbox4j.test.log=debug} (or {@code info}) shows those levels and all stack
 * traces; the default, {@code warn}, shows WARN and ERROR lines only.
 */
public final class QuietConsole implements LauncherSessionListener {
    private static boolean installed;

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        install();
    }

    static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        Level threshold = Level.parse(System.getProperty("sandbox4j.test.log", "warn"));
        OutputStream file = null;
        String path = System.getProperty("sandbox4j.test.logFile", "");
        if (!path.isBlank()) {
            try {
                file = new FileOutputStream(path);
            } catch (IOException e) {
                System.err.println("sandbox4j test logging: cannot write " + path + ": " + e.getMessage());
            }
        }
        System.setErr(new PrintStream(new LineFilter(System.err, file, threshold), true, StandardCharsets.UTF_8));
    }
}
