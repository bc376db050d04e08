package ipc

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/endian"
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/ndarrow/ndarrow/internal/arrowfb"
	"github.com/ndarrow/ndarrow/internal/mmap"
)

// The custom metadata keys of Arrow's extension types.
const (
	extensionNameKey     = "ARROW:extension:name"
	extensionMetadataKey = "ARROW:extension:metadata"
)

// layout is the physical layout of a field in a record batch: which buffers it has, in
// order, and how its children follow (the Arrow columnar format's "buffer layout" table).
type layout uint8

const (
	layoutNull        layout = iota // no buffers
	layoutFixed                     // validity, values of width bytes each
	layoutBool                      // validity, a bitmap of values
	layoutBinary                    // validity, int32 offsets, data
	layoutLargeBinary               // validity, int64 offsets, data
	layoutList                      // validity, int32 offsets; one child (list and map)
	layoutLargeList                 // validity, int64 offsets; one child
	layoutFixedList                 // validity; one child of width values per slot
	layoutStruct                    // validity; one child per field
	// Layouts the decoder walks past without building arrays (see fieldPlan.unsupported).
	layoutSparseUnion // (validity before V5), type ids; children
	layoutDenseUnion  // (validity before V5), type ids, int32 offsets; children
	layoutView        // validity, views, as many data buffers as variadicBufferCounts says
	layoutListView    // validity, offsets, sizes; one child
	layoutRunEnd      // no buffers; run ends and values children
)

// swapKind says how a big-endian values buffer becomes little-endian.
type swapKind uint8

const (
	swapNone         swapKind = iota // bytes, bitmaps
	swap16                           // 2-byte integers and float16
	swap32                           // 4-byte numbers, day-time intervals (two int32)
	swap64                           // 8-byte numbers
	swap128                          // decimal128: one 16-byte integer
	swap256                          // decimal256: one 32-byte integer
	swapMonthDayNano                 // int32 months, int32 days, int64 nanoseconds
)

// fieldPlan is one decoded Field: the arrow.Field it becomes and what the batch loader needs
// to walk its nodes and buffers and to check them.
type fieldPlan struct {
	field    arrow.Field
	path     string // for errors: the column name, then child names, dotted
	layout   layout
	width    int // bytes per value (layoutFixed), values per slot (layoutFixedList)
	swap     swapKind
	children []*fieldPlan // the physical children, in the order their nodes follow
	// dictID is the dictionary of a dictionary-encoded field (-1 for none); the field's own
	// layout is then that of its integer indices.
	dictID int64
	// unsupported, when not empty, names the type ndarrow builds no arrays for, this field's
	// or a descendant's: its nodes and buffers are only walked past.
	unsupported string
}

// schemaPlan is a decoded Schema: every top-level field's plan, the plans of the values of
// every dictionary, and the byte order of the data.
type schemaPlan struct {
	fields    []*fieldPlan
	dicts     map[int64]*fieldPlan
	bigEndian bool
	metadata  arrow.Metadata
}

// arrowSchema returns the schema of the fields whose arrays are built: all of them, or those
// of supported types when skip is set. Without skip, a field of an unsupported type is an
// error wrapping ErrUnsupported. The schema is little-endian, as the arrays are.
func (p *schemaPlan) arrowSchema(skip bool) (*arrow.Schema, error) {
	var fields []arrow.Field
	for _, f := range p.fields {
		if f.unsupported != "" {
			if skip {
				continue
			}
			return nil, fmt.Errorf("column %q: %s: %w", f.path, f.unsupported, ErrUnsupported)
		}
		fields = append(fields, f.field)
	}
	md := p.metadata
	return arrow.NewSchemaWithEndian(fields, &md, endian.LittleEndian), nil
}

// SkippedColumn is a column BatchOptions.SkipUnsupported dropped: its name and the type the
// reader builds no arrays for (its own, or a descendant's).
type SkippedColumn struct {
	Name string
	Type string
}

