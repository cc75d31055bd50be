package reference

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
)

// Continuation tokens in Storage's format (EVIDENCE.md 3.5, CONFIRMED-TRAFFIC): "1!", the length
// of the payload, "!", then the payload: the standard base64 of a key with '=' written as
// '-'. NextPartitionKey and NextRowKey carry the PartitionKey and RowKey of the next entity
// to return; NextTableName carries the next table's lower-case name, a 0x01 byte and a
// check of 16 hexadecimal digits. Tokens name a position in the key order, not an offset,
// so a query resumes exactly where it stopped even when entities were written in between.

// maxTokenLength bounds a token the decoders accept: a key of spec.MaxKeyBytes in UTF-16 is
// at most 1536 bytes of UTF-8, 2048 of base64.
const maxTokenLength = 4096

// EncodeKeyToken returns the continuation token that carries key.
func EncodeKeyToken(key string) string {
	payload := strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(key)), "=", "-")
	return "1!" + strconv.Itoa(len(payload)) + "!" + payload
}

// DecodeKeyToken returns the key a token from EncodeKeyToken carries. It fails, never
// panics, on anything else.
func DecodeKeyToken(token string) (string, error) {
	if len(token) > maxTokenLength {
		return "", fmt.Errorf("token of %d bytes is too long", len(token))
	}
	rest, ok := strings.CutPrefix(token, "1!")
	if !ok {
		return "", fmt.Errorf("token %q: no version prefix", token)
	}
	lenText, payload, ok := strings.Cut(rest, "!")
	if !ok {
		return "", fmt.Errorf("token %q: no length", token)
	}
	n, err := strconv.Atoi(lenText)
	if err != nil || n != len(payload) || lenText != strconv.Itoa(n) {
		return "", fmt.Errorf("token %q: length %q does not match a payload of %d bytes", token, lenText, len(payload))
	}
	if strings.Contains(payload, "=") {
		return "", fmt.Errorf("token %q: '=' in the payload", token)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(strings.ReplaceAll(payload, "-", "="))
	if err != nil {
		return "", fmt.Errorf("token %q: %w", token, err)
	}
	if !utf8.Valid(raw) {
		return "", fmt.Errorf("token %q: the key is not UTF-8", token)
	}
	return string(raw), nil
}

// encodeContinuation returns the continuation that resumes at key k.
func encodeContinuation(k api.Key) api.Continuation {
	return api.Continuation{NextPartitionKey: EncodeKeyToken(k.PartitionKey), NextRowKey: EncodeKeyToken(k.RowKey)}
}

// decodeContinuation returns the position a continuation resumes at; start is false for
// the zero continuation (the beginning). A NextPartitionKey alone resumes at the start of
// that partition.
func decodeContinuation(c api.Continuation) (pos api.Key, start bool, err error) {
	if c.IsZero() {
		return api.Key{}, false, nil
	}
	if c.NextPartitionKey == "" {
		return api.Key{}, false, fmt.Errorf("NextRowKey without NextPartitionKey")
	}
	if pos.PartitionKey, err = DecodeKeyToken(c.NextPartitionKey); err != nil {
		return api.Key{}, false, fmt.Errorf("NextPartitionKey: %w", err)
	}
	if c.NextRowKey != "" {
		if pos.RowKey, err = DecodeKeyToken(c.NextRowKey); err != nil {
			return api.Key{}, false, fmt.Errorf("NextRowKey: %w", err)
		}
	}
	return pos, true, nil
}

// encodeTableToken returns the NextTableName token for the table whose key (Service.tableKey:
// its lower-case name, or its name when names are case-sensitive) is key.
func encodeTableToken(key string) string {
	return EncodeKeyToken(key + "\x01" + tableTokenCheck(key))
}

// decodeTableToken returns the table key a NextTableName token carries.
func decodeTableToken(token string) (string, error) {
	raw, err := DecodeKeyToken(token)
	if err != nil {
		return "", err
	}
	name, check, ok := strings.Cut(raw, "\x01")
	if !ok || check != tableTokenCheck(name) {
		return "", fmt.Errorf("NextTableName %q was not issued by this service", token)
	}
	return name, nil
}

func tableTokenCheck(key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	return fmt.Sprintf("%016x", h.Sum64())
}
