package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EncryptionProfileSpec is a reusable wire-encryption profile.
// +kubebuilder:validation:XValidation:rule="!has(self.clientToNode) || has(self.clientToNode.mode)",message="clientToNode.mode is required in a profile: Disabled, Optional or Required",fieldPath=".clientToNode"
// +kubebuilder:validation:XValidation:rule="!has(self.nodeToNode) || has(self.nodeToNode.mode)",message="nodeToNode.mode is required in a profile: Disabled, Optional or Required",fieldPath=".nodeToNode"
type EncryptionProfileSpec struct {
	// description for people choosing a profile: what it protects against and what it costs.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Description string `json:"description,omitempty"`

	EncryptionSettings `json:",inline"`
}

// SecurityAssessment is the operator's ordinal security rank of an encryption profile and the
// compliance presets it satisfies.
//
// Rank rule (the "preference ordering" step of the evidence-based process): each cipher suite
// gets 1 + 32·forward secrecy + 16·AEAD with a full-length tag + 8·TLS 1.3 + 4·256-bit key +
// 2·SHA-2 or AEAD integrity + 1·AES or ChaCha20 cipher, i.e. properties compared
// lexicographically in that order; refused suites rank 0. A TLS channel ranks as its weakest
// accepted suite; Disabled and Optional channels rank 0 because they accept plaintext; a VPN or
// SASL privacy layer ranks by the same rule applied to its cipher; a channel protected by several
// layers ranks as its strongest. The profile's rank is the sum of its clientToNode and nodeToNode
// ranks (0-128).
type SecurityAssessment struct {
	// rank of the whole profile: clientToNodeRank + nodeToNodeRank. Higher is stronger.
	Rank int32 `json:"rank"`
	// clientToNodeRank of the application-to-datastore channel (0-64).
	ClientToNodeRank int32 `json:"clientToNodeRank"`
	// nodeToNodeRank of the datastore-internal channels (0-64): the weakest of them.
	NodeToNodeRank int32 `json:"nodeToNodeRank"`
	// atRestRank of the encryption of the datastore's files (0-64, the rule above applied to
	// its cipher: the datastore's own, or the encrypted volume's AES-256-XTS, the better of
	// the two); 0 without either. Not part of rank, which compares wire protection.
	// +optional
	AtRestRank int32 `json:"atRestRank,omitempty"`
	// clientSideRank of the values the client encrypts (0-64, the same rule applied to the
	// AEAD); 0 without client-side encryption. Not part of rank.
	// +optional
	ClientSideRank int32 `json:"clientSideRank,omitempty"`
	// notes say, in words, what the profile leaves readable: on disk, to the datastore.
	// +optional
	// +listType=atomic
	Notes []string `json:"notes,omitempty"`
	// satisfiedPresets: the compliance presets whose protocols and suites contain every TLS
	// setting of the profile, counted only when every channel is Required.
	// +optional
	// +listType=set
	SatisfiedPresets []CompliancePreset `json:"satisfiedPresets,omitempty"`
}

// EncryptionProfileStatus reports the profile's security rank.
type EncryptionProfileStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// assessment: rank and compliance presets.
	// +optional
	Assessment *SecurityAssessment `json:"assessment,omitempty"`

	// conditions: Valid says whether the profile can be resolved (suites, protocols, presets).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// EncryptionProfile is a reusable wire-encryption profile, referenced by SecuredDatastores
// (spec.encryption.profileRef) and TradeoffStudies (spec.matrix.profiles), like a StorageClass
// for encryption. Its status carries the operator's security rank of the profile.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=encp;encprofile,categories=secured
// +kubebuilder:printcolumn:name="AR",type=string,JSONPath=`.spec.clientToNode.mode`,description="Client-to-node (application-replica) mode"
// +kubebuilder:printcolumn:name="RR",type=string,JSONPath=`.spec.nodeToNode.mode`,description="Node-to-node (replica-replica) mode"
// +kubebuilder:printcolumn:name="Rank",type=integer,JSONPath=`.status.assessment.rank`,description="Security rank (0-128, higher is stronger)"
// +kubebuilder:printcolumn:name="Presets",type=string,JSONPath=`.status.assessment.satisfiedPresets`,priority=1
// +kubebuilder:printcolumn:name="At rest",type=integer,JSONPath=`.status.assessment.atRestRank`,priority=1,description="Rank of the encryption of the datastore's files, by the datastore or its volume (0: none)"
// +kubebuilder:printcolumn:name="Client side",type=integer,JSONPath=`.status.assessment.clientSideRank`,priority=1,description="Rank of the client's encryption of values (0: none)"
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EncryptionProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the profile.
	// +optional
	Spec EncryptionProfileSpec `json:"spec,omitempty"`
	// status is the operator's assessment of the profile.
	// +optional
	Status EncryptionProfileStatus `json:"status,omitempty"`
}

// EncryptionProfileList is a list of EncryptionProfiles.
// +kubebuilder:object:root=true
type EncryptionProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EncryptionProfile `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EncryptionProfile{}, &EncryptionProfileList{})
}
