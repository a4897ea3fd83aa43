internal import CLMDB
import BoardwalkCodec
import BoardwalkModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only event store in one directory, built on LMDB.
///
/// Events are ordered by onboarding, screen index, time and arrival sequence number (`seq`), kept in
/// blocks of many events per value, with a session index, a string dictionary and counters; a resent
/// event (same event id, time, onboarding and screen) is skipped (`docs/storage.md` describes every
/// database byte by byte).
///
/// ```swift
/// let store = try Store.open(at: "/path/to/events.bw")
/// let result = try store.append(events)             // durable when it returns
/// let n = try store.read { try $0.stats().events }
/// ```
///
/// One process may append at a time per store (LMDB serializes writers across processes); any number of
/// threads and processes may read concurrently with it, each seeing a consistent snapshot.
///
/// A call that would wait for the transaction it is made from fails at once instead: ``write(_:)`` and
/// ``append(_:checkpoint:)`` inside ``read(_:)`` or ``write(_:)`` of the same store on the same thread throw
/// ``StoreError/Kind/insideTransaction``, and ``close()`` there closes the store when that thread's outermost
/// `read { }` or `write { }` returns. Other threads wait for each other as usual.
///
/// `@unchecked Sendable`: the environment is thread-safe (see ``Environment``), the writer's in-memory
/// state is only touched under `writerLock`, `closing` is atomic, and everything else is immutable after `open`.
public final class Store: @unchecked Sendable {
    /// The store's directory, as given to ``open(at:options:)``.
    public let path: String
    /// The options the store was opened with.
    public let options: Options

    let env: Environment
    let dbs: Databases
    /// The string → id table of readers (the store keeps none on disk).
    let stringCache = StringCache()
    private let registryKey: String
    private let writerLock = Lock()
    /// Guarded by `writerLock`.
    private var writer: WriterState?
    /// Guarded by `writerLock`: whether `close()` has removed the path from `openStores`.
    private var unregistered = false
    /// Set by the first `close()`: calls that begin later throw `.closed`, also while the close waits for running
    /// transactions or is deferred to the end of the closing thread's outermost transaction.
    private let closing = Atomic<Bool>(false)

    /// How the store was opened.
    public struct Options: Sendable {
        /// How durable an ``Store/append(_:checkpoint:)`` is when it returns. Default ``Durability/full``.
        public var durability: Durability
        /// The initial map size in bytes; the map grows by itself when full. Default 64 MiB.
        public var initialMapSize: Int
        /// Opens for reading only (`MDB_RDONLY`); appends throw. Default `false`. A store whose lock file this
        /// process may not write (another user's, or on read-only media) is then still opened, without the lock
        /// file: see ``Store/isWithoutLockFile``.
        public var readOnly: Bool
        /// Creates the directory and the store when missing. Default `true`.
        public var create: Bool
        /// When the writer folds the session log into `sessions` (tests make it fold sooner or never).
        var sessionLogLimits = SessionLogLimits.standard
        /// When the writer folds the event log into `events` (tests make it fold sooner or never).
        var eventLogLimits = EventLogLimits.standard

        /// Options with the defaults above; any may be changed.
        public init(durability: Durability = .full, initialMapSize: Int = 64 << 20, readOnly: Bool = false,
                    create: Bool = true) {
            self.durability = durability
            self.initialMapSize = initialMapSize
            self.readOnly = readOnly
            self.create = create
        }
    }

    /// How durable a committed append is.
    public enum Durability: Sendable, Hashable {
        /// Every commit is flushed to disk (two `fsync`s) before ``Store/append(_:checkpoint:)`` returns.
        case full
        /// `MDB_NOMETASYNC`: data is flushed, the meta page is not; a system crash may undo the last
        /// commit, never corrupt the store. One flush per commit.
        case noMetaSync
        /// `MDB_NOSYNC`: nothing is flushed at commit; a system crash (not a process crash) may lose the
        /// last commits and, on file systems that reorder writes, damage the store. Call ``Store/sync()``
        /// at points that must survive. A killed process loses nothing that was committed.
        case noSync
    }

