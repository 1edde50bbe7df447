// Package shippedprofiles reads the EncryptionProfiles the operator ships: one manifest per
// profile in a directory (config/samples/profiles in the repository, a ConfigMap mounted by
// the Helm chart in a cluster).
package shippedprofiles

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"secured.dev/operator/api/v1alpha1"
)

// Load reads every *.yaml in dir as one EncryptionProfile, ordered by file name. Unknown
// fields are errors: a shipped profile that does not parse is a packaging bug, not a profile to skip.
func Load(dir string) ([]v1alpha1.EncryptionProfile, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml profile in %s", dir)
	}
	out := make([]v1alpha1.EncryptionProfile, 0, len(files))
	for _, f := range files {
		p, err := Read(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Read reads one profile manifest.
func Read(path string) (v1alpha1.EncryptionProfile, error) {
	var p v1alpha1.EncryptionProfile
	data, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return p, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if p.Kind != "EncryptionProfile" || p.Name == "" {
		return p, fmt.Errorf("%s: kind %q named %q; want an EncryptionProfile with a name", filepath.Base(path), p.Kind, p.Name)
	}
	return p, nil
}
