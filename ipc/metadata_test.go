package ipc

import (
	"runtime"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
)

type (
	arrowfbTensorDim = arrowfb.TensorDim
	arrowfbBuffer    = arrowfb.Buffer
)

// tensorTable returns the Tensor header of a verified message.
func tensorTable(m *arrowfb.Message) *arrowfb.Tensor {
	var tbl flatbuffers.Table
	m.Header(&tbl)
	var t arrowfb.Tensor
	t.Init(tbl.Bytes, tbl.Pos)
	return &t
}

type runtimeMemStats = runtime.MemStats

func readMemStats(m *runtime.MemStats) {
	runtime.GC()
	runtime.ReadMemStats(m)
}
