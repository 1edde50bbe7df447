package v1alpha1

// Condition types. Every kind reports metav1.Conditions; these are the types it uses.
const (
	// ConditionReady: the object does what its spec asks (datastore serving, profile usable).
	ConditionReady = "Ready"
	// ConditionProfileResolved: the profile reference, inline overrides and defaults resolve to
	// one valid effective profile that the engine can honour.
	ConditionProfileResolved = "ProfileResolved"
	// ConditionCertificatesReady: every certificate the datastore needs is issued and mounted.
	ConditionCertificatesReady = "CertificatesReady"
	// ConditionKerberosReady: principals and keytabs exist (HBase with Kerberos).
	ConditionKerberosReady = "KerberosReady"
	// ConditionPlacementSatisfied: nodes with the required CPU crypto features exist.
	ConditionPlacementSatisfied = "PlacementSatisfied"
	// ConditionEncryptionVerified: the wire prober saw exactly the effective profile.
	ConditionEncryptionVerified = "EncryptionVerified"
	// ConditionProgressing: a change is being rolled out; the message says which step and pod.
	ConditionProgressing = "Progressing"
	// ConditionValid: an EncryptionProfile resolves on its own.
	ConditionValid = "Valid"
	// ConditionComplete: a benchmark or study finished.
	ConditionComplete = "Complete"
)

// Condition reasons shared by several kinds.
const (
	ReasonResolved        = "Resolved"
	ReasonProfileNotFound = "ProfileNotFound"
	ReasonInvalidProfile  = "InvalidProfile"
)
