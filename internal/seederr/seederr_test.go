package seederr

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

type kind int

func (k kind) Error() string { return "test kind" }

const (
	kindActive kind = iota + 1
	kindUnsafe
)

func TestErrorTextIsTheSeedsAndNamesPathAndCause(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "/s/active.json", Err: fs.ErrPermission}
	cases := []struct {
		err  *Error[kind]
		text string
	}{
		{New(kindActive, "", "another export is active", nil), "leasekit recovery: another export is active"},
		{New(kindActive, "/s/active.json", "another export is active", nil),
			"leasekit recovery: another export is active (/s/active.json)"},
		{New(kindUnsafe, "/s", "could not acquire safely", cause),
			"leasekit recovery: could not acquire safely (/s): open /s/active.json: permission denied"},
	}
	for _, tc := range cases {
		require.Equal(t, tc.text, tc.err.Error())
	}
}

func TestKindIsASentinelAndCauseUnwraps(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "/s/x", Err: fs.ErrNotExist}
	err := error(New(kindUnsafe, "/s", "could not release safely", cause))
	require.ErrorIs(t, err, kindUnsafe)
	require.NotErrorIs(t, err, kindActive)
	require.ErrorIs(t, err, fs.ErrNotExist)
	var pathErr *fs.PathError
	require.ErrorAs(t, err, &pathErr)
}

func TestWrapUnexpectedKeepsOwnErrorsAndWrapsOthers(t *testing.T) {
	own := New(kindActive, "/s", "another export is active", nil)
	require.Same(t, own, WrapUnexpected(error(own), kindUnsafe, "/s", "could not acquire safely"))
	wrapped := WrapUnexpected(errors.New("EIO"), kindUnsafe, "/s", "could not acquire safely")
	require.ErrorIs(t, wrapped, kindUnsafe)
	require.Equal(t, "leasekit recovery: could not acquire safely (/s): EIO", wrapped.Error())
}

// TestLabelSetsThePrefixOnceThroughWrapsAndJoins: the caller's product
// wording reaches every refusal in the chain, a prefix already set stays.
func TestLabelSetsThePrefixOnceThroughWrapsAndJoins(t *testing.T) {
	first := New(kindActive, "", "another export is active", nil)
	second := New(kindUnsafe, "", "could not release safely", nil)
	labelled := &Error[kind]{Kind: kindUnsafe, Msg: "kept", Prefix: "Other"}
	err := errors.Join(fmt.Errorf("wrapped: %w", first), second, labelled)
	require.Same(t, err, Label[kind](err, "Beeper Message Like Me recovery"))
	require.Equal(t, "Beeper Message Like Me recovery: another export is active", first.Error())
	require.Equal(t, "Beeper Message Like Me recovery: could not release safely", second.Error())
	require.Equal(t, "Other: kept", labelled.Error())
	require.NoError(t, Label[kind](nil, "x"))
}
