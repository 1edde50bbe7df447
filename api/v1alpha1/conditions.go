package v1alpha1

// Condition types. Every kind reports metav1.Conditions; these are the types it uses.
const (
	// ConditionReady: the object does what its spec asks (datastore serving, profile usable,
	// benchmark target reachable, study planned).
	ConditionReady = "Ready"
	// ConditionProfileResolved: the profile reference, inline overrides and defaults resolve to
	// one valid effective profile that the engine can honour.
	ConditionProfileResolved = "ProfileResolved"
	// ConditionCertificatesReady: every certificate the datastore needs is issued and mounted.
	ConditionCertificatesReady = "CertificatesReady"
	// ConditionKerberosReady: principals and keytabs exist (HBase with Kerberos).
	ConditionKerberosReady = "KerberosReady"
	// ConditionLoginsReady: Cassandra's default superuser is replaced by a generated one and
	// the benchmark clients' role exists (password authentication).
	ConditionLoginsReady = "LoginsReady"
	// ConditionPlacementSatisfied: nodes with the required CPU crypto features exist.
	ConditionPlacementSatisfied = "PlacementSatisfied"
	// ConditionEncryptionVerified: the wire prober saw exactly the effective profile.
	ConditionEncryptionVerified = "EncryptionVerified"
	// ConditionProgressing: a change is being rolled out; the message says which step and pod.
	ConditionProgressing = "Progressing"
	// ConditionValid: an EncryptionProfile resolves on its own.
	ConditionValid = "Valid"
	// ConditionLoaded: a benchmark's load phase inserted its records.
	ConditionLoaded = "Loaded"
	// ConditionComplete: a benchmark or study finished, or gave up.
	ConditionComplete = "Complete"
	// ConditionSynced: the last reconcile pass of the object ran without error. False carries
	// the error, so that it reaches the object and not only the operator's log; a Warning
	// event with the same reason says so too.
	ConditionSynced = "Synced"
)

// Reasons of Synced, on every kind.
const (
	ReasonReconcileSuccess = "ReconcileSuccess"
	ReasonReconcileError   = "ReconcileError"
)

// Reasons of the profile conditions (ProfileResolved, Valid), shared by several kinds.
const (
	ReasonResolved        = "Resolved"
	ReasonProfileNotFound = "ProfileNotFound"
	ReasonInvalidProfile  = "InvalidProfile"
)

// Reasons of a datastore's Ready and Progressing conditions. The phase is derived from them.
const (
	// ReasonProvisioning: the datastore was never Ready and is being created.
	ReasonProvisioning = "Provisioning"
	// ReasonRolling: Progressing while pods restart into a new step.
	ReasonRolling = "Rolling"
	// ReasonRolledOut: Progressing False, every pod runs the effective profile.
	ReasonRolledOut = "RolledOut"
	// ReasonUpdating: Ready False while a change rolls out on a datastore that was Ready.
	ReasonUpdating = "Updating"
	// ReasonDegraded: Ready False, the effective profile is rolled out but nodes are missing.
	ReasonDegraded = "Degraded"
	// ReasonNodesReady: Ready True.
	ReasonNodesReady = "NodesReady"
	// ReasonIssuingCertificates: Progressing while the first node waits for its certificate.
	ReasonIssuingCertificates = "IssuingCertificates"
	// ReasonNameConflict: an object the datastore would own exists and belongs to someone else.
	ReasonNameConflict = "NameConflict"
	// ReasonClientKeysMismatch: the Secret <name>-client-keys does not hold the keys that
	// spec.encryption.clientSide needs (another cipher, key length or signature algorithm).
	ReasonClientKeysMismatch = "ClientKeysMismatch"
	// ReasonAtRestKeysMissing: the Secret <name>-at-rest-keys lacks its keystore or password.
	ReasonAtRestKeysMissing = "AtRestKeysMissing"
	// ReasonInvalidConfiguration: the engine's objects cannot be rendered from the spec.
	ReasonInvalidConfiguration = "InvalidConfiguration"
	// ReasonPodSecurityForbidsVPN: the namespace's Pod Security level refuses the VPN sidecar.
	ReasonPodSecurityForbidsVPN = "PodSecurityForbidsVPN"
	// ReasonNoTunnelKeyServer: a VPN profile, but the operator runs without the key server its
	// sidecars fetch their keys from.
	ReasonNoTunnelKeyServer = "NoTunnelKeyServer"
	// ReasonVolumeEncryptionChangeUnsupported: atRest.volume turned on or off on a running
	// datastore, whose data is already on its volumes in the other form.
	ReasonVolumeEncryptionChangeUnsupported = "VolumeEncryptionChangeUnsupported"
)

// Reasons of LoginsReady (Cassandra's password authentication), and of Ready while the logins
// are pending.
const (
	// ReasonLoginsBootstrapped: the default superuser is replaced and the clients' role exists.
	ReasonLoginsBootstrapped = "LoginsBootstrapped"
	// ReasonLoginsPending: waiting for every node, or the bootstrap is under way.
	ReasonLoginsPending = "LoginsPending"
	// ReasonLoginBootstrapFailed: the last attempt failed (the message says why); retried.
	ReasonLoginBootstrapFailed = "LoginBootstrapFailed"
	// ReasonAuthenticationDisabled: spec.cassandra.authentication is None.
	ReasonAuthenticationDisabled = "AuthenticationDisabled"
	// ReasonTunnelAuthenticates: the VPN carries clients; tunnel keys admit them.
	ReasonTunnelAuthenticates = "TunnelAuthenticates"
)

