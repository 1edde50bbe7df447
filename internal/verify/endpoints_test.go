package verify

import (
	"errors"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
)

func pod(name, ip, component string, ready bool, started time.Time) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/component": component}},
		Status: corev1.PodStatus{PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}},
			ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}}},
	}
}

func TestEndpoints(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	enc := v1alpha1.EffectiveEncryption{
		ClientToNode: v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelRequired},
		NodeToNode:   v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelOptional},
	}
	pods := []corev1.Pod{
		pod("ds-0", "10.0.0.1", "", true, t0),
		pod("ds-1", "10.0.0.2", "", false, t0), // not ready: nothing to probe
		pod("ds-2", "", "", true, t0),          // no address yet
	}
	tests := map[string]struct {
		got  []Endpoint
		want []Endpoint
	}{
		"cassandra: client and internode port of each ready pod": {
			got: CassandraEndpoints(pods, enc, false, false),
			want: []Endpoint{
				{Pod: "ds-0", Channel: ChannelClientToNode, Address: "10.0.0.1:9042", Want: enc.ClientToNode, Options: probe.CassandraClient},
				{Pod: "ds-0", Channel: ChannelNodeToNode, Address: "10.0.0.1:7000", Want: enc.NodeToNode, Options: probe.CassandraInternode},
			},
		},
		"cassandra: tunnelled channels": {
			got: CassandraEndpoints(pods[:1], enc, true, false),
			want: []Endpoint{
				{Pod: "ds-0", Channel: ChannelClientToNode, Address: "10.0.0.1:9042", Want: enc.ClientToNode, Options: probe.CassandraClient, Tunnelled: true},
				{Pod: "ds-0", Channel: ChannelNodeToNode, Address: "10.0.0.1:7000", Want: enc.NodeToNode, Options: probe.CassandraInternode},
			},
		},
		"hbase: the RPC port of Masters and RegionServers, ZooKeeper's client port": {
			got: HBaseEndpoints([]corev1.Pod{
				pod("db-master-0", "10.0.1.1", "master", true, t0),
				pod("db-rs-0", "10.0.1.2", "rs", true, t0),
				pod("db-zk-0", "10.0.1.3", "zk", true, t0),
				pod("db-rs-1", "10.0.1.4", "rs", false, t0),
			}, enc),
			want: []Endpoint{
				{Pod: "db-master-0", Channel: ChannelClientToNode, Address: "10.0.1.1:16000", Want: enc.ClientToNode, Options: probe.HBaseRPC},
				{Pod: "db-rs-0", Channel: ChannelClientToNode, Address: "10.0.1.2:16020", Want: enc.ClientToNode, Options: probe.HBaseRPC},
				{Pod: "db-zk-0", Channel: ChannelClientToNode, Address: "10.0.1.3:2181", Want: enc.ClientToNode, Options: probe.ZooKeeperClient},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if len(tc.got) != len(tc.want) {
				t.Fatalf("got %d endpoints %+v, want %d", len(tc.got), tc.got, len(tc.want))
			}
			for i := range tc.want {
				g, w := tc.got[i], tc.want[i]
				if g.Pod != w.Pod || g.Channel != w.Channel || g.Address != w.Address || g.Want.Mode != w.Want.Mode || !reflect.DeepEqual(g.Options, w.Options) || g.Tunnelled != w.Tunnelled {
					t.Errorf("endpoint %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// A verdict that decided nothing, or a failed one no later probe has confirmed, is retried
// within InconclusiveRecheck, not at the next periodic probe; a passed one, or a failed one
// seen again, stands for the configured interval.
func TestInterval(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 19, 21, 47, 0, time.UTC)
	failed := func(reason string) *metav1.Condition {
		return &metav1.Condition{Status: metav1.ConditionFalse, Reason: reason, LastTransitionTime: metav1.NewTime(t0)}
	}
	probed := func(at ...time.Time) []v1alpha1.ObservedChannel {
		var o []v1alpha1.ObservedChannel
		for _, a := range at {
			o = append(o, v1alpha1.ObservedChannel{LastProbeTime: metav1.NewTime(a)})
		}
		return o
	}
	before, after := t0.Add(-2*time.Second), t0.Add(InconclusiveRecheck)
	for name, tc := range map[string]struct {
		verified *metav1.Condition
		observed []v1alpha1.ObservedChannel
		want     time.Duration
	}{
		"never probed":                  {nil, nil, 5 * time.Minute},
		"verified":                      {&metav1.Condition{Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonVerified}, probed(after), 5 * time.Minute},
		"drift, once":                   {failed(v1alpha1.ReasonCipherSuiteDrift), probed(before, before), InconclusiveRecheck},
		"drift, again":                  {failed(v1alpha1.ReasonCipherSuiteDrift), probed(after, after), 5 * time.Minute},
		"one endpoint not probed again": {failed(v1alpha1.ReasonPlaintextAccepted), probed(after, before), InconclusiveRecheck},
		"incomplete":                    {failed(v1alpha1.ReasonProbeIncomplete), probed(after), InconclusiveRecheck},
		"unreachable":                   {failed(v1alpha1.ReasonUnreachable), probed(after), InconclusiveRecheck},
	} {
		if got := Interval(tc.verified, tc.observed, 5*time.Minute); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if got := Interval(failed(v1alpha1.ReasonUnreachable), nil, 10*time.Second); got != 10*time.Second {
		t.Errorf("a configured interval shorter than the recheck: %v", got)
	}
}

// A failed verdict is confirmed once every endpoint was probed again after it was reached;
// a passed verdict, or one from the same probe (same second), is not.
func TestConfirmed(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 19, 21, 47, 0, time.UTC)
	at := func(ts ...time.Time) []v1alpha1.ObservedChannel {
		var o []v1alpha1.ObservedChannel
		for _, a := range ts {
			o = append(o, v1alpha1.ObservedChannel{LastProbeTime: metav1.NewTime(a)})
		}
		return o
	}
	failed := &metav1.Condition{Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonPlaintextAccepted, LastTransitionTime: metav1.NewTime(t0)}
	later := t0.Add(31 * time.Second)
	for name, tc := range map[string]struct {
		verified *metav1.Condition
		observed []v1alpha1.ObservedChannel
		want     bool
	}{
		"no verdict":                  {nil, at(later), false},
		"passed":                      {&metav1.Condition{Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}, at(later), false},
		"nothing observed":            {failed, nil, false},
		"the probe that reached it":   {failed, at(t0, t0), false},
		"every endpoint probed again": {failed, at(later, later), true},
		"one endpoint not yet":        {failed, at(later, t0), false},
	} {
		if got := Confirmed(tc.verified, tc.observed); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

func TestDue(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	eps := []Endpoint{{Channel: ChannelClientToNode, Address: "10.0.0.1:9042"}, {Channel: ChannelNodeToNode, Address: "10.0.0.1:7000"}}
	observed := func(at ...time.Time) []v1alpha1.ObservedChannel {
		var out []v1alpha1.ObservedChannel
		for i, a := range at {
			out = append(out, v1alpha1.ObservedChannel{Channel: eps[i].Channel, Endpoint: eps[i].Address, LastProbeTime: metav1.NewTime(a)})
		}
		return out
	}
	oldPod := []corev1.Pod{pod("ds-0", "10.0.0.1", "", true, t0.Add(-time.Hour))}
	// issued: the current node certificate's expiry, as cert-manager reports it (whole seconds).
	issued := t0.Add(90 * 24 * time.Hour)
	serving := func(o []v1alpha1.ObservedChannel, notAfter ...time.Time) []v1alpha1.ObservedChannel {
		for i := range o {
			// The probe reads the certificate's own time, which may carry less than a second.
			o[i].Certificate = &v1alpha1.ObservedCertificate{NotAfter: metav1.NewTime(notAfter[i].Add(300 * time.Millisecond))}
		}
		return o
	}
	tests := map[string]struct {
		observed []v1alpha1.ObservedChannel
		eps      []Endpoint
		pods     []corev1.Pod
		now      time.Time
		want     time.Duration
	}{
		"never probed":                                    {nil, eps, oldPod, t0, 0},
		"another set of endpoints":                        {observed(t0), eps, oldPod, t0, 0},
		"an endpoint moved":                               {observed(t0, t0), []Endpoint{eps[0], {Channel: ChannelNodeToNode, Address: "10.0.0.9:7000"}}, oldPod, t0, 0},
		"a container restarted since":                     {observed(t0, t0), eps, []corev1.Pod{pod("ds-0", "10.0.0.1", "", true, t0.Add(time.Second))}, t0.Add(2 * time.Second), 0},
		"the interval has passed":                         {observed(t0, t0), eps, oldPod, t0.Add(5 * time.Minute), 0},
		"waits for the oldest probe":                      {observed(t0.Add(time.Minute), t0), eps, oldPod, t0.Add(time.Minute), 4 * time.Minute},
		"long past the interval is 0":                     {observed(t0, t0), eps, oldPod, t0.Add(time.Hour), 0},
		"just probed waits the period":                    {observed(t0, t0), eps, oldPod, t0, 5 * time.Minute},
		"serving the issued certificate waits the period": {serving(observed(t0, t0), issued, issued), eps, oldPod, t0, 5 * time.Minute},
		"an endpoint serving the previous certificate is rechecked soon": {serving(observed(t0, t0), issued, issued.Add(-24*time.Hour)), eps, oldPod,
			t0.Add(10 * time.Second), ReloadRecheck - 10*time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Due(tc.observed, tc.eps, tc.pods, issued, tc.now, 5*time.Minute); got != tc.want {
				t.Errorf("Due = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestObservation(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC))
	e := Endpoint{Pod: "ds-0", Channel: ChannelClientToNode, Address: "10.0.0.1:9042"}
	notAfter := now.Add(24 * time.Hour)
	yes := true
	res := probe.Result{PlaintextAccepted: &yes, Certificate: &probe.Certificate{Subject: "CN=ds", Issuer: "CN=ca", DNSNames: []string{"ds-0"}, NotAfter: notAfter, Serial: "0a"}}
	o := Observation(e, res, nil, now)
	if o.Channel != ChannelClientToNode || o.Endpoint != e.Address || !o.LastProbeTime.Equal(&now) || o.PlaintextAccepted == nil || !*o.PlaintextAccepted || o.Error != "" {
		t.Errorf("observation %+v", o)
	}
	if c := o.Certificate; c == nil || c.Subject != "CN=ds" || c.Serial != "0a" || !c.NotAfter.Time.Equal(notAfter) || c.DNSNames[0] != "ds-0" {
		t.Errorf("certificate %+v", o.Certificate)
	}
	res.Certificate.DNSNames[0] = "changed"
	if o.Certificate.DNSNames[0] != "ds-0" {
		t.Error("the observation shares the probe result's DNS names")
	}
	if o := Observation(e, probe.Result{}, errors.New("connection refused"), now); o.Error != "connection refused" || o.Certificate != nil {
		t.Errorf("failed probe observed as %+v", o)
	}
}
