package client

import (
	"context"
	"errors"

	"loadgen/loadgen/protocol"
	"loadgen/results"
)

// Failure is a `loadgen run` that failed, as RunHint looks at it.
type Failure struct {
	Protocol, Target string
	// TLS is the run's TLS options, Enabled as it ran; nil when they
	// could not be read: no certificate hint then.
	TLS   *protocol.TLS
	NetNS string // the run's network namespace (--netns); "" this one
	Mix   bool   // a request mix (--targets)
	// Errors are the errors of a run that ended and failed by them.
	Errors results.Errors
	// Err is why a run did not end (nil: it ended).
	Err error
}

// RunHint says what to add to a run that failed:
//   - the certificate hint (CertHint) first, unless the run's error already
//     advises a certificate (protocol.ErrClientCertAdvised);
//   - else, for a run that ended, the protocol hint (Hint), looked at from
//     here: not for a run from another network namespace, nor a request
//     mix, whose requests go where they say.
//
// "" when there is nothing to say.
func RunHint(ctx context.Context, f Failure) string {
	cert := func() string {
		if f.TLS == nil || ctx.Err() != nil {
			return ""
		}
		return CertHint(ctx, f.Target, *f.TLS, f.NetNS)
	}
	return runHint(f, cert, func() string { return Hint(ctx, f.Protocol, f.Target, f.Errors) })
}

// runHint is RunHint's order, with the hints as functions: each is asked
// only when its turn comes.
func runHint(f Failure, cert, proto func() string) string {
	if f.Err != nil && errors.Is(f.Err, protocol.ErrClientCertAdvised) {
		return "" // the error says it
	}
	if hint := cert(); hint != "" {
		return hint
	}
	if f.Err != nil || f.NetNS != "" || f.Mix {
		return ""
	}
	return proto()
}