// skipped returns the columns of unsupported types, which a schema with skip set leaves out.
func (p *schemaPlan) skipped() []SkippedColumn {
	var out []SkippedColumn
	for _, f := range p.fields {
		if f.unsupported != "" {
			out = append(out, SkippedColumn{Name: f.path, Type: f.unsupported})
		}
	}
	return out
}

// decodeSchema decodes a verified Schema flatbuffer. A panic in a type constructor, which
// the checks are meant to make impossible, becomes an error wrapping ErrInvalid.
func decodeSchema(s *arrowfb.Schema) (plan *schemaPlan, err error) {
	defer func() {
		if r := recover(); r != nil {
			if mmap.IsFault(r) {
				panic(r) // the file under a mapping shrank: the caller's Guard names it
			}
			plan, err = nil, fmt.Errorf("schema: malformed input the checks missed: %v: %w", r, ErrInvalid)
		}
	}()
	p := &schemaPlan{
		dicts:     map[int64]*fieldPlan{},
		bigEndian: s.Endianness() == arrowfb.EndiannessBig,
		metadata:  metadataOf(s.CustomMetadataLength(), s.CustomMetadata),
	}
	for i := range s.FieldsLength() {
		var f arrowfb.Field
		s.Fields(&f, i)
		fp, err := p.decodeField(&f, "")
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		p.fields = append(p.fields, fp)
	}
	return p, nil
}

// metadataOf returns custom metadata as arrow.Metadata.
func metadataOf(n int, at func(*arrowfb.KeyValue, int) bool) arrow.Metadata {
	if n == 0 {
		return arrow.Metadata{}
	}
	keys, values := make([]string, n), make([]string, n)
	var kv arrowfb.KeyValue
	for i := range n {
		at(&kv, i)
		keys[i], values[i] = string(kv.Key()), string(kv.Value())
	}
	return arrow.NewMetadata(keys, values)
}

// decodeField decodes a field and its children. parent is the dotted path of the enclosing
// field ("" at the top).
func (p *schemaPlan) decodeField(f *arrowfb.Field, parent string) (*fieldPlan, error) {
	name := string(f.Name())
	path := name
	if parent != "" {
		path = parent + "." + name
	}
	children := make([]*fieldPlan, f.ChildrenLength())
	for i := range children {
		var c arrowfb.Field
		f.Children(&c, i)
		cp, err := p.decodeField(&c, path)
		if err != nil {
			return nil, err
		}
		children[i] = cp
	}
	fp, err := typeOf(f, path, children)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", path, err)
	}
	fp.field.Name, fp.field.Nullable = name, f.Nullable()
	fp.field.Metadata = metadataOf(f.CustomMetadataLength(), f.CustomMetadata)
	if fp.unsupported == "" {
		for _, c := range children {
			if c.unsupported != "" {
				fp.unsupported = c.unsupported
				break
			}
		}
	}

	var enc arrowfb.DictionaryEncoding
	if f.Dictionary(&enc) != nil {
		if fp, err = p.dictionaryEncoded(fp, &enc); err != nil {
			return nil, fmt.Errorf("field %q: %w", path, err)
		}
	}
	if fp.unsupported == "" {
		if err := extend(fp); err != nil {
			return nil, fmt.Errorf("field %q: %w", path, err)
		}
	}
	return fp, nil
}

