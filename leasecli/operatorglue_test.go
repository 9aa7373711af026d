package leasecli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasekit/leasekit/admission"
	"github.com/leasekit/leasekit/dirlease"
	"github.com/leasekit/leasekit/internal/require"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/leasecli"
)

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestAdmissionVerdictAndOperators: each admission state's verdict, and
// that only an operator-needed state gets a command, the quarantine
// confirmed by the bytes' sha256: a helper that still runs is waited for,
// never handed to an operator.
func TestAdmissionVerdictAndOperators(t *testing.T) {
	indeterminate := admission.State{Present: true, Path: "/h/a.json", ContentSHA256: sha, Disposition: admission.DispositionIndeterminate}
	waiting, needed := indeterminate, indeterminate
	waiting.Waiting, needed.OperatorNeeded = "its helper (PID 9) still runs", true
	corrupt := admission.State{Present: true, Path: "/h/a.json", ContentSHA256: sha, Disposition: admission.DispositionCorrupt,
		Problem: "not JSON", OperatorNeeded: true}
	for _, tc := range []struct {
		name    string
		state   admission.State
		verdict leasecli.Verdict
		why     string
	}{
		{"absent", admission.State{}, leasecli.VerdictFree, ""},
		{"recoverable", admission.State{Present: true, Disposition: admission.DispositionRecoverable}, leasecli.VerdictFree, ""},
		{"active", admission.State{Present: true, Disposition: admission.DispositionActive}, leasecli.VerdictHeld, ""},
		{"helper runs", waiting, leasecli.VerdictWaiting, ""},
		{"indeterminate", needed, leasecli.VerdictOperator, "indeterminate"},
		{"corrupt", corrupt, leasecli.VerdictOperator, "corrupt: not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.verdict, leasecli.AdmissionVerdict(tc.state))
			operators := leasecli.AdmissionOperators(tc.state, "~/state")
			if tc.why == "" {
				require.Empty(t, operators)
				return
			}
			require.Len(t, operators, 1)
			require.Equal(t, "leasereal admission quarantine --state-home ~/state --sha256 "+sha, operators[0].Command)
			require.Contains(t, operators[0].Why, tc.why)
		})
	}
}

// TestJudgeDirlease: each claim's verdict and command, and the state
// home's verdict: its worst claim's, operator-needed at the bound.
func TestJudgeDirlease(t *testing.T) {
	claim := func(d dirlease.Disposition, operator bool, sum string) dirlease.ClaimState {
		return dirlease.ClaimState{Name: "c.json", Path: "/h/claims/c.json", Disposition: d, OperatorNeeded: operator, ContentSHA256: sum}
	}
	for _, tc := range []struct {
		name    string
		claim   dirlease.ClaimState
		verdict leasecli.Verdict
		command string // a part of the operator command; "" for none
		waiting bool
	}{
		{"recoverable", claim(dirlease.DispositionRecoverable, false, sha), leasecli.VerdictFree, "", false},
		{"active", claim(dirlease.DispositionActive, false, sha), leasecli.VerdictHeld, "", false},
		{"launching window", claim(dirlease.DispositionIndeterminate, false, sha), leasecli.VerdictWaiting, "", true},
		{"indeterminate", claim(dirlease.DispositionIndeterminate, true, sha), leasecli.VerdictOperator,
			"leasereal dirlease quarantine --state-home ~/s --claim c.json --sha256 " + sha, false},
		{"not a regular file", claim(dirlease.DispositionCorrupt, true, ""), leasecli.VerdictOperator, "by hand", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judged := leasecli.JudgeClaim(tc.claim, "~/s")
			require.Equal(t, tc.verdict, judged.Verdict)
			require.Equal(t, tc.waiting, judged.Waiting != "")
			require.Equal(t, tc.command != "", judged.Operator != nil)
			if judged.Operator != nil {
				require.Contains(t, judged.Operator.Command, tc.command)
			}
		})
	}
	home := leasecli.JudgeDirlease([]dirlease.ClaimState{claim(dirlease.DispositionActive, false, sha),
		claim(dirlease.DispositionIndeterminate, false, sha)}, "/h", "~/s")
	require.Equal(t, leasecli.VerdictWaiting, home.Verdict)
	require.Empty(t, home.Operators)
	full := make([]dirlease.ClaimState, dirlease.ClaimsMax)
	for i := range full {
		full[i] = claim(dirlease.DispositionActive, false, sha)
	}
	judged := leasecli.JudgeDirlease(full, "/h", "~/s")
	require.Equal(t, leasecli.VerdictOperator, judged.Verdict)
	require.NotNil(t, judged.Full)
	require.Equal(t, []leasecli.OperatorAction{*judged.Full}, judged.Operators)
	require.True(t, strings.HasPrefix(judged.Full.Command, "leasereal dirlease recover --state-home /h"), judged.Full.Command)
}

