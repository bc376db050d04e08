package parquet

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/apache/arrow/go/v17/parquet/schema"
)

// legacyLists rewrites, in place, the lists of sf that old writers (parquet-mr before the
// LIST spec, Hive, early Spark) stored in two levels with a list inside: a LIST group whose
// repeated group is itself annotated LIST,
//
//	optional group a (LIST) {
//	  repeated group array (LIST) {
//	    repeated int32 array;
//	  }
//	}
//
// By the Parquet spec's backward-compatibility rules the repeated group is the element
// (it is named "array", or the list's name with "_tuple") and, being a LIST, a list: a is
// list<list<int32>>, as Arrow C++ and arrow-rs read it. pqarrow takes the repeated group for
// a struct of one field instead (list<struct<array: list<int32>>>); the struct adds no level
// of its own, so dropping it gives the list Arrow C++ reads, decoded by pqarrow's own
// readers. It reports whether sf changed.
func legacyLists(sf *pqarrow.SchemaField, s *schema.Schema) bool {
	changed := false
	for i := range sf.Children {
		if legacyLists(&sf.Children[i], s) {
			changed = true
		}
	}
	if _, ok := sf.Field.Type.(*arrow.ListType); ok && len(sf.Children) == 1 && isLegacyListElement(sf, &sf.Children[0], s) {
		sf.Children[0] = sf.Children[0].Children[0]
		changed = true
	}
	if !changed {
		return false
	}
	// Rebuild the types above what changed from the children's.
	f := *sf.Field
	switch t := f.Type.(type) {
	case *arrow.ListType:
		elem := t.ElemField()
		child := sf.Children[0].Field
		elem.Type, elem.Nullable = child.Type, child.Nullable
		f.Type = arrow.ListOfField(elem)
	case *arrow.StructType:
		fields := make([]arrow.Field, len(sf.Children))
		for i := range sf.Children {
			fields[i] = *sf.Children[i].Field
		}
		f.Type = arrow.StructOf(fields...)
	default:
		return false // a map or fixed-size list above: left as pqarrow made it
	}
	sf.Field = &f
	return true
}

// isLegacyListElement reports whether child, the only child of list, is a struct pqarrow made
// of a two-level list's repeated group that is itself a LIST: a struct of one list field, at
// the list's own levels (so it never holds a null of its own), whose Parquet group is
// repeated and annotated LIST.
func isLegacyListElement(list, child *pqarrow.SchemaField, s *schema.Schema) bool {
	if _, ok := child.Field.Type.(*arrow.StructType); !ok || len(child.Children) != 1 {
		return false
	}
	if _, ok := child.Children[0].Field.Type.(*arrow.ListType); !ok {
		return false
	}
	if child.LevelInfo.DefLevel != list.LevelInfo.DefLevel || child.LevelInfo.RepLevel != list.LevelInfo.RepLevel {
		return false
	}
	leaves := leavesOf(child)
	if len(leaves) != 1 || leaves[0] < 0 || leaves[0] >= s.NumColumns() {
		return false
	}
	// The struct's Parquet group is the repeated ancestor of the leaf of its name whose
	// repetition level is the struct's.
	for n := s.Column(leaves[0]).SchemaNode().Parent(); n != nil; n = n.Parent() {
		g, ok := n.(*schema.GroupNode)
		if !ok || g.Name() != child.Field.Name || g.RepetitionType() != parquet.Repetitions.Repeated {
			continue
		}
		if g.LogicalType().Equals(schema.ListLogicalType{}) || g.ConvertedType() == schema.ConvertedTypes.List {
			return repLevelOf(g) == child.LevelInfo.RepLevel
		}
	}
	return false
}

// repLevelOf returns the repetition level of node n: the repeated nodes from the root to it.
func repLevelOf(n schema.Node) int16 {
	level := int16(0)
	for ; n != nil; n = n.Parent() {
		if n.RepetitionType() == parquet.Repetitions.Repeated {
			level++
		}
	}
	return level
}