    /// Opens the store in directory `path`, creating it when it does not exist (and `options.create`).
    ///
    /// Wraps `mdb_env_create`, `mdb_env_open` (with `MDB_NOTLS`) and `mdb_reader_check`, which clears
    /// reader slots of dead processes; creates the databases in a first write transaction.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/notAStore`` for a file, a non-empty directory
    ///   that holds no store, or an LMDB environment without Boardwalk's databases;
    ///   ``StoreError/Kind/newerFormat(found:supported:)`` for a store of a newer format;
    ///   ``StoreError/Kind/olderFormat(found:supported:)`` for a store of format 1 to 7 (no migration);
    ///   ``StoreError/Kind/alreadyOpen`` when this process has it open; ``LMDBError`` from LMDB.
    /// - Complexity: O(1); the writer loads the string dictionary on its first append (O(strings)).
    public static func open(at path: String, options: Options = Options()) throws -> Store {
        try prepareDirectory(path, options: options)
        let key = canonicalPath(path)
        let inserted = openStores.withLock { $0.insert(key).inserted }
        guard inserted else {
            throw StoreError(.alreadyOpen, "\(path) is already open in this process; share the Store object")
        }
        do {
            return try Store(path: path, registryKey: key, options: options)
        } catch {
            _ = openStores.withLock { $0.remove(key) }
            throw error
        }
    }

    private init(path: String, registryKey: String, options: Options) throws {
        self.path = path
        self.options = options
        self.registryKey = registryKey
        var flags: UInt32 = 0
        switch options.durability {
        case .full: break
        case .noMetaSync: flags |= EnvFlags.noMetaSync
        case .noSync: flags |= EnvFlags.noSync
        }
        do {
            env = try Environment(path: path, mapSize: max(options.initialMapSize, 1 << 16),
                                  maxDatabases: UInt32(Layout.all.count + 2), flags: flags, readOnly: options.readOnly)
        } catch let error as LMDBError
                    where error.code == MDB_INVALID || error.code == MDB_VERSION_MISMATCH || error.code == EBADF {
            // A data.mdb shorter than LMDB's two meta pages: MDB_INVALID, or EBADF when empty and opened read-only
            // (opened for writing, an empty file becomes a new store: nothing was in it).
            var st = stat()
            if stat(path + "/data.mdb", &st) == 0, st.st_size < 2 * 4096 {
                throw StoreError(.corrupt, "\(path)/data.mdb is \(st.st_size) bytes, too short to hold a store "
                                 + "(a partial copy?); restore it from a backup", underlying: error)
            }
            if error.code == EBADF { throw error }
            // Long enough, but LMDB does not recognise its meta pages: a file that is no LMDB environment, or a store
            // whose meta pages are damaged; from outside the two look alike, so the message names both.
            throw StoreError(.notAStore, "\(path)/data.mdb is not an LMDB environment this Boardwalk reads: it is another "
                             + "kind of file, or a store whose first pages (LMDB's meta pages) are damaged, which a backup "
                             + "restores", underlying: error)
        }
        try Store.checkFileSize(env, path: path)
        // `mdb_dbi_open` trusts the main database's pages; a damaged one made it read past the file (a bus error).
        // A writer in another process that keeps committing can move the meta pages past every attempt: the main
        // database is then its, just written, and the walk is skipped.
        var damage: [String] = []
        for _ in 0..<8 {
            do {
                damage = try env.transaction(write: false) { txn in try txn.checkPages(limit: 3, mainOnly: true) }
                break
            } catch is PagesMoved {
                continue
            }
        }
        if !damage.isEmpty {
            throw StoreError(.corrupt, "\(path)/data.mdb is damaged in LMDB's own pages: " + damage.joined(separator: "; ")
                             + "; restore it from a backup")
        }
        dbs = try Store.openDatabases(env, path: path)
    }

    deinit { close() }

    /// Closes the store: waits for running transactions, then closes the environment. Calls that begin after
    /// `close()` was called throw ``StoreError`` with ``StoreError/Kind/closed``. Wraps `mdb_env_close`. Dropping the
    /// last reference closes it too; a second `close()` does nothing.
    ///
    /// Called inside ``read(_:)`` or ``write(_:)`` of this store, `close()` cannot wait for the transaction it is
    /// made from: it returns at once, and the store closes when the calling thread's outermost `read { }` or
    /// `write { }` of it returns (a `write { }` commits first, as it would for a `close()` on another thread). The
    /// closure's `Snapshot` or `StoreWriter` stays usable until then; new calls on the store throw `.closed`.
    public func close() {
        closing.store(true, ordering: .sequentiallyConsistent)
        if let outermost = transactionFrames.outermost(of: self) {
            outermost.pointee.closeWhenDone = true
            return
        }
        finishClose()
    }