// Reasons of CertificatesReady and KerberosReady.
const (
	// ReasonNotNeeded: the effective profile needs no certificate (or no Kerberos).
	ReasonNotNeeded = "NotNeeded"
	ReasonIssuing   = "Issuing"
	ReasonIssued    = "Issued"
	// ReasonRenewalStalled: cert-manager has been issuing a renewal for longer than the
	// operator's --certificate-renewal-stall; nodes keep the current certificate meanwhile.
	ReasonRenewalStalled = "RenewalStalled"
	// ReasonCertManagerMissing: the profile needs certificates and the cluster has no
	// cert-manager API.
	ReasonCertManagerMissing = "CertManagerMissing"
	// ReasonInvalidKey: the requested key cannot serve the profile's cipher suites.
	ReasonInvalidKey = "InvalidKey"
	// ReasonInvalidPrincipals: the principals Secret does not parse or cannot be rendered.
	ReasonInvalidPrincipals = "InvalidPrincipals"
	ReasonKeytabsIssued     = "KeytabsIssued"
)

// Reasons of PlacementSatisfied.
const (
	ReasonNodesQualify    = "NodesQualify"
	ReasonNoNodeQualifies = "NoNodeQualifies"
)

// Reasons of EncryptionVerified. For False, most severe first: when endpoints differ in
// several ways, the most severe is the reason.
const (
	// ReasonProbePending: Unknown until every node runs the effective profile, and while the
	// first scan of its endpoints is under way.
	ReasonProbePending = "Pending"
	// ReasonNoEndpoints: Unknown while no node is ready to be probed.
	ReasonNoEndpoints       = "NoEndpoints"
	ReasonUnreachable       = "Unreachable"
	ReasonPlaintextAccepted = "PlaintextAccepted"
	// ReasonProbeIncomplete: the probe could not test something the profile promises (whether
	// plaintext is refused, whether client certificates are enforced); no result is no pass.
	ReasonProbeIncomplete       = "ProbeIncomplete"
	ReasonProtocolDrift         = "ProtocolDrift"
	ReasonCipherSuiteDrift      = "CipherSuiteDrift"
	ReasonClientAuthNotEnforced = "ClientAuthNotEnforced"
	// ReasonCertificateUntrusted: an endpoint presents a certificate that does not chain to
	// the datastore's trust bundle, has expired or is not yet valid, or names another host.
	ReasonCertificateUntrusted = "CertificateUntrusted"
	ReasonVerified             = "Verified"
)

// Reasons of a benchmark's Ready, Loaded and Complete conditions.
const (
	ReasonTargetReady         = "TargetReady"
	ReasonTargetNotFound      = "TargetNotFound"
	ReasonTargetNotReady      = "TargetNotReady"
	ReasonTargetNotMeasurable = "TargetNotMeasurable"
	ReasonLoaded              = "Loaded"
	ReasonLoadFailed          = "LoadFailed"
	// ReasonLoadRetried is an event's: a load with failed inserts runs again.
	ReasonLoadRetried        = "LoadRetried"
	ReasonRunFailed          = "RunFailed"
	ReasonTooManyInvalidRuns = "TooManyInvalidRuns"
	ReasonSucceeded          = "Succeeded"
)

// Reasons of a study's Ready, Progressing and Complete conditions (Progressing True carries
// the study's phase, Running or Paused, as its reason).
const (
	ReasonPlanned   = "Planned"
	ReasonCancelled = "Cancelled"
	// ReasonNotShareable: spec.datastores is Shared, but a profile protects more than the
	// client-to-node channel, or the baseline protects something; Ready stays False.
	ReasonNotShareable = "NotShareable"
	// ReasonNothingCompared: the study ended Failed, with no overhead to report: every cell,
	// or every baseline cell, failed.
	ReasonNothingCompared = "NothingCompared"
	// ReasonRoundAdded (an event): spec.precision added a round to the schedule.
	ReasonRoundAdded = "RoundAdded"
	// ReasonRoundNotAdded (an event): a round spec.precision asked for would pass
	// spec.precision.maxRounds rounds' runs or end after spec.precision.maxDuration, so the
	// study concludes short of its precision target; the message says which and by how much.
	ReasonRoundNotAdded = "RoundNotAdded"
	// ReasonSwitching (an event): a Switched study changed a datastore's profile for the next
	// run's cell.
	ReasonSwitching = "Switching"
	// ReasonSwitched (an event): the datastore runs the cell's profile, Ready and verified; the
	// event says how long the switch took.
	ReasonSwitched = "Switched"
	// ReasonRunSetAside (an event): a run's background exceeded spec.background.maxCores, or
	// its clients could not keep the fixed rate; the round is measured again.
	ReasonRunSetAside = "RunSetAside"
	// ReasonRunWaitsForQuiet (an event): a benchmark run waits for its nodes' background to
	// fall below spec.quietStart.maxCores before its clients start.
	ReasonRunWaitsForQuiet = "RunWaitsForQuiet"
	// ReasonRunQuiet (an event): a run that waited starts on quiet nodes.
	ReasonRunQuiet = "RunQuiet"
	// ReasonRunNotQuiet (an event): a run starts after spec.quietStart.maxWait although its
	// nodes are still busy.
	ReasonRunNotQuiet = "RunNotQuiet"
)
