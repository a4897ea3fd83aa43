/// A store-level error: what went wrong, where, and the underlying error when there is one.
///
/// LMDB failures are thrown as ``LMDBError`` directly; this type covers what the store itself finds.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is.
    public enum Kind: Hashable, Sendable {
        /// The path exists but is not a Boardwalk store (not a directory, or a non-empty directory
        /// without a store in it, or an LMDB environment without Boardwalk's meta database).
        case notAStore
        /// The store was written by a newer Boardwalk whose format this code does not read.
        case newerFormat(found: UInt32, supported: UInt32)
        /// The store was written in an older format that this code no longer reads (there is no migration).
        case olderFormat(found: UInt32, supported: UInt32)
        /// This process has the store open already (LMDB forbids opening an environment twice in one process).
        case alreadyOpen
        /// The store was opened read-only and a write was attempted; or this process may not write the store's
        /// lock file while another process has the store open (reading it without the lock file then could crash).
        case readOnly
        /// A stored record or index entry could not be decoded.
        case corrupt
        /// An argument was out of range (an empty checkpoint key, a backup directory that is not empty, an event
        /// the record format cannot hold: see ``StoreError/batchIndex``).
        case invalidArgument
        /// The store was closed (``Store/close()``) before this call: open it again with ``Store/open(at:options:)``.
        case closed
        /// A call that would wait forever for the transaction it was made from: ``Store/write(_:)`` or
        /// ``Store/append(_:checkpoint:)`` inside ``Store/read(_:)`` or ``Store/write(_:)`` of the same store on the
        /// same thread. Append with the ``StoreWriter`` passed to `write { }`, or after `read { }` returns.
        case insideTransaction
    }

    /// What kind of problem this is.
    public var kind: Kind
    /// A sentence for people: what was wrong, with the path or key involved.
    public var message: String
    /// The error that caused this one (a `CodecError` for a corrupt record), if any.
    public var underlying: (any Error & Sendable)?
    /// For an event ``Store/append(_:checkpoint:)`` or ``StoreWriter/append(_:)`` could not store: its index in the
    /// batch (counted from 0 in the order of the sequence passed); `nil` for every other error.
    public var batchIndex: Int?

    /// An error of `kind` with a message for people and, optionally, the error that caused it.
    public init(_ kind: Kind, _ message: String, underlying: (any Error & Sendable)? = nil, batchIndex: Int? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
        self.batchIndex = batchIndex
    }

    /// The message, followed by the underlying error when there is one.
    public var description: String {
        if let underlying { return "\(message): \(underlying)" }
        return message
    }
}