    /// Closes the environment (waiting for other threads' transactions) and forgets the path.
    private func finishClose() {
        env.close()
        // Only once: after a close, the path may be opened again by a new Store, whose entry this must keep.
        writerLock.withLock {
            guard !unregistered else { return }
            unregistered = true
            _ = openStores.withLock { $0.remove(registryKey) }
        }
    }

    /// Throws ``StoreError/Kind/closed`` once ``close()`` was called.
    func checkOpen() throws {
        if closing.load(ordering: .sequentiallyConsistent) { throw env.closedError() }
    }

    /// Runs `body` as a `read { }` or `write { }` of this store on this thread (``TransactionFrame``), and does a
    /// `close()` made inside it once the outermost one returns.
    func inFrame<R>(write: Bool, _ body: () throws -> R) throws -> R {
        var frame = TransactionFrame(store: ObjectIdentifier(self), isWrite: write, previous: transactionFrames.innermost)
        var closeAfter = false
        defer { if closeAfter { finishClose() } }
        return try withUnsafeMutablePointer(to: &frame) { pointer in
            transactionFrames.innermost = pointer
            defer {
                transactionFrames.innermost = pointer.pointee.previous
                closeAfter = pointer.pointee.closeWhenDone
            }
            return try body()
        }
    }

    /// Throws ``StoreError/Kind/insideTransaction`` when this thread is inside `read { }` or `write { }` of this
    /// store: a write would wait for itself (the writer lock, or the map's growth waiting for the read).
    func checkNotInsideTransaction(_ call: String) throws {
        guard let outermost = transactionFrames.outermost(of: self) else { return }
        if outermost.pointee.isWrite {
            throw StoreError(.insideTransaction, "\(call) inside store.write { } of the same store would wait for itself: "
                             + "append with the StoreWriter passed to write { }")
        }
        throw StoreError(.insideTransaction, "\(call) inside store.read { } of the same store could wait for itself "
                         + "(growing the map waits for every read): append after read { } returns, or read with "
                         + "write { w in try w.snapshot … } and append with w")
    }

    /// Runs `body` in a read transaction: a consistent snapshot of the store, as of the last commit
    /// before it began, concurrent with writers in this and other processes.
    ///
    /// The ``Snapshot`` and every view it hands out are valid only inside `body`; `body` cannot escape or
    /// suspend. `read` may be nested in `read { }` and `write { }`. ``append(_:checkpoint:)`` and ``write(_:)`` of
    /// this store inside `body` throw ``StoreError/Kind/insideTransaction`` (growing the map waits for every
    /// transaction of the process, this one included); ``close()`` inside it takes effect when `read` returns.
    /// Wraps `mdb_txn_begin(MDB_RDONLY)` and `mdb_txn_commit`.
    /// - Throws: whatever `body` throws; ``StoreError`` (``StoreError/Kind/closed`` after ``close()``,
    ///   ``StoreError/Kind/corrupt`` for damage a read meets); ``LMDBError``.
    public func read<R>(_ body: (Snapshot) throws -> R) throws -> R {
        try checkOpen()
        return try inFrame(write: false) {
            try env.transaction(write: false) { txn in try body(try Snapshot(txn: txn, dbs: dbs, cache: stringCache)) }
        }
    }

