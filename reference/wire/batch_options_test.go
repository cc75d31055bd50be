package wire

import "testing"

// TestParseBatchResponseBoundaryFromBody: without a Content-Type, the answer is refused
// unless the client asks for the boundaries to be read from the body.
func TestParseBatchResponseBoundaryFromBody(t *testing.T) {
	body := "--batchresponse_9\nContent-Type: multipart/mixed\n\n--changesetresponse_8\nContent-Type: application/http\n\nHTTP/1.1 204 No Content\nETag: W/\"1\"\n\n--changesetresponse_8--\n--batchresponse_9--\n"
	if _, err := ParseBatchResponse("", []byte(body)); err == nil {
		t.Error("an answer without a boundary in its Content-Type was read")
	}
	resp, err := ParseBatchResponse("", []byte(body), BoundaryFromBody())
	if err != nil {
		t.Fatal(err)
	}
	if !resp.HasChangeset || len(resp.Changeset) != 1 || resp.Changeset[0].Status != 204 || resp.Changeset[0].Header.Get("etag") != `W/"1"` {
		t.Errorf("got %+v", resp)
	}
}
