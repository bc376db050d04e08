// Package flight serves named tensors over Arrow Flight and fetches them, on arrow-go's
// generated Flight service and real gRPC.
//
// A Server serves the tensors of a Store: ones added from memory, and every tensor file of a
// directory (memory-mapped, sent without reading them into the heap), named as
// tensorfile names them. It implements ListFlights (one FlightInfo per tensor), GetFlightInfo
// (the schema with its extension type metadata, row and byte counts, the endpoints),
// GetSchema, DoGet (record batches: a dense tensor as an arrow.fixed_shape_tensor column
// split along its first axis so every message stays under the gRPC limit, a ragged one as a
// list column, a sparse one as COO record batches), DoPut (an upload, validated and stored
// atomically) and the actions "list" and "delete".
//
// Every FlightData a Server or Client receives is verified before it is decoded: the same
// readers as the ipc package's, never arrow-go's unchecked ones. A Server takes optional TLS
// (mutual TLS with ClientCAs), a bearer token that every method, streams included, must
// carry, explicit gRPC message limits, and turns a panic in a handler into codes.Internal.
//
// Scale-out is Flight's own: servers that each hold a shard of a catalogue (the rows
// [k·n, (k+1)·n) of each tensor, say) and know one another (Options.Shards) answer
// GetFlightInfo with one endpoint per server, in row order; Client.Get fetches the endpoints
// in parallel and stacks the parts.
package flight
