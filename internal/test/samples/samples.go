// Package samples reads what the repository ships under config/samples: the EncryptionProfiles
// the operator ships, which tests resolve, render and run against real datastores.
package samples

import (
	"path/filepath"
	"runtime"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/shippedprofiles"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// ProfilesDir holds one manifest per shipped EncryptionProfile.
func ProfilesDir() string { return filepath.Join(RepoRoot(), "config", "samples", "profiles") }

// Profiles returns every shipped profile, ordered by file name.
func Profiles() ([]v1alpha1.EncryptionProfile, error) { return shippedprofiles.Load(ProfilesDir()) }

// Profile returns the shipped profile with this name.
func Profile(name string) (v1alpha1.EncryptionProfile, error) {
	return shippedprofiles.Read(filepath.Join(ProfilesDir(), name+".yaml"))
}