// TestAdmissionQuarantine: an active admission is refused without a
// confirmation being looked at; a corrupt one is a dry run without one,
// moved with it; then there is nothing left.
func TestAdmissionQuarantine(t *testing.T) {
	ctx := context.Background()
	dirConfig, _ := runConfig(t)
	config := admission.Config{StateHome: runHome, FS: dirConfig.FS, Clock: dirConfig.Clock,
		Inspector: dirConfig.Inspector, IDs: dirConfig.IDs}
	held, err := admission.Acquire(ctx, config)
	require.NoError(t, err)
	refused, err := leasecli.AdmissionQuarantine(ctx, config, sha)
	require.NoError(t, err)
	require.Equal(t, leasecli.QuarantineRefused, refused.Result)
	require.NoError(t, held.Release(ctx))
	leasetest.WriteNew(t, config.FS, refused.State.Path, []byte("not an admission"))

	dry, err := leasecli.AdmissionQuarantine(ctx, config, "")
	require.NoError(t, err)
	require.Equal(t, leasecli.QuarantineDryRun, dry.Result)
	require.Contains(t, dry.Why, "--sha256 "+dry.State.ContentSHA256)
	moved, err := leasecli.AdmissionQuarantine(ctx, config, dry.State.ContentSHA256)
	require.NoError(t, err)
	require.Equal(t, leasecli.Quarantined, moved.Result)
	require.Contains(t, moved.QuarantinePath, "/quarantine/")
	nothing, err := leasecli.AdmissionQuarantine(ctx, config, dry.State.ContentSHA256)
	require.NoError(t, err)
	require.Equal(t, leasecli.QuarantineNothing, nothing.Result)
}

// TestDirleaseQuarantine: the dry run moves nothing and names the
// confirmation; the engine refuses an active claim; an absent claim is
// nothing; a corrupt entry moves with its confirmation.
func TestDirleaseQuarantine(t *testing.T) {
	ctx := context.Background()
	config, _ := runConfig(t)
	held, err := dirlease.Create(ctx, config, dirlease.CreateRequest{Role: dirlease.RoleRawWorking, Path: runPath,
		RecoverAfterMs: config.Clock.Now().Add(time.Minute).UnixMilli()})
	require.NoError(t, err)
	states, err := dirlease.Inspect(ctx, config)
	require.NoError(t, err)
	require.Len(t, states, 1)
	dry, err := leasecli.DirleaseQuarantine(ctx, config, states[0].Name, "")
	require.NoError(t, err)
	require.Equal(t, leasecli.QuarantineDryRun, dry.Result)
	require.Contains(t, dry.Why, "--sha256 "+states[0].ContentSHA256)
	_, err = leasecli.DirleaseQuarantine(ctx, config, states[0].Name, states[0].ContentSHA256)
	require.ErrorIs(t, err, dirlease.ErrActive)
	require.NoError(t, held.Release(ctx))
	nothing, err := leasecli.DirleaseQuarantine(ctx, config, states[0].Name, "")
	require.NoError(t, err)
	require.Equal(t, leasecli.QuarantineNothing, nothing.Result)

	junk := states[0].Path[:strings.LastIndex(states[0].Path, "/")] + "/junk"
	leasetest.WriteNew(t, config.FS, junk, []byte("junk"))
	dry, err = leasecli.DirleaseQuarantine(ctx, config, "junk", "")
	require.NoError(t, err)
	moved, err := leasecli.DirleaseQuarantine(ctx, config, "junk", dry.State.ContentSHA256)
	require.NoError(t, err)
	require.Equal(t, leasecli.Quarantined, moved.Result)
	require.Equal(t, dirlease.DispositionCorrupt, moved.State.Disposition)
}
