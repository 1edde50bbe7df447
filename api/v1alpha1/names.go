package v1alpha1

// The longest names the CRDs accept (their metadata.name rules say the same): every object,
// pod and label the operator derives from a name of this length is still valid. The builders'
// tests render objects at these lengths.
const (
	MaxCassandraDatastoreName = 52 // StatefulSet <name> + "-" + a 10-character revision hash in a label
	MaxHBaseDatastoreName     = 45 // StatefulSet <name>-master + "-" + revision hash
	MaxBenchmarkName          = 52 // Indexed Job pod host <name>-run-<n>-<index>
	MaxStudyName              = 40 // datastore <name>-c<cell>, benchmark <name>-c<cell>-r<repetition>
)
