package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"secured.dev/operator/internal/cqlauth"
)

// loginDeadline bounds one bootstrap: two logins and a dozen statements at QUORUM.
const loginDeadline = 60 * time.Second

// loginTask is one bootstrap of a datastore's logins, run off the reconcile path like the wire
// probe: a node that never answers must not hold a reconcile worker.
type loginTask struct {
	done bool
	out  cqlauth.Outcome
	err  error
}

// bootstrapLogins returns the finished bootstrap of the datastore, taking it out of the pool;
// when there is none it starts one (bounded by the pool's workers) and returns nil, and the
// datastore's reconcile runs again when it is done. A failed attempt reports after loginRetry,
// so that the next one, started by the reconcile it wakes, is paced.
func (p *probePool) bootstrapLogins(key types.NamespacedName, run func(context.Context) (cqlauth.Outcome, error)) *loginTask {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.logins[key]; t != nil {
		if !t.done {
			return nil
		}
		delete(p.logins, key)
		return t
	}
	t := &loginTask{}
	p.logins[key] = t
	ctx := p.contextLocked()
	go func() {
		select {
		case p.loginSlots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		tctx, cancel := context.WithTimeout(ctx, loginDeadline)
		out, err := run(tctx)
		if err == nil && tctx.Err() != nil {
			err = fmt.Errorf("the bootstrap did not finish within %s", loginDeadline)
		}
		cancel()
		<-p.loginSlots
		if err != nil {
			select {
			case <-time.After(loginRetry):
			case <-ctx.Done():
				return
			}
		}
		p.mu.Lock()
		t.done, t.out, t.err = true, out, err
		p.mu.Unlock()
		p.wakeUp(ctx, key)
	}()
	return nil
}
