package replay

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/wire"
)

// recordedTime is when an exchange was recorded (its answer's Date), or zero.
func recordedTime(x Exchange) time.Time {
	t, err := http.ParseTime(hget(x.ResponseHeader, "Date"))
	if err != nil {
		return time.Time{}
	}
	return t
}

// sasWindow moves a recorded SAS start and expiry to now, keeping their distance from the
// time of recording (so an expired SAS stays expired); without a recorded time the SAS is
// valid from 15 minutes ago for an hour.
func sasWindow(rec url.Values, recorded, now time.Time) (start, expiry time.Time) {
	start, expiry = now.Add(-15*time.Minute), now.Add(time.Hour)
	if recorded.IsZero() {
		return start, expiry
	}
	if t, err := parseSASParam(rec.Get("st")); err == nil {
		start = now.Add(t.Sub(recorded))
	} else if rec.Get("st") == "" {
		start = time.Time{}
	}
	if t, err := parseSASParam(rec.Get("se")); err == nil {
		expiry = now.Add(t.Sub(recorded))
	}
	return start, expiry
}

func parseSASParam(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a SAS time: %q", v)
}

// reissueSAS signs a SAS like the recorded one with the target's key, its validity moved to
// now (sasWindow). A recorded SAS whose permissions were sanitised away, or that names a
// stored access policy, cannot be reissued; the request is then signed with Shared Key
// instead (nil is returned).
func (r *Replayer) reissueSAS(st *state, rec url.Values, recorded time.Time) (url.Values, error) {
	if rec.Get("sig") == "" || rec.Get("sp") == "" || rec.Get("si") != "" {
		return nil, nil
	}
	now := r.now().UTC().Truncate(time.Second)
	start, expiry := sasWindow(rec, recorded, now)
	if tn := rec.Get("tn"); tn != "" {
		sas := wire.SAS{Table: st.table(tn), Permissions: rec.Get("sp"), Start: start, Expiry: expiry,
			StartPK: rec.Get("spk"), StartRK: rec.Get("srk"), EndPK: rec.Get("epk"), EndRK: rec.Get("erk"),
			Protocol: rec.Get("spr"), IPRange: rec.Get("sip")}
		q, err := sas.Encode(r.Target.Account, r.Target.Key)
		if err != nil {
			return nil, nil
		}
		return q, nil
	}
	if rec.Get("ss") != "" && rec.Get("srt") != "" {
		return accountSAS(r.Target.Account, r.Target.Key, rec, start, expiry), nil
	}
	return nil, nil
}

// accountSAS signs an account SAS with the recorded services, resource types and
// permissions (EVIDENCE.md 7, E-account-sas).
func accountSAS(account string, key []byte, rec url.Values, start, expiry time.Time) url.Values {
	sv := rec.Get("sv")
	if sv == "" {
		sv = "2019-02-02"
	}
	st, se := "", expiry.UTC().Format("2006-01-02T15:04:05Z")
	if !start.IsZero() {
		st = start.UTC().Format("2006-01-02T15:04:05Z")
	}
	fields := []string{account, rec.Get("sp"), rec.Get("ss"), rec.Get("srt"), st, se, "", rec.Get("spr"), sv}
	if sv >= "2020-12-06" {
		fields = append(fields, rec.Get("ses"))
	}
	q := url.Values{"sv": {sv}, "ss": {rec.Get("ss")}, "srt": {rec.Get("srt")}, "sp": {rec.Get("sp")}, "se": {se}}
	if st != "" {
		q.Set("st", st)
	}
	if rec.Get("spr") != "" {
		q.Set("spr", rec.Get("spr"))
	}
	q.Set("sig", wire.Sign(key, strings.Join(fields, "\n")+"\n"))
	return q
}
