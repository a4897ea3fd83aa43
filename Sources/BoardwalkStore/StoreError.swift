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
        /// The store was opened read-only and a write was attempted.
        case readOnly
        /// A stored record or index entry could not be decoded.
        case corrupt
        /// An argument was out of range (an empty checkpoint key, for example).
        case invalidArgument
    }

    /// What kind of problem this is.
    public var kind: Kind
    /// A sentence for people: what was wrong, with the path or key involved.
    public var message: String
    /// The error that caused this one (a `CodecError` for a corrupt record), if any.
    public var underlying: (any Error & Sendable)?

    /// An error of `kind` with a message for people and, optionally, the error that caused it.
    public init(_ kind: Kind, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// The message, followed by the underlying error when there is one.
    public var description: String {
        if let underlying { return "\(message): \(underlying)" }
        return message
    }
}