// dictionaryEncoded turns the plan of a field's values into the plan of the dictionary-encoded
// field: its layout becomes that of the indices, and the values' plan is the dictionary's.
func (p *schemaPlan) dictionaryEncoded(values *fieldPlan, enc *arrowfb.DictionaryEncoding) (*fieldPlan, error) {
	id := enc.Id()
	index := arrow.DataType(arrow.PrimitiveTypes.Int32) // the default the specification names
	var it arrowfb.Int
	if enc.IndexType(&it) != nil {
		var err error
		if index, err = intType(it.BitWidth(), it.IsSigned()); err != nil {
			return nil, fmt.Errorf("dictionary %d index: %w", id, err)
		}
	}
	if prev, ok := p.dicts[id]; ok {
		if values.unsupported == "" && prev.unsupported == "" && !arrow.TypeEqual(prev.field.Type, values.field.Type) {
			return nil, fmt.Errorf("dictionary %d holds %v and %v: %w", id, prev.field.Type, values.field.Type, ErrInvalid)
		}
	} else {
		p.dicts[id] = values
	}
	width := index.(arrow.FixedWidthDataType).BitWidth() / 8
	fp := &fieldPlan{
		field:       arrow.Field{Name: values.field.Name, Nullable: values.field.Nullable, Metadata: values.field.Metadata},
		path:        values.path,
		layout:      layoutFixed,
		width:       width,
		swap:        intSwap(width),
		dictID:      id,
		unsupported: values.unsupported,
	}
	if fp.unsupported == "" {
		fp.field.Type = &arrow.DictionaryType{IndexType: index, ValueType: values.field.Type, Ordered: enc.IsOrdered()}
	}
	return fp, nil
}

// extend wraps the field's type in the extension type its metadata names, when that type is
// registered with arrow-go (arrowtensor registers arrow.fixed_shape_tensor and
// arrow.variable_shape_tensor), and removes the extension keys from the field's metadata, as
// arrow-go's own reader does. An unregistered extension keeps its storage type and its keys.
// Metadata the extension type refuses is an error wrapping ErrInvalid.
func extend(fp *fieldPlan) (err error) {
	md := fp.field.Metadata
	i := md.FindKey(extensionNameKey)
	if i < 0 {
		return nil
	}
	ext := arrow.GetExtensionType(md.Values()[i])
	if ext == nil {
		return nil
	}
	var data string
	j := md.FindKey(extensionMetadataKey)
	if j >= 0 {
		data = md.Values()[j]
	}
	defer func() {
		if r := recover(); r != nil { // a registered type's Deserialize is not ours to trust
			if mmap.IsFault(r) {
				panic(r)
			}
			err = fmt.Errorf("extension %s: %v: %w", ext.ExtensionName(), r, ErrInvalid)
		}
	}()
	typ, err := ext.Deserialize(fp.field.Type, data)
	if err != nil {
		return fmt.Errorf("extension %s metadata %q: %w: %w", ext.ExtensionName(), data, ErrInvalid, err)
	}
	var keys, values []string
	for k := range md.Keys() {
		if k != i && k != j {
			keys, values = append(keys, md.Keys()[k]), append(values, md.Values()[k])
		}
	}
	fp.field.Type, fp.field.Metadata = typ, arrow.NewMetadata(keys, values)
	return nil
}

