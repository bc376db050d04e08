// Package flight serves named tensors over Arrow Flight and fetches them, on arrow-go's
// generated Flight service and real gRPC.
//
// A Server serves the tensors of a Store: ones added from memory, and every tensor file of a
// directory (memory-mapped, sent without reading them into the heap), named as package
// dataset names them. It implements ListFlights (one FlightInfo per tensor), GetFlightInfo
// (the schema with its extension type metadata, row and byte counts, the endpoints),
// GetSchema, DoGet (record batches: a dense tensor as an arrow.fixed_shape_tensor column
// split along its first axis so every message stays under the gRPC limit, a tensor of one
// value per row as a plain column — int64, double, bool, utf8 or binary — its null rows as
// nulls, a ragged one as a list column, a sparse one as COO record batches), DoPut (an upload,
// validated and stored atomically; several as one with Client.PutAll, staged and committed at
// once) and the actions "list", "delete", "reload", "commit", "abort" and "status". It is
// read-only unless Options.Writable: uploads, deletes, commits and aborts are refused with
// PermissionDenied (ErrReadOnly). Shutdown drains it — new calls refused, the ones under way
// given until its context ends — then cuts what is left with Unavailable (ErrShuttingDown).
//
// A table — a served file of several columns (Parquet, Arrow IPC, TFRecord Examples), a
// directory's table of parts, a table uploaded (a DoPut of record batches of several
// columns, as pyarrow's do_put of a table sends) — is also one flight named after it, whose
// stream holds every column with a tensor form in the table's order, each batch the same rows
// of every column (a directory's read chunk by chunk, its columns' row groups in lockstep);
// its FlightInfo's app_metadata lists its columns and the columns it leaves out (see
// table.go), and each column stays a flight of its own, NAME.COLUMN. Client.GetTable fetches
// a table whole, Client.PutTable uploads one. A Store serving a share of each tensor
// (Store.SetShare) serves the columns of its tables only.
//
// Rows of any flight — a table's, a column's, a tensor's along its first axis — in any
// order, repeated, negative ones from the end, are one DoGet whose ticket is the JSON
// {"take":{"name":NAME,"rows":[...],"columns":[...]}} (TakeTicket; see take.go), which any
// Flight client can send, or one GetFlightInfo of that command: the server reads only the
// fragments holding the rows (package table), against the version current when it starts,
// within the memory budget, and sends them as one stream of the flight's schema. Client.Take
// makes one.
//
// A served table's mini-batches (table.Batches: shuffled, sharded, resumable) are one DoGet
// whose ticket is the JSON {"batches":{"name":NAME,"batch_size":N,...}} (BatchesTicket; see
// batches.go): one stream whose record batches are the batches in order, the FlightData of
// each carrying {"cursor":"c2...."} in its app_metadata, each batch's memory reserved from the
// budget before it is read and given back once sent. Client.Batches iterates them.
//
// A Store follows the directories it serves (Store.Rescan, Store.Watch, the "reload" action):
// files that appear are served, files replaced or rewritten are served from their new
// contents, files removed are no longer served; a stream under way keeps the version it
// started with, and fails with codes.DataLoss naming the file when its file is truncated or
// rewritten in place under it (the fault that would kill the process is caught on the
// handler's goroutine, see dataset.Guard). Clients are told files by their path under the
// served directory.
//
// Every FlightData a Server or Client receives is decoded, message by message as it arrives,
// by ipc's one verified decoder (ipc.BatchDecoder), never by arrow-go's unchecked readers,
// within limits: Options.Limits on a server (what an upload may claim), ClientOptions.Limits
// on a client. An upload's bad bytes are the client's error (codes.InvalidArgument, or
// ResourceExhausted beyond a limit). A Server takes optional TLS (mutual TLS with ClientCAs),
// a bearer token that every method, streams included, must carry, and explicit gRPC message
// limits; a panic in a handler becomes codes.Internal naming the method, its stack logged on
// the server (Options.Logger), never sent. Its log has a record per call (accesslog.go), per
// failed authentication and TLS handshake, the problems of its certificate (tlscheck.go) and
// what its budgets hold (status.go, and the action "status"); gRPC's health service answers
// without a token, NOT_SERVING once the server drains (health.go). A Client that dials the
// wrong scheme, or does not accept the server's certificate, fails with ErrTLS saying what to
// dial or give.
//
// Credentials stay where they were sent: a Client follows the endpoints a FlightInfo lists,
// but sends its bearer token only to the server it dialed and to the servers
// ClientOptions.TokenEndpoints names, and refuses an endpoint in plaintext from a server it
// reached over TLS (ErrInsecureEndpoint).
//
// The same port answers plain HTTP/1.1 GETs of each flight's data, the Flight specification's
// extended location URIs: every FlightEndpoint lists, after its DoGet location, a presigned
// http:// (https:// with TLS) URL whose GET returns the stream DoGet would, as an Arrow IPC
// stream, which any HTTP client reads. A Client fetches it there when listed — the values read
// from the socket straight into the result, where gRPC copies every byte through its HTTP/2
// frames — and by DoGet when the GET fails before its stream starts (Options.GRPCOnly and
// ClientOptions.GRPCOnly turn it off); a stream that fails part way ends with its status in
// the response's trailer, as DoGet's would.
//
// No client can make a Server hold more than its two budgets: Options.MemoryBudget for
// clients' data (what DoGets decode, what takes hold, what uploads hold arriving, staged and
// stored until deleted) and Options.WireBudget for what arrives before a handler takes it (connections,
// each call's window, each message while it is received). Each is reserved before it is
// allocated; what does not fit waits its turn or fails with ResourceExhausted, and nothing is
// evicted. A call whose message does not arrive, or is not taken, within
// Options.StallTimeout is cut (DeadlineExceeded), an idle connection closed after
// Options.IdleTimeout, and at most Options.MaxConnections are open. Beyond the two budgets
// the process holds a constant: at most 192 MiB of anonymous memory (the Go runtime, frame
// buffers kept for reuse, garbage not yet collected), and the pages of the served files it
// reads, mapped (file-backed), at most their size — so that any number of concurrent fetches
// whose clients read them holds at most Options.MemoryBudget + 192 MiB of anonymous memory
// (see Options.MemoryBudget).
//
// Scale-out is Flight's own: servers that each hold a shard of a catalogue (the rows
// [k·n, (k+1)·n) of each tensor, say) and know one another (Options.Shards) answer
// GetFlightInfo with one endpoint per server, in row order; Client.Get fetches the endpoints
// in parallel and stacks the parts (list the shards in TokenEndpoints when they need the
// token).
package flight
