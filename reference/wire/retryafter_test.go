package wire

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"retry-after-ms first", http.Header{"Retry-After-Ms": {"250"}, "X-Ms-Retry-After-Ms": {"900"}, "Retry-After": {"7"}}, 250 * time.Millisecond},
		{"x-ms-retry-after-ms before Retry-After", http.Header{"X-Ms-Retry-After-Ms": {"900"}, "Retry-After": {"7"}}, 900 * time.Millisecond},
		{"Retry-After seconds", http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{"Retry-After date", http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second},
		{"Retry-After date in the past", http.Header{"Retry-After": {now.Add(-time.Second).Format(http.TimeFormat)}}, 0},
		{"zero skips to the next", http.Header{"X-Ms-Retry-After-Ms": {"0"}, "Retry-After": {"1"}}, time.Second},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"absurdly long", http.Header{"Retry-After": {"99999999999999"}}, 0},
	} {
		if got := RetryAfter(tc.header, now); got != tc.want {
			t.Errorf("%s: RetryAfter = %v, want %v", tc.name, got, tc.want)
		}
	}
	e := DecodeError(503, http.Header{"Retry-After": {"1"}}, []byte(`{"odata.error":{"code":"ServerBusy","message":{"value":"busy"}}}`))
	if e.Status != 503 || e.Code != "ServerBusy" || e.RetryAfter != time.Second {
		t.Errorf("DecodeError of a throttling answer: %+v", e)
	}
}
