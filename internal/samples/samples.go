// Package samples reads what the repository ships under config/samples: the EncryptionProfile
// catalogue that tests resolve, render and run against real datastores.
package samples

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ProfilesDir holds one manifest per shipped EncryptionProfile.
func ProfilesDir() string { return filepath.Join(RepoRoot(), "config", "samples", "profiles") }

// Profiles returns every shipped profile, ordered by file name.
func Profiles() ([]v1alpha1.EncryptionProfile, error) {
	files, err := filepath.Glob(filepath.Join(ProfilesDir(), "*.yaml"))
	if err != nil {
		return nil, err
	}
	out := make([]v1alpha1.EncryptionProfile, 0, len(files))
	for _, f := range files {
		p, err := read(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Profile returns the shipped profile with this name.
func Profile(name string) (v1alpha1.EncryptionProfile, error) {
	return read(filepath.Join(ProfilesDir(), name+".yaml"))
}

func read(path string) (v1alpha1.EncryptionProfile, error) {
	var p v1alpha1.EncryptionProfile
	data, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return p, fmt.Errorf("%s: %w", strings.TrimPrefix(path, RepoRoot()+"/"), err)
	}
	return p, nil
}
