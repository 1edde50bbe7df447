package controllers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/probe"
	"secured.dev/operator/internal/verify"
)

// Defaults of the probe pool.
const (
	DefaultProbeWorkers = 4
	// DefaultProbeDeadline bounds the scan of one endpoint: a healthy one answers its dozen or
	// so handshakes in a second; one that answers each slowly would hold a worker for minutes.
	DefaultProbeDeadline = 60 * time.Second
)

// probePool scans endpoints off the reconcile path. A reconcile asks for a scan of its
// datastore's endpoints and returns at once; a bounded set of workers scans them, each endpoint
// within its own deadline, and wakes the datastore's reconcile when its last endpoint is done,
// which then records the results. A slow or black-holed endpoint holds one worker for at most the
// deadline and never a reconcile, so other datastores go on being reconciled and probed.
type probePool struct {
	prober   Prober
	workers  int
	deadline time.Duration
	// wake carries the datastores whose scan finished to the controller (a channel source).
	wake chan event.GenericEvent

	mu      sync.Mutex
	queue   []probeJob
	ready   *sync.Cond
	batches map[types.NamespacedName]*probeBatch
	// logins are the datastores' login bootstraps (login_tasks.go), loginSlots bounds them.
	logins     map[types.NamespacedName]*loginTask
	loginSlots chan struct{}
	// ctx is Start's: work outlives no manager.
	ctx context.Context
}

// probeBatch is the scan of one datastore's endpoints.
type probeBatch struct {
	endpoints []verify.Endpoint
	results   []probeOutcome
	pending   int
	// at is when the scan was asked for, recorded as the observations' probe time.
	at metav1.Time
}

type probeOutcome struct {
	res probe.Result
	err error
}

type probeJob struct {
	key   types.NamespacedName
	batch *probeBatch
	i     int
}

func newProbePool(prober Prober, workers int, deadline time.Duration) *probePool {
	if prober == nil {
		prober = scanFunc(probe.Scan)
	}
	p := &probePool{prober: prober, workers: max(workers, 1), deadline: deadline, wake: make(chan event.GenericEvent, 64),
		batches: map[types.NamespacedName]*probeBatch{}, logins: map[types.NamespacedName]*loginTask{}, loginSlots: make(chan struct{}, max(workers, 1))}
	p.ready = sync.NewCond(&p.mu)
	return p
}

// Start runs the workers until ctx ends (a manager.Runnable).
func (p *probePool) Start(ctx context.Context) error {
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
	var wg sync.WaitGroup
	for range p.workers {
		wg.Go(func() { p.work(ctx) })
	}
	<-ctx.Done()
	p.mu.Lock()
	p.ready.Broadcast()
	p.mu.Unlock()
	wg.Wait()
	return nil
}

// contextLocked is Start's context, or the background before Start ran; p.mu is held.
func (p *probePool) contextLocked() context.Context {
	if p.ctx == nil {
		return context.Background()
	}
	return p.ctx
}

// wakeUp runs the datastore's reconcile again (the controller watches p.wake); false when ctx
// ended first.
func (p *probePool) wakeUp(ctx context.Context, key types.NamespacedName) bool {
	select {
	case p.wake <- event.GenericEvent{Object: &v1alpha1.SecuredDatastore{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}:
		return true
	case <-ctx.Done():
		return false
	}
}

// NeedLeaderElection: only the leader reconciles, so only it probes.
func (p *probePool) NeedLeaderElection() bool { return true }

func (p *probePool) work(ctx context.Context) {
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && ctx.Err() == nil {
			p.ready.Wait()
		}
		if ctx.Err() != nil {
			p.mu.Unlock()
			return
		}
		j := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()

		e := j.batch.endpoints[j.i]
		sctx, cancel := context.WithTimeout(ctx, p.deadline)
		res, err := p.prober.Scan(sctx, e.Address, e.Options)
		if err == nil && sctx.Err() != nil {
			err = fmt.Errorf("the probe did not finish within %s", p.deadline)
		}
		cancel()
		probeDuration.WithLabelValues(e.Channel).Observe(res.Duration.Seconds())

		p.mu.Lock()
		j.batch.results[j.i] = probeOutcome{res, err}
		j.batch.pending--
		done := j.batch.pending == 0
		p.mu.Unlock()
		if done && !p.wakeUp(ctx, j.key) {
			return
		}
	}
}

// collect returns the finished scan of exactly these endpoints, taking it out of the pool. When
// there is none, it asks for one (unless it is under way) and returns nil: the datastore's
// reconcile runs again when it is done.
func (p *probePool) collect(ds client.Object, endpoints []verify.Endpoint) *probeBatch {
	key := client.ObjectKeyFromObject(ds)
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.batches[key]; b != nil && slices.EqualFunc(b.endpoints, endpoints, sameEndpoint) {
		if b.pending > 0 {
			return nil // under way
		}
		delete(p.batches, key)
		return b
	}
	// A scan of other endpoints (a pod moved) is dropped: its workers finish into it unseen.
	b := &probeBatch{endpoints: endpoints, results: make([]probeOutcome, len(endpoints)), pending: len(endpoints), at: metav1.Now()}
	p.batches[key] = b
	for i := range endpoints {
		p.queue = append(p.queue, probeJob{key: key, batch: b, i: i})
	}
	p.ready.Broadcast()
	return nil
}

// forget drops what the pool holds for a deleted datastore.
func (p *probePool) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.batches, key)
	delete(p.logins, key)
}

func sameEndpoint(a, b verify.Endpoint) bool {
	return a.Pod == b.Pod && a.Channel == b.Channel && a.Address == b.Address && a.Tunnelled == b.Tunnelled
}
