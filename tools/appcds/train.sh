#!/bin/sh
# Makes a dynamic AppCDS archive for a runnable jar at package time (issue 35, item 5): one training
# run records the classes the jar loads, and a later start maps them instead of loading them again.
#
#   train.sh JAVA JAR ARCHIVE INPUT ANSWERS [ARG...]
#
# JAVA is the JDK the build runs on: the archive works only with that same JDK build (another one
# prints a warning and starts without it, -Xshare:auto being the default). INPUT is written to the
# training run's standard input (a file, or /dev/null), which stays open until the run has printed
# ANSWERS lines on its standard output (at most 120 s), so a server answers before it sees the end of
# its input. The training run's exit code does not fail the build (on a machine without bubblewrap
# the CLI's run fails after it loaded most of its classes): the archive is an optimisation, and a
# training run that makes none says why.
set -u
java=$1 jar=$2 archive=$3 input=$4 answers=$5
shift 5
log="$archive.log" out="$archive.out" fifo="$archive.in"
rm -f "$archive" "$log" "$out" "$fifo" "$archive.jvm.log"
mkfifo "$fifo" || exit 0
# the JVM's own warnings (CDS skips JFR classes) go to a file, not into the run's output
"$java" -XX:ArchiveClassesAtExit="$archive" -Xlog:disable -Xlog:all=warning:file="$archive.jvm.log" -jar "$jar" "$@" <"$fifo" >"$out" 2>"$log" &
pid=$!
exec 3>"$fifo"
cat "$input" >&3
i=0
while [ "$(wc -l <"$out")" -lt "$answers" ] && [ "$i" -lt 1200 ] && kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
exec 3>&-
wait "$pid"
rc=$?
rm -f "$fifo"
if [ -s "$archive" ]; then
    echo "AppCDS: $archive ($(wc -c <"$archive") bytes; training run exit $rc, $(wc -l <"$out") lines out)"
else
    echo "AppCDS: no archive made for $jar (training run exit $rc; its output is in $log)"
fi
exit 0
