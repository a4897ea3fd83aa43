internal import CLMDB

/// An error returned by LMDB: the C return code, LMDB's own text for it, and what the store was doing.
///
/// Match a kind of error with the named statics, as with swift-system's `Errno`:
///
/// ```swift
/// do { try store.append(events) } catch LMDBError.mapFull { … }
/// ```
///
/// Two `LMDBError`s are equal when their codes are equal; the message and context are for people.
public struct LMDBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C return code: an LMDB code (negative, `MDB_KEYEXIST` … `MDB_BAD_DBI`) or an `errno` value.
    public var code: Int32
    /// The text `mdb_strerror` gives for ``code``.
    public var message: String
    /// What the store was doing, e.g. `"mdb_put(events)"`; empty for the named statics.
    public var context: String
    /// The code came from a system call the store made itself (`opendir`, `pread`, `fstat`), not from LMDB.
    var isSystemCall = false

    /// An error for a C return code; the message comes from `mdb_strerror`.
    public init(code: Int32, context: String = "") {
        self.code = code
        self.context = context
        if let text = mdb_strerror(code) {
            message = String(cString: text)
        } else {
            message = "error \(code)"
        }
    }

    /// An `errno` value from a system call the store made itself: described as a system error, not an LMDB one.
    static func system(_ code: Int32, context: String) -> LMDBError {
        var error = LMDBError(code: code, context: context)
        error.isSystemCall = true
        return error
    }

    /// `"<context>: LMDB error <code>: <message>"`, or `"<context>: system error <code>: <message>"` for a system
    /// call the store made itself.
    public var description: String {
        let label = isSystemCall ? "system error" : "LMDB error"
        return context.isEmpty ? "\(label) \(code): \(message)" : "\(context): \(label) \(code): \(message)"
    }

    /// Whether the code says the data file is damaged (`MDB_CORRUPTED`, `MDB_PAGE_NOTFOUND`): what a caller should
    /// answer with a check of the store rather than a retry.
    public var meansDamage: Bool { !isSystemCall && (code == MDB_CORRUPTED || code == MDB_PAGE_NOTFOUND) }

    /// Equal when the codes are equal.
    public static func == (a: LMDBError, b: LMDBError) -> Bool { a.code == b.code }
    /// Hashes the code only, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `catch LMDBError.mapFull` match any error with that code.
    public static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        (value as? LMDBError)?.code == pattern.code
    }

    /// `MDB_KEYEXIST`: the key/data pair already exists.
    public static var keyExists: LMDBError { LMDBError(code: MDB_KEYEXIST) }
    /// `MDB_NOTFOUND`: no matching key/data pair.
    public static var notFound: LMDBError { LMDBError(code: MDB_NOTFOUND) }
    /// `MDB_CORRUPTED`: a page has an invalid type; the file is damaged.
    public static var corrupted: LMDBError { LMDBError(code: MDB_CORRUPTED) }
    /// `MDB_PANIC`: a fatal error; the environment must be closed.
    public static var panic: LMDBError { LMDBError(code: MDB_PANIC) }
    /// `MDB_VERSION_MISMATCH`: the file was written by an incompatible LMDB version.
    public static var versionMismatch: LMDBError { LMDBError(code: MDB_VERSION_MISMATCH) }
    /// `MDB_INVALID`: the file is not an LMDB file.
    public static var invalid: LMDBError { LMDBError(code: MDB_INVALID) }
    /// `MDB_MAP_FULL`: the map size is reached. The store handles this itself by growing the map.
    public static var mapFull: LMDBError { LMDBError(code: MDB_MAP_FULL) }
    /// `MDB_DBS_FULL`: too many named databases.
    public static var dbsFull: LMDBError { LMDBError(code: MDB_DBS_FULL) }
    /// `MDB_READERS_FULL`: every reader slot is taken (too many concurrent read transactions).
    public static var readersFull: LMDBError { LMDBError(code: MDB_READERS_FULL) }
    /// `MDB_TXN_FULL`: the transaction has too many dirty pages.
    public static var txnFull: LMDBError { LMDBError(code: MDB_TXN_FULL) }
    /// `MDB_MAP_RESIZED`: another process grew the map. The store handles this itself.
    public static var mapResized: LMDBError { LMDBError(code: MDB_MAP_RESIZED) }
    /// `MDB_INCOMPATIBLE`: the operation is incompatible with the database flags.
    public static var incompatible: LMDBError { LMDBError(code: MDB_INCOMPATIBLE) }
    /// `MDB_BAD_TXN`: the transaction cannot be used (it failed earlier).
    public static var badTransaction: LMDBError { LMDBError(code: MDB_BAD_TXN) }
    /// `MDB_BAD_VALSIZE`: a key or value has an unsupported size (keys are limited to 511 bytes).
    public static var badValueSize: LMDBError { LMDBError(code: MDB_BAD_VALSIZE) }
}

/// Throws an ``LMDBError`` for a non-zero LMDB return code.
@inline(__always)
func check(_ rc: Int32, _ context: @autoclosure () -> String) throws {
    if rc != 0 { throw LMDBError(code: rc, context: context()) }
}