// typeOf returns the plan of a field from its type and its children's plans, without name,
// metadata or dictionary encoding.
func typeOf(f *arrowfb.Field, path string, children []*fieldPlan) (*fieldPlan, error) {
	kind := f.TypeType()
	var tbl flatbuffers.Table
	if !f.Type(&tbl) {
		return nil, fmt.Errorf("no type: %w", ErrInvalid)
	}
	fp := &fieldPlan{path: path, children: children, dictID: -1}
	wantChildren := func(n int) error {
		if len(children) != n {
			return fmt.Errorf("a %s field has %d children, not %d: %w", arrowfb.EnumNamesType[kind], len(children), n, ErrInvalid)
		}
		return nil
	}
	fixed := func(dt arrow.DataType, swap swapKind) {
		fp.field.Type, fp.layout, fp.swap = dt, layoutFixed, swap
		fp.width = dt.(arrow.FixedWidthDataType).BitWidth() / 8
	}
	if kind != arrowfb.TypeStruct_ && kind != arrowfb.TypeList && kind != arrowfb.TypeLargeList &&
		kind != arrowfb.TypeFixedSizeList && kind != arrowfb.TypeMap && kind != arrowfb.TypeUnion &&
		kind != arrowfb.TypeListView && kind != arrowfb.TypeLargeListView && kind != arrowfb.TypeRunEndEncoded {
		if err := wantChildren(0); err != nil {
			return nil, err
		}
	}
	switch kind {
	case arrowfb.TypeNull:
		fp.field.Type, fp.layout = arrow.Null, layoutNull
	case arrowfb.TypeInt:
		var t arrowfb.Int
		t.Init(tbl.Bytes, tbl.Pos)
		dt, err := intType(t.BitWidth(), t.IsSigned())
		if err != nil {
			return nil, err
		}
		fixed(dt, intSwap(int(t.BitWidth()/8)))
	case arrowfb.TypeFloatingPoint:
		var t arrowfb.FloatingPoint
		t.Init(tbl.Bytes, tbl.Pos)
		switch t.Precision() {
		case arrowfb.PrecisionHALF:
			fixed(arrow.FixedWidthTypes.Float16, swap16)
		case arrowfb.PrecisionSINGLE:
			fixed(arrow.PrimitiveTypes.Float32, swap32)
		case arrowfb.PrecisionDOUBLE:
			fixed(arrow.PrimitiveTypes.Float64, swap64)
		default:
			return nil, fmt.Errorf("floating point precision %d: %w", t.Precision(), ErrInvalid)
		}
	case arrowfb.TypeBool:
		fp.field.Type, fp.layout = arrow.FixedWidthTypes.Boolean, layoutBool
	case arrowfb.TypeBinary:
		fp.field.Type, fp.layout = arrow.BinaryTypes.Binary, layoutBinary
	case arrowfb.TypeUtf8:
		fp.field.Type, fp.layout = arrow.BinaryTypes.String, layoutBinary
	case arrowfb.TypeLargeBinary:
		fp.field.Type, fp.layout = arrow.BinaryTypes.LargeBinary, layoutLargeBinary
	case arrowfb.TypeLargeUtf8:
		fp.field.Type, fp.layout = arrow.BinaryTypes.LargeString, layoutLargeBinary
	case arrowfb.TypeFixedSizeBinary:
		var t arrowfb.FixedSizeBinary
		t.Init(tbl.Bytes, tbl.Pos)
		if t.ByteWidth() < 0 {
			return nil, fmt.Errorf("fixed-size binary of %d bytes: %w", t.ByteWidth(), ErrInvalid)
		}
		fp.field.Type, fp.layout, fp.width = &arrow.FixedSizeBinaryType{ByteWidth: int(t.ByteWidth())}, layoutFixed, int(t.ByteWidth())
	case arrowfb.TypeDecimal:
		var t arrowfb.Decimal
		t.Init(tbl.Bytes, tbl.Pos)
		switch t.BitWidth() {
		case 128:
			fixed(&arrow.Decimal128Type{Precision: t.Precision(), Scale: t.Scale()}, swap128)
		case 256:
			fixed(&arrow.Decimal256Type{Precision: t.Precision(), Scale: t.Scale()}, swap256)
		case 32, 64:
			fp.layout, fp.width, fp.swap = layoutFixed, int(t.BitWidth()/8), intSwap(int(t.BitWidth()/8))
			fp.unsupported = fmt.Sprintf("decimal%d", t.BitWidth())
		default:
			return nil, fmt.Errorf("decimal of %d bits: %w", t.BitWidth(), ErrInvalid)
		}
	case arrowfb.TypeDate:
		var t arrowfb.Date
		t.Init(tbl.Bytes, tbl.Pos)
		switch t.Unit() {
		case arrowfb.DateUnitDAY:
			fixed(arrow.FixedWidthTypes.Date32, swap32)
		case arrowfb.DateUnitMILLISECOND:
			fixed(arrow.FixedWidthTypes.Date64, swap64)
		default:
			return nil, fmt.Errorf("date unit %d: %w", t.Unit(), ErrInvalid)
		}
	case arrowfb.TypeTime:
		var t arrowfb.Time
		t.Init(tbl.Bytes, tbl.Pos)
		switch {
		case t.BitWidth() == 32 && t.Unit() == arrowfb.TimeUnitSECOND:
			fixed(arrow.FixedWidthTypes.Time32s, swap32)
		case t.BitWidth() == 32 && t.Unit() == arrowfb.TimeUnitMILLISECOND:
			fixed(arrow.FixedWidthTypes.Time32ms, swap32)
		case t.BitWidth() == 64 && t.Unit() == arrowfb.TimeUnitMICROSECOND:
			fixed(arrow.FixedWidthTypes.Time64us, swap64)
		case t.BitWidth() == 64 && t.Unit() == arrowfb.TimeUnitNANOSECOND:
			fixed(arrow.FixedWidthTypes.Time64ns, swap64)
		default:
			return nil, fmt.Errorf("time of %d bits in unit %d: %w", t.BitWidth(), t.Unit(), ErrInvalid)
		}
	case arrowfb.TypeTimestamp:
		var t arrowfb.Timestamp
		t.Init(tbl.Bytes, tbl.Pos)
		unit, err := timeUnit(t.Unit())
		if err != nil {
			return nil, err
		}
		fixed(&arrow.TimestampType{Unit: unit, TimeZone: string(t.Timezone())}, swap64)
	case arrowfb.TypeDuration:
		var t arrowfb.Duration
		t.Init(tbl.Bytes, tbl.Pos)
		unit, err := timeUnit(t.Unit())
		if err != nil {
			return nil, err
		}
		fixed(&arrow.DurationType{Unit: unit}, swap64)
	case arrowfb.TypeInterval:
		var t arrowfb.Interval
		t.Init(tbl.Bytes, tbl.Pos)
		switch t.Unit() {
		case arrowfb.IntervalUnitYEAR_MONTH:
			fixed(arrow.FixedWidthTypes.MonthInterval, swap32)
		case arrowfb.IntervalUnitDAY_TIME:
			fixed(arrow.FixedWidthTypes.DayTimeInterval, swap32)
		case arrowfb.IntervalUnitMONTH_DAY_NANO:
			fixed(arrow.FixedWidthTypes.MonthDayNanoInterval, swapMonthDayNano)
		default:
			return nil, fmt.Errorf("interval unit %d: %w", t.Unit(), ErrInvalid)
		}
	case arrowfb.TypeList, arrowfb.TypeLargeList, arrowfb.TypeFixedSizeList, arrowfb.TypeListView, arrowfb.TypeLargeListView:
		if err := wantChildren(1); err != nil {
			return nil, err
		}
		child := children[0].field
		built := children[0].unsupported == "" // else the type is never built
		switch kind {
		case arrowfb.TypeList:
			fp.layout = layoutList
			if built {
				fp.field.Type = arrow.ListOfField(child)
			}
		case arrowfb.TypeLargeList:
			fp.layout = layoutLargeList
			if built {
				fp.field.Type = arrow.LargeListOfField(child)
			}
		case arrowfb.TypeFixedSizeList:
			var t arrowfb.FixedSizeList
			t.Init(tbl.Bytes, tbl.Pos)
			if t.ListSize() < 0 {
				return nil, fmt.Errorf("fixed-size list of %d values: %w", t.ListSize(), ErrInvalid)
			}
			fp.layout, fp.width = layoutFixedList, int(t.ListSize())
			if built {
				fp.field.Type = arrow.FixedSizeListOfField(t.ListSize(), child)
			}
		default:
			fp.layout, fp.unsupported = layoutListView, arrowfb.EnumNamesType[kind]
		}
	case arrowfb.TypeStruct_:
		fp.layout = layoutStruct
		fields := make([]arrow.Field, len(children))
		built := true
		for i, c := range children {
			fields[i] = c.field
			built = built && c.unsupported == ""
		}
		if built {
			fp.field.Type = arrow.StructOf(fields...)
		}
	case arrowfb.TypeMap:
		if err := mapType(fp, tbl); err != nil {
			return nil, err
		}
	case arrowfb.TypeUnion:
		var t arrowfb.Union
		t.Init(tbl.Bytes, tbl.Pos)
		fp.layout, fp.unsupported = layoutSparseUnion, "sparse union"
		if t.Mode() == arrowfb.UnionModeDense {
			fp.layout, fp.unsupported = layoutDenseUnion, "dense union"
		}
	case arrowfb.TypeBinaryView, arrowfb.TypeUtf8View:
		fp.layout, fp.unsupported = layoutView, arrowfb.EnumNamesType[kind]
	case arrowfb.TypeRunEndEncoded:
		if err := wantChildren(2); err != nil {
			return nil, err
		}
		fp.layout, fp.unsupported = layoutRunEnd, "run-end encoded"
	default:
		return nil, fmt.Errorf("type %d: %w", kind, ErrInvalid)
	}
	return fp, nil
}

