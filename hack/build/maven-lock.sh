# Sourced by the scripts that run Maven: maven_lock waits until no other of them resolves or
# builds. The data-plane tests of both engines start together, and two Mavens writing one local
# repository (or two apt-gets installing Maven) race. The lock holds until the script exits.
maven_lock() {
  mkdir -p "$root/bin/maven"
  exec 9>"$root/bin/maven/.lock"
  flock 9
}
