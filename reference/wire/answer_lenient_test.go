package wire

import (
	"testing"
	"time"
)

// Answers are read as the service (or an emulator) may send them: a nine-digit Timestamp
// and a date before 1601 decode, where a request with the same values is refused. Issue 11:
// an emulator's nine-digit Timestamp was reported as a 400 it never sent.
func TestAnswersDecodeLenientlyRequestsStrictly(t *testing.T) {
	body := []byte(`{"PartitionKey":"p","RowKey":"r","Timestamp":"2024-05-06T07:08:09.123456789Z",` +
		`"Old@odata.type":"Edm.DateTime","Old":"1600-12-31T23:59:59Z"}`)
	e, err := DecodeEntity(body)
	if err != nil {
		t.Fatalf("answer refused: %v", err)
	}
	if want := time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC); !e.Timestamp.Equal(want) {
		t.Errorf("Timestamp %v, want %v", e.Timestamp, want)
	}
	if got := e.Properties["Old"].Time(); got.Year() != 1600 {
		t.Errorf("Old %v", got)
	}
	if _, err := DecodeRequestEntity(body); err == nil {
		t.Error("a request with a date before 1601 was accepted")
	}
	if _, err := AnswerDateTime("2024-05-06T07:08:09.1234567891Z"); err != nil {
		t.Errorf("ten digits: %v", err)
	}
	if _, err := AnswerDateTime("2024-05-06 07:08"); err == nil {
		t.Error("a malformed DateTime was read")
	}
}