// mapType fills the plan of a map field: a list of a non-nullable struct of a non-nullable
// key and a value, typed as arrow-go's reader types it (children named entries, key, value).
func mapType(fp *fieldPlan, tbl flatbuffers.Table) error {
	fp.layout = layoutList
	if len(fp.children) != 1 {
		return fmt.Errorf("a map field has %d children, not 1: %w", len(fp.children), ErrInvalid)
	}
	entries := fp.children[0]
	if entries.layout != layoutStruct || len(entries.children) != 2 || entries.field.Nullable || entries.children[0].field.Nullable {
		return fmt.Errorf("a map's child must be a non-nullable struct of a non-nullable key and a value: %w", ErrInvalid)
	}
	if entries.unsupported != "" || entries.children[0].unsupported != "" || entries.children[1].unsupported != "" {
		return nil // the field is walked past; its type is never built
	}
	var t arrowfb.Map
	t.Init(tbl.Bytes, tbl.Pos)
	key, item := entries.children[0].field, entries.children[1].field
	mt := arrow.MapOf(key.Type, item.Type)
	mt.SetItemNullable(item.Nullable)
	mt.KeysSorted = t.KeysSorted()
	fp.field.Type = mt
	entries.field.Type = mt.Elem() // the child arrays carry the map's own entries type
	return nil
}