    /// Copies the store, compacted, into `directory` while writers keep running. `directory` must not exist
    /// (its parent must) or be an empty directory. Wraps `mdb_env_copy2` with `MDB_CP_COMPACT`.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/invalidArgument`` when `directory` is a file, or a directory
    ///   that holds anything (a store, or any other file: nothing in it is overwritten or mixed with the copy), or
    ///   cannot be created; ``StoreError/Kind/corrupt`` when LMDB's own pages are damaged (checked first, as
    ///   `check()` does: liblmdb's compacting copy follows them unchecked and can crash on them); ``StoreError/Kind/closed``
    ///   after ``close()``; ``LMDBError`` (the disk).
    /// - Complexity: O(size of the store), twice: the page check, then the copy, which holds one read transaction.
    public func backup(to directory: String) throws {
        try checkOpen()
        // A damaged page (QA, session 16: one of `event_log`) made the copy crash inside liblmdb. Pages are never
        // damaged by a commit, so a check in an earlier snapshot covers the copy's.
        guard let problems = try readRetryingPagesMoved({ try $0.txn.checkPages() }) else {
            throw StoreError(.corrupt, "LMDB's pages could not be checked before the backup: another process committed faster "
                             + "than the check could read them, 100 times; try again when appends pause")
        }
        if !problems.isEmpty {
            throw StoreError(.corrupt, "LMDB's own pages of the store are damaged, and copying them could crash the process: "
                             + problems.prefix(3).joined(separator: "; ")
                             + (problems.count > 3 ? "; …" : "") + ". `boardwalk check` lists them; `boardwalk export --salvage` "
                             + "reads what can still be read")
        }
        // LMDB would refuse a data.mdb with a bare "File exists", and copy beside anything else.
        if access(directory + "/data.mdb", F_OK) == 0 {
            throw StoreError(.invalidArgument, "\(directory) already holds a store (data.mdb): back up into a new or empty directory")
        }
        var st = stat()
        if stat(directory, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else {
                throw StoreError(.invalidArgument, "\(directory) is not a directory: back up into a new or empty directory")
            }
            let names = try Store.entries(of: directory)
            if !names.isEmpty {
                let shown = names.sorted().prefix(3).joined(separator: ", ") + (names.count > 3 ? ", …" : "")
                throw StoreError(.invalidArgument, "\(directory) is not empty (it holds \(shown)): back up into a new or empty directory")
            }
        }
        try Store.makeDirectory(directory)
        try env.copy(to: directory)
    }

    /// Flushes committed data to disk (`mdb_env_sync` with force): the durability point for
    /// ``Durability/noSync`` and ``Durability/noMetaSync``.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/closed`` after ``close()``; ``LMDBError``.
    public func sync() throws {
        try checkOpen()
        try env.sync()
    }

    /// The size of the data file in use (pages up to the last used one), in bytes; 0 after ``close()``.
    public var usedBytes: Int {
        env.ifOpen { handle in
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            return (info.me_last_pgno + 1) * env.pageSize
        } ?? 0
    }

    /// The current map size in bytes (grows by itself); 0 after ``close()``.
    public var mapSize: Int { env.ifOpen { _ in env.mapSize } ?? 0 }

    /// Whether the store was opened read-only without its lock file (`MDB_NOLOCK`), because this process may not
    /// write `lock.mdb` (a store of another user, a copy on read-only media). Reads then work as usual, but they
    /// hold no reader slot: a writer in another process does not know about them and may reuse pages they are
    /// still reading, so a read that runs while someone appends can crash inside liblmdb, fail as `corrupt` or see
    /// wrong values. Nothing stored is ever harmed. ``open(at:options:)`` therefore takes this way only when no
    /// other process has the store open (it throws `.readOnly` naming the one that has); a writer that opens it
    /// later is not seen. Also `true` on a read-only file system, where liblmdb reads without the lock file itself.
    public var isWithoutLockFile: Bool { env.isLockless }

    // MARK: Writer access

    /// Runs `body` with the writer's state, creating it on first use.
    func withWriter<R>(_ body: (WriterState) throws -> R) throws -> R {
        guard !options.readOnly else { throw StoreError(.readOnly, "\(path) was opened read-only") }
        return try writerLock.withLock {
            if writer == nil { writer = WriterState(dbs: dbs, cache: stringCache, pageSize: env.pageSize, logLimits: options.sessionLogLimits,
                                                   eventLogLimits: options.eventLogLimits) }
            return try body(writer!)
        }
    }

    // MARK: Opening

    private static func prepareDirectory(_ path: String, options: Options) throws {
        var st = stat()
        if stat(path, &st) != 0 {
            guard options.create, !options.readOnly else {
                throw StoreError(.notAStore, "\(path) does not exist")
            }
            try makeDirectory(path)
            return
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw StoreError(.notAStore, "\(path) is not a directory") }
        var dataStat = stat()
        if stat(path + "/data.mdb", &dataStat) == 0 { return }
        // A directory without data.mdb: only an empty one may become a store.
        if try entries(of: path).contains(where: { $0 != "lock.mdb" }) {
            throw StoreError(.notAStore, "\(path) is a non-empty directory that holds no Boardwalk store")
        }
        if options.readOnly { throw StoreError(.notAStore, "\(path) holds no Boardwalk store") }
    }

