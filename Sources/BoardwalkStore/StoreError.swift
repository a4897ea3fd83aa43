import BoardwalkCodec
internal import CLMDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one error the store throws: what went wrong, where, and the underlying error when there is one.
///
/// ``kind`` says what to do about it. A failed system call, made by LMDB or by the store itself, carries the
/// operating system's error number in ``errno`` (kind ``Kind/system``), so a full disk is told apart from damage
/// without knowing LMDB's codes:
///
/// ```swift
/// do {
///     try store.append(events)
/// } catch let error as StoreError where error.errno == .noSpace {
///     // the disk is full: nothing of the batch was stored
/// } catch let error as StoreError where error.meansDamage || error.kind == .corrupt {
///     // the file is damaged: `store.check()` says where
/// }
/// ```
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem this is.
    public enum Kind: Hashable, Sendable {
        /// The path exists but is not a Boardwalk store (not a directory, or a non-empty directory
        /// without a store in it, or an LMDB environment without Boardwalk's meta database).
        case notAStore
        /// The store was written by a newer Boardwalk whose format this code does not read.
        case newerFormat(found: UInt32, supported: UInt32)
        /// The store was written in an older format that this code no longer reads (the message says how to convert it).
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
        /// ``Store/append(_:checkpoint:keepIdentical:)`` inside ``Store/read(_:)`` or ``Store/write(_:)`` of the same store on the
        /// same thread. Append with the ``StoreWriter`` passed to `write { }`, or after `read { }` returns.
        case insideTransaction
        /// A system call failed, one of LMDB's or one the store makes itself (`pread`, `opendir`, `fstat`):
        /// ``StoreError/errno`` says why (``StoreError/Errno/noSpace`` for a full disk,
        /// ``StoreError/Errno/ioError``, ``StoreError/Errno/permissionDenied``, …).
        case system
        /// The caller asked a long operation to stop (``Store/backup(to:stopWhen:)``) before it was done; what it had
        /// begun is removed.
        case stopped
        /// LMDB refused an operation for a reason of its own (every reader slot taken, a page it found damaged, a
        /// file of another LMDB version); the message has LMDB's words for it. ``StoreError/meansDamage`` tells
        /// damage apart.
        case lmdb
    }

    /// What kind of problem this is.
    public var kind: Kind
    /// A sentence for people: what was wrong, with the path or key involved.
    public var message: String
    /// The error that caused this one (a `CodecError` for a corrupt record), if any.
    public var underlying: (any Error & Sendable)?
    /// For an event ``Store/append(_:checkpoint:keepIdentical:)`` or ``StoreWriter/append(_:keepIdentical:)`` could not store: its index in the
    /// batch (counted from 0 in the order of the sequence passed); `nil` for every other error.
    public var batchIndex: Int?
    /// The operating system's error number, for ``Kind/system``; `nil` for every other kind.
    public var errno: Errno?
    /// LMDB's own result code (an `MDB_…` value), for ``Kind/lmdb``; the store's decisions read it, callers read
    /// ``kind`` and ``meansDamage``.
    package var lmdbCode: Int32?
    /// The string id of the onboarding whose block or record did not decode, while the message names it by that id
    /// (``group(_:_:)``); ``naming(_:)`` puts the onboarding's own id in its place.
    var onboardingRef: UInt32?

    /// An error of `kind` with a message for people and, optionally, the error that caused it.
    public init(_ kind: Kind, _ message: String, underlying: (any Error & Sendable)? = nil, batchIndex: Int? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
        self.batchIndex = batchIndex
    }

    /// The error for a non-zero return code of an LMDB function: an `errno` value (positive) makes a ``Kind/system``
    /// error, an `MDB_…` code (negative) a ``Kind/lmdb`` one. The message is
    /// `"<context>: LMDB error <code>: <mdb_strerror's text>"`.
    package init(lmdbCode code: Int32, context: String = "") {
        let text = mdb_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        let label = "LMDB error \(code): \(text)"
        self.init(code > 0 ? .system : .lmdb, context.isEmpty ? label : "\(context): \(label)")
        if code > 0 { errno = Errno(rawValue: code) } else { lmdbCode = code }
    }

    /// The error for an `errno` value from a system call the store makes itself:
    /// `"<context>: system error <code>: <strerror's text>"`.
    package static func system(_ code: Int32, context: String) -> StoreError {
        var error = StoreError(.system, "\(context): system error \(code): \(Errno(rawValue: code).description)")
        error.errno = Errno(rawValue: code)
        return error
    }

    /// Whether LMDB found the data file damaged (`MDB_CORRUPTED`, `MDB_PAGE_NOTFOUND`): what to answer with a check of
    /// the store rather than a retry. A record or index entry the store cannot decode is ``Kind/corrupt`` instead.
    public var meansDamage: Bool { kind == .lmdb && (lmdbCode == MDB_CORRUPTED || lmdbCode == MDB_PAGE_NOTFOUND) }

    /// Whether this is LMDB's `MDB_MAP_FULL`, which the store answers itself by growing the map.
    var isMapFull: Bool { lmdbCode == MDB_MAP_FULL }

    /// The group of a block or record in a message, before its onboarding is named: `onboarding #3, screen 5`, or
    /// `no onboarding` for the events without meta.
    static func group(_ onboarding: UInt32, _ screen: UInt16) -> String {
        onboarding == RecordFormat.noOnboarding ? "no onboarding" : "onboarding #\(onboarding), screen \(screen)"
    }

    /// The error with its onboarding named by its id (`onboarding "onb_1", screen 5`) instead of the store's number
    /// for it, when `resolve` knows it: what a person can look for in the data. Unchanged otherwise.
    func naming(_ resolve: (UInt32) -> String?) -> StoreError {
        guard let ref = onboardingRef, ref != RecordFormat.noOnboarding, let id = resolve(ref) else { return self }
        var named = self
        named.message = message.replacingFirst("onboarding #\(ref),", with: "onboarding \(StoreError.quoted(id)),")
        named.onboardingRef = nil
        return named
    }

    /// `id` in double quotes, cut after 80 characters.
    static func quoted(_ id: String) -> String {
        "\"" + (id.count > 80 ? id.prefix(80) + "…" : id) + "\""
    }

    /// The message, followed by the underlying error when there is one.
    public var description: String {
        if let underlying { return "\(message): \(underlying)" }
        return message
    }
}

