# Sourced by the bin/ scripts: finds a JDK 25 or newer and exports JAVA_HOME and PATH for it.
# Order: $JAVA_HOME if it is 25+, then `java` on PATH if it is 25+, then the usual install folders.
# Stops with a clear message when there is none.

rnicsim_java_major() {
  # Prints the feature version of the java binary given as $1 (e.g. 25), or nothing.
  "$1" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1
}

rnicsim_find_jdk25() {
  local candidate major
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    major=$(rnicsim_java_major "$JAVA_HOME/bin/java")
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then echo "$JAVA_HOME"; return 0; fi
  fi
  if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
    major=$(rnicsim_java_major "$(command -v java)")
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then
      candidate=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
      echo "$candidate"; return 0
    fi
  fi
  # RNICSIM_JDK_DIRS (space-separated globs) replaces the usual install folders; the test suite uses it.
  local dirs=${RNICSIM_JDK_DIRS:-"/usr/lib/jvm/* /usr/java/* /opt/java/* /opt/jdk* \
    /Library/Java/JavaVirtualMachines/*/Contents/Home $HOME/.sdkman/candidates/java/* $HOME/.jdks/*"}
  for candidate in $dirs; do
    [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] || continue
    major=$(rnicsim_java_major "$candidate/bin/java")
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

if ! RNICSIM_JDK=$(rnicsim_find_jdk25); then
  echo "rnic-sim needs a JDK 25 or newer and found none." >&2
  if [ -n "${JAVA_HOME:-}" ]; then
    rnicsim_home_major=$( [ -x "$JAVA_HOME/bin/java" ] && rnicsim_java_major "$JAVA_HOME/bin/java" )
    echo "\$JAVA_HOME=$JAVA_HOME is ${rnicsim_home_major:+JDK $rnicsim_home_major, too old}${rnicsim_home_major:-not a JDK}." >&2
  fi
  echo "Also looked at 'java' on PATH and in ${RNICSIM_JDK_DIRS:-/usr/lib/jvm, /usr/java, /opt/java, /opt/jdk*, macOS JavaVirtualMachines, ~/.sdkman, ~/.jdks}." >&2
  echo "Install a JDK 25 (for example Temurin 25) or set JAVA_HOME to one, then run this again." >&2
  exit 3
fi
export JAVA_HOME="$RNICSIM_JDK"
export PATH="$JAVA_HOME/bin:$PATH"
if ! command -v mvn >/dev/null 2>&1; then
  echo "rnic-sim builds with Apache Maven 3.8 or newer, and 'mvn' is not on PATH. Install Maven, then run this again." >&2
  exit 3
fi
# Maven's own libraries use sun.misc.Unsafe; JDK 24+ warns about it on every run. Quiet, not a behaviour change.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