// intType returns the integer type of the given width and signedness.
func intType(bits int32, signed bool) (arrow.DataType, error) {
	switch {
	case bits == 8 && signed:
		return arrow.PrimitiveTypes.Int8, nil
	case bits == 8:
		return arrow.PrimitiveTypes.Uint8, nil
	case bits == 16 && signed:
		return arrow.PrimitiveTypes.Int16, nil
	case bits == 16:
		return arrow.PrimitiveTypes.Uint16, nil
	case bits == 32 && signed:
		return arrow.PrimitiveTypes.Int32, nil
	case bits == 32:
		return arrow.PrimitiveTypes.Uint32, nil
	case bits == 64 && signed:
		return arrow.PrimitiveTypes.Int64, nil
	case bits == 64:
		return arrow.PrimitiveTypes.Uint64, nil
	}
	return nil, fmt.Errorf("integer of %d bits: %w", bits, ErrInvalid)
}

// intSwap returns the byte swap of integers of width bytes.
func intSwap(width int) swapKind {
	switch width {
	case 2:
		return swap16
	case 4:
		return swap32
	case 8:
		return swap64
	}
	return swapNone
}

// timeUnit returns the arrow-go unit of a flatbuffer TimeUnit.
func timeUnit(u arrowfb.TimeUnit) (arrow.TimeUnit, error) {
	switch u {
	case arrowfb.TimeUnitSECOND:
		return arrow.Second, nil
	case arrowfb.TimeUnitMILLISECOND:
		return arrow.Millisecond, nil
	case arrowfb.TimeUnitMICROSECOND:
		return arrow.Microsecond, nil
	case arrowfb.TimeUnitNANOSECOND:
		return arrow.Nanosecond, nil
	}
	return 0, fmt.Errorf("time unit %d: %w", u, ErrInvalid)
}

// schemaOf decodes the Schema header of a verified message.
func schemaOf(m *arrowfb.Message) (*schemaPlan, error) {
	var tbl flatbuffers.Table
	m.Header(&tbl)
	var s arrowfb.Schema
	s.Init(tbl.Bytes, tbl.Pos)
	return decodeSchema(&s)
}

// dictionaryName names a dictionary id in errors.
func dictionaryName(id int64) string { return "dictionary " + strconv.FormatInt(id, 10) }