extension StoreError {
    /// An operating system error number (`errno`), as swift-system's `Errno`: compare with the named values, or
    /// match one in a `catch`: `catch StoreError.Errno.noSpace { … }` catches a ``StoreError`` with that number.
    public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The C value.
        public var rawValue: Int32

        /// The number `rawValue`.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// `strerror`'s text for the number.
        public var description: String { String(cString: strerror(rawValue)) }

        /// `ENOSPC`: no space left on the device.
        public static var noSpace: Errno { Errno(rawValue: ENOSPC) }
        /// `EIO`: an input or output error (also what a failed write-back of a mapped file reports).
        public static var ioError: Errno { Errno(rawValue: EIO) }
        /// `EACCES`: permission denied.
        public static var permissionDenied: Errno { Errno(rawValue: EACCES) }
        /// `EPERM`: the operation is not permitted.
        public static var notPermitted: Errno { Errno(rawValue: EPERM) }
        /// `EROFS`: the file system is read-only.
        public static var readOnlyFileSystem: Errno { Errno(rawValue: EROFS) }
        /// `ENOENT`: no such file or directory.
        public static var noSuchFileOrDirectory: Errno { Errno(rawValue: ENOENT) }
        /// `ENOMEM`: not enough memory.
        public static var noMemory: Errno { Errno(rawValue: ENOMEM) }

        /// Lets `catch StoreError.Errno.noSpace` match a ``StoreError`` whose ``StoreError/errno`` is that number.
        public static func ~= (pattern: Errno, value: any Error) -> Bool {
            (value as? StoreError)?.errno == pattern
        }
    }
}

/// Throws a ``StoreError`` for a non-zero LMDB return code.
@inline(__always)
func check(_ rc: Int32, _ context: @autoclosure () -> String) throws {
    if rc != 0 { throw StoreError(lmdbCode: rc, context: context()) }
}

extension String {
    /// The string with the first occurrence of `target` replaced by `replacement` (unchanged when there is none).
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(target) {
                return String(self[..<i]) + replacement + String(self[index(i, offsetBy: target.count)...])
            }
            i = index(after: i)
        }
        return self
    }
}