    /// Refuses a data file shorter than its last committed page: a read of a page past the end of a mapped file
    /// is a bus error, not an error LMDB could return (QA, session 6: every command, `check` included, died on a
    /// cut-short copy).
    private static func checkFileSize(_ env: Environment, path: String) throws {
        var info = MDB_envinfo()
        mdb_env_info(env.handle, &info)
        var st = stat()
        guard stat(path + "/data.mdb", &st) == 0 else { return }
        // In pages, unsigned: a damaged last page number near 2⁶⁴ overflowed (last + 1) · page size (a trap at open).
        let lastPage = UInt64(UInt(bitPattern: info.me_last_pgno)), pages = UInt64(st.st_size) / UInt64(env.pageSize)
        if lastPage >= pages {
            throw StoreError(.corrupt, "\(path)/data.mdb is \(st.st_size) bytes, but its last committed page is page "
                             + "\(lastPage) of \(env.pageSize) bytes: the file was cut short (a partial copy?) or its meta "
                             + "page is damaged; restore it from a backup")
        }
    }

    /// The names in directory `path`, without `.` and `..`.
    private static func entries(of path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw LMDBError.system(errno, context: "opendir(\(path))") }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            let code = errno
            let why = code == ENOENT ? "its parent directory does not exist"
                : code == EACCES ? "permission denied" : String(decoding: Array(UnsafeRawBufferPointer(start: strerror(code),
                    count: strlen(strerror(code)))), as: UTF8.self)
            throw StoreError(.invalidArgument, "cannot create the directory \(path): \(why)")
        }
    }

    private static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func openDatabases(_ env: Environment, path: String) throws -> Databases {
        try env.transaction(write: !env.isReadOnly) { txn in
            if let meta = try txn.open(Layout.meta, create: false) {
                guard let format = try txn.getUInt32(meta, Layout.metaFormat) else {
                    throw StoreError(.notAStore, "\(path) has no format version in its meta database")
                }
                guard format <= Layout.formatVersion else {
                    throw StoreError(.newerFormat(found: format, supported: Layout.formatVersion),
                                     "\(path) has store format \(format); this Boardwalk reads format \(Layout.formatVersion)")
                }
                guard format == Layout.formatVersion else {
                    throw StoreError(.olderFormat(found: format, supported: Layout.formatVersion),
                                     "\(path) has store format \(format) (\(Layout.formerLayout(of: format))), which this Boardwalk no longer reads; there is no migration: export it with the Boardwalk that wrote it and re-import, or re-import the original input")
                }
                var handles: [String: Database] = [:]
                for name in Layout.all {
                    guard let db = try txn.open(name, create: false) else {
                        throw StoreError(.notAStore, "\(path) lacks the '\(name)' database")
                    }
                    handles[name] = db
                }
                return Databases(handles)
            }
            guard txn.isWrite else { throw StoreError(.notAStore, "\(path) holds no Boardwalk store") }
            guard try txn.mainEntries() == 0 else {
                throw StoreError(.notAStore, "\(path) is an LMDB environment but not a Boardwalk store")
            }
            var handles: [String: Database] = [:]
            for name in Layout.all { handles[name] = try txn.open(name, create: true)! }
            let dbs = Databases(handles)
            try txn.putUInt32(dbs.meta, Layout.metaFormat, Layout.formatVersion)
            return dbs
        }
    }
}

/// Paths of the stores open in this process: lmdb.h, "Do not have open an LMDB database twice in the same
/// process at the same time. Not even from a plain open() call - close()ing it breaks flock() advisory locking."
private let openStores = Mutex<Set<String>>([])

/// The handles of the store's named databases.
struct Databases: Sendable {
    let meta, events, sessions, onboardingSessions, batches, strings, inferred, onboardings, checkpoints: Database
    /// Sessions with events under more than one onboarding key (`Store+Spanning.swift`).
    let spanningSessions: Database
    /// The session index's references of the batches since the last fold (SessionLog.swift).
    let sessionLog: Database
    /// The blocks of the batches since the last fold of the event log (EventLog.swift).
    let eventLog: Database

