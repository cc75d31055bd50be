package wire

import "testing"

// entityKeysCases are key lists in the SDKs' form and near it: sdkEntityKeys must read the
// first to what the general reader reads, and leave the others to it.
var entityKeysCases = []string{
	"PartitionKey='a',RowKey='b'",
	"PartitionKey='',RowKey=''",
	"PartitionKey='p k',RowKey='r=k,x'",
	"PartitionKey='=',RowKey=','",
	"PartitionKey='a''b',RowKey='c'",
	"PartitionKey='a',RowKey='b''c'",
	"PartitionKey='a',RowKey='b'''",
	"PartitionKey='a',RowKey=''''",
	"PartitionKey='a',RowKey='b'x",
	"PartitionKey='a',RowKey='b' ",
	"PartitionKey='a', RowKey='b'",
	"PartitionKey= 'a',RowKey='b'",
	"RowKey='b',PartitionKey='a'",
	"PartitionKey='a',RowKey='b',RowKey='c'",
	"PartitionKey='a',PartitionKey='b'",
	"PartitionKey='a',RowKey='b",
	"PartitionKey='a,RowKey='b'",
	"PartitionKey='a'RowKey='b'",
	"PartitionKey='a',RowKey=",
	"PartitionKey='',RowKey='",
	"PartitionKey='a'",
	"PartitionKey='",
	"partitionkey='a',rowkey='b'",
	"PartitionKey='ä',RowKey='\x00'",
}

// TestSDKEntityKeysMatchGeneral: whatever sdkEntityKeys reads, the general reader reads to
// the same keys; and it reads the SDKs' form.
func TestSDKEntityKeysMatchGeneral(t *testing.T) {
	read := 0
	for _, args := range entityKeysCases {
		if checkEntityKeys(t, args) {
			read++
		}
	}
	if read < 5 {
		t.Errorf("sdkEntityKeys read %d of the cases; want the SDK form read", read)
	}
}

func checkEntityKeys(t *testing.T, args string) (read bool) {
	t.Helper()
	pk, rk, ok := sdkEntityKeys(args)
	if !ok {
		return false
	}
	gpk, grk, err := entityKeys(args, args)
	if err != nil || gpk != pk || grk != rk {
		t.Errorf("%q: sdkEntityKeys (%q, %q); general reader (%q, %q, %v)", args, pk, rk, gpk, grk, err)
	}
	return true
}

func FuzzSDKEntityKeys(f *testing.F) {
	for _, args := range entityKeysCases {
		f.Add(args)
	}
	f.Fuzz(func(t *testing.T, args string) { checkEntityKeys(t, args) })
}
