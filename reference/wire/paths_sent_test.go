package wire

import (
	"reflect"
	"testing"
)

// parseSentResource reads what it takes as parseAnyResource does, takes the forms the SDKs
// send, and leaves the rest: checked on samples, every prefix of them and each with any
// byte replaced by one that matters to either reader.
func TestParseSentResourceIsParseAnyResource(t *testing.T) {
	samples := []string{
		"sdkceiling", "sdkceiling(PartitionKey='u',RowKey='i00-1-0000000000')", "t(PartitionKey='',RowKey='')",
		"Tables", "Tables()", "$batch", "Tables('x')", "t()", "", "t(PartitionKey='a b',RowKey='ä')",
		"t(RowKey='r',PartitionKey='p')", "t(PartitionKey='p''q',RowKey='r')", "t(PartitionKey='p%27',RowKey='r')",
		"Tables(PartitionKey='p',RowKey='r')", "$batch(PartitionKey='p',RowKey='r')", "t(PartitionKey='p',RowKey='r')x",
	}
	taken := 0
	check := func(seg string) {
		got, ok := parseSentResource(seg)
		want, err := parseAnyResource(seg)
		if ok {
			taken++
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%q: parseSentResource %+v, parseAnyResource %+v, %v", seg, got, want, err)
			}
		}
		if pr, perr := ParseResource(seg); !reflect.DeepEqual(pr, want) || !reflect.DeepEqual(perr, err) {
			t.Errorf("%q: ParseResource %+v, %v; want %+v, %v", seg, pr, perr, want, err)
		}
	}
	for _, sample := range samples {
		for i := range len(sample) + 1 {
			check(sample[:i])
		}
		for i := range len(sample) {
			for _, c := range []byte("'%/()=,$._-~ aA0\x00\xc3") {
				b := []byte(sample)
				b[i] = c
				check(string(b))
			}
		}
	}
	for _, seg := range samples[:3] {
		if _, ok := parseSentResource(seg); !ok {
			t.Errorf("parseSentResource(%q) does not take the form the SDKs send", seg)
		}
	}
	if taken < 100 {
		t.Errorf("parseSentResource took %d segments", taken)
	}
}