    init(_ h: [String: Database]) {
        meta = h[Layout.meta]!
        events = h[Layout.events]!
        sessions = h[Layout.sessions]!
        onboardingSessions = h[Layout.onboardingSessions]!
        batches = h[Layout.batches]!
        strings = h[Layout.strings]!
        inferred = h[Layout.inferred]!
        onboardings = h[Layout.onboardings]!
        checkpoints = h[Layout.checkpoints]!
        spanningSessions = h[Layout.spanningSessions]!
        sessionLog = h[Layout.sessionLog]!
        eventLog = h[Layout.eventLog]!
    }
}

extension Transaction {
    /// Entries in the unnamed (main) database, where LMDB lists named databases.
    func mainEntries() throws -> Int {
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(handle, nil, 0, &dbi), "mdb_dbi_open(main)")
        var stat = MDB_stat()
        try check(mdb_stat(handle, dbi, &stat), "mdb_stat(main)")
        return stat.ms_entries
    }

    func getUInt64(_ db: Database, _ key: String) throws -> UInt64? {
        try key.withUTF8Bytes { k in
            guard let v = try get(db, k) else { return nil }
            guard v.count == 8 else { throw StoreError(.corrupt, "\(db.name)/\(key) is \(v.count) bytes, not 8") }
            return v.be64(0)
        }
    }

    func getUInt32(_ db: Database, _ key: String) throws -> UInt32? {
        try key.withUTF8Bytes { k in
            guard let v = try get(db, k) else { return nil }
            guard v.count == 4 else { throw StoreError(.corrupt, "\(db.name)/\(key) is \(v.count) bytes, not 4") }
            return v.be32(0)
        }
    }

    func putUInt64(_ db: Database, _ key: String, _ value: UInt64) throws {
        var be = value.bigEndian
        try key.withUTF8Bytes { k in try withUnsafeBytes(of: &be) { v in try put(db, k, v) } }
    }

    func putUInt32(_ db: Database, _ key: String, _ value: UInt32) throws {
        var be = value.bigEndian
        try key.withUTF8Bytes { k in try withUnsafeBytes(of: &be) { v in try put(db, k, v) } }
    }
}

/// A mutex (`pthread_mutex_t`) whose `withLock` takes any closure.
final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the pthread mutex is the synchronization.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

// MARK: Transactions of this thread

/// One ``Store/read(_:)`` or ``Store/write(_:)`` running on this thread, in a chain from the innermost to the
/// outermost (``transactionFrames``). It lives on the stack of the call that made it, for as long as that call runs.
///
/// A call that must not run inside a transaction of its own thread (it would wait for that transaction) finds it
/// here: two thread-local accesses per `read`/`write`, never per event, and nothing another thread can see, so
/// other threads still wait for each other as before.
struct TransactionFrame {
    let store: ObjectIdentifier
    let isWrite: Bool
    let previous: UnsafeMutablePointer<TransactionFrame>?
    /// Set by a `close()` made inside this (outermost) frame of its store: closes the store when the frame ends.
    var closeWhenDone = false
}

/// The innermost ``TransactionFrame`` of the calling thread, in a POSIX thread-specific value.
let transactionFrames = ThreadFrames()

final class ThreadFrames: Sendable {
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        // Without a key nothing can be detected; this fails only when the process has used up its keys (1024+).
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        self.key = key
    }

    /// The innermost frame of this thread, or `nil` outside every `read { }` and `write { }`.
    var innermost: UnsafeMutablePointer<TransactionFrame>? {
        get { pthread_getspecific(key)?.assumingMemoryBound(to: TransactionFrame.self) }
        set { pthread_setspecific(key, newValue) }
    }

    /// The outermost frame of `store` on this thread, or `nil` when this thread is not inside one of its transactions.
    func outermost(of store: Store) -> UnsafeMutablePointer<TransactionFrame>? {
        let id = ObjectIdentifier(store)
        var found: UnsafeMutablePointer<TransactionFrame>? = nil
        var frame = innermost
        while let current = frame {
            if current.pointee.store == id { found = current }
            frame = current.pointee.previous
        }
        return found
    }
}
