package flight

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/ndarrow/ndarrow/dataset"
	"github.com/ndarrow/ndarrow/ipc"
	"github.com/ndarrow/ndarrow/limits"
)

// streamDecoder decodes the FlightData of one stream — a schema message, then dictionary and
// record batch messages — through ipc's one verified decoder, and turns the records into the
// one tensor the stream carries. Both a Server's DoPut and a Client's Get use it.
type streamDecoder struct {
	name    string
	lim     limits.Limits
	dec     *ipc.BatchDecoder
	records []arrow.Record
}

// add decodes one FlightData's metadata and body. A message of application metadata only
// (no metadata header) adds nothing.
func (s *streamDecoder) add(header, body []byte) error {
	if len(header) == 0 {
		if len(body) != 0 {
			return fmt.Errorf("a body of %d bytes without metadata: %w", len(body), ipc.ErrInvalid)
		}
		return nil
	}
	if s.dec == nil {
		// Copies (decompressed, byte-swapped) come from a Go allocator, whose memory the
		// garbage collector reclaims once no tensor views it: tensors outlive the records.
		dec, err := ipc.NewBatchDecoder(header, ipc.BatchOptions{Limits: s.lim, Allocator: memory.NewGoAllocator(), SkipUnsupported: true})
		if err != nil {
			return err
		}
		s.dec = dec
		return nil
	}
	rec, err := s.dec.Decode(header, body)
	if err != nil {
		return err
	}
	if rec != nil {
		s.records = append(s.records, rec)
	}
	return nil
}

// schema returns the stream's schema, nil before its first message.
func (s *streamDecoder) schema() *arrow.Schema {
	if s.dec == nil {
		return nil
	}
	return s.dec.Schema()
}

// tensors returns the tensors the stream's records hold, named as dataset names them after
// the stream's name. They view the bodies received.
func (s *streamDecoder) tensors() ([]dataset.Tensor, error) {
	if s.dec == nil {
		return nil, fmt.Errorf("a stream without a schema: %w", ipc.ErrInvalid)
	}
	tensors, err := dataset.FromRecords(s.dec.Schema(), s.records, s.name)
	if err != nil {
		return nil, err
	}
	if len(tensors) == 0 {
		return nil, fmt.Errorf("a stream of no tensor columns (%v): %w", s.dec.Schema(), dataset.ErrNotTensors)
	}
	return tensors, nil
}

// release releases the records and the decoder; tensors made stay valid.
func (s *streamDecoder) release() {
	for _, r := range s.records {
		r.Release()
	}
	s.records = nil
	if s.dec != nil {
		s.dec.Release()
	}
}
