import BoardwalkCodec
import BoardwalkModel
internal import CLMDB
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
/// ``append(_:checkpoint:keepIdentical:)`` inside ``read(_:)`` or ``write(_:)`` of the same store on the same thread throw
/// ``StoreError/Kind/insideTransaction``, and ``close()`` there closes the store when that thread's outermost
/// `read { }` or `write { }` returns. Other threads wait for each other as usual.
///
/// `@unchecked Sendable`: the environment is thread-safe (see ``Environment``), the writer's in-memory
/// state is only touched under `writer`'s lock, `closing` is atomic, and everything else is immutable after `open`.
public final class Store: @unchecked Sendable {
    /// The store's directory, as given to ``open(at:options:)``.
    public let path: String
    /// The options the store was opened with.
    public let options: Options

    let env: Environment
    let dbs: Databases
    /// The string → id table of readers (the store keeps none on disk).
    let sharedStrings = SharedStringTable()
    private let registryKey: String
    /// The writer's state, created by the first write, and whether `close()` has removed the path from `openStores`.
    /// Appends of the process are serialized by this lock.
    private let writer = Mutex<WriterSlot>(WriterSlot())
    /// Set by the first `close()`: calls that begin later throw `.closed`, also while the close waits for running
    /// transactions or is deferred to the end of the closing thread's outermost transaction.
    private let closing = Atomic<Bool>(false)

    /// Opens the store in directory `path`, creating it when it does not exist (and `options.create`).
    ///
    /// Wraps `mdb_env_create`, `mdb_env_open` (with `MDB_NOTLS`) and `mdb_reader_check`, which clears
    /// reader slots of dead processes; creates the databases in a first write transaction.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/notAStore`` for a file, a non-empty directory
    ///   that holds no store, or an LMDB environment without Boardwalk's databases;
    ///   ``StoreError/Kind/newerFormat(found:supported:)`` for a store of a newer format;
    ///   ``StoreError/Kind/olderFormat(found:supported:)`` for a store of an older format (the message gives the commands that convert it);
    ///   ``StoreError/Kind/alreadyOpen`` when this process has it open; ``StoreError/Kind/system`` or
    ///   ``StoreError/Kind/lmdb`` from LMDB.
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
            env = try Environment(
                path: path, mapSize: max(options.initialMapSize, 1 << 16),
                maxDatabases: UInt32(Layout.all.count + 2), flags: flags, readOnly: options.readOnly,
                readsPages: options.readsLMDBPages)
        } catch let error as StoreError
            where error.lmdbCode == MDB_INVALID || error.lmdbCode == MDB_VERSION_MISMATCH
            || error.errno == StoreError.Errno(rawValue: EBADF)
        {
            // A data.mdb shorter than LMDB's two meta pages: MDB_INVALID, or EBADF when empty and opened read-only
            // (opened for writing, an empty file becomes a new store: nothing was in it).
            var st = stat()
            if stat(path + "/data.mdb", &st) == 0, st.st_size < 2 * 4096 {
                throw StoreError(
                    .corrupt,
                    "\(path)/data.mdb is \(st.st_size) bytes, too short to hold a store "
                        + "(a partial copy?); restore it from a backup", underlying: error)
            }
            if error.errno == StoreError.Errno(rawValue: EBADF) { throw error }
            // Long enough, but LMDB does not recognise its meta pages: a file that is no LMDB environment, or a store
            // whose meta pages are damaged; from outside the two look alike, so the message names both.
            throw StoreError(
                .notAStore,
                "\(path)/data.mdb is not an LMDB environment this Boardwalk reads: it is another "
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
            throw StoreError(
                .corrupt,
                "\(path)/data.mdb is damaged in LMDB's own pages: " + damage.joined(separator: "; ")
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
    func finishClose() {
        env.close()
        // Only once: after a close, the path may be opened again by a new Store, whose entry this must keep.
        writer.withLock { slot in
            guard !slot.unregistered else { return }
            slot.unregistered = true
            _ = openStores.withLock { $0.remove(registryKey) }
        }
    }

    /// Throws ``StoreError/Kind/closed`` once ``close()`` was called.
    func checkOpen() throws {
        if closing.load(ordering: .sequentiallyConsistent) { throw env.closedError() }
    }

    /// Runs `body` in a read transaction: a consistent snapshot of the store, as of the last commit
    /// before it began, concurrent with writers in this and other processes.
    ///
    /// The ``Snapshot`` and every view it hands out are valid only inside `body`; `body` cannot escape or
    /// suspend. `read` may be nested in `read { }` and `write { }`. ``append(_:checkpoint:keepIdentical:)`` and ``write(_:)`` of
    /// this store inside `body` throw ``StoreError/Kind/insideTransaction`` (growing the map waits for every
    /// transaction of the process, this one included); ``close()`` inside it takes effect when `read` returns.
    /// Wraps `mdb_txn_begin(MDB_RDONLY)` and `mdb_txn_commit`.
    /// - Throws: whatever `body` throws; ``StoreError`` (``StoreError/Kind/closed`` after ``close()``,
    ///   ``StoreError/Kind/corrupt`` for damage a read meets, ``StoreError/Kind/system``).
    public func read<R>(_ body: (Snapshot) throws -> R) throws -> R {
        try checkOpen()
        do {
            return try inFrame(write: false) {
                try env.transaction(write: false) { txn in
                    try body(try Snapshot(txn: txn, dbs: dbs, cache: sharedStrings))
                }
            }
        } catch let error as StoreError where error.kind == .corrupt || error.meansDamage {
            // Named by its onboarding's id, then written down: appends refuse the store from now on
            // (Store+Damage.swift).
            let named = namingOnboarding(error)
            markDamaged(named)
            throw named
        }
    }

    /// `error` with the onboarding of the block or record it is about named by its id, read in a snapshot of its own
    /// (the strings are another database than the damaged block's, and usually whole); unchanged when it names none,
    /// or the strings cannot be read. Not through ``read(_:)``, which would mark the store with a damage met here.
    func namingOnboarding(_ error: StoreError) -> StoreError {
        guard error.onboardingRef != nil else { return error }
        let named = try? inFrame(write: false) {
            try env.transaction(write: false) { txn in
                let snapshot = try Snapshot(txn: txn, dbs: dbs, cache: sharedStrings)
                return error.naming { snapshot.string(for: $0) }
            }
        }
        return named ?? error
    }

    /// Flushes committed data to disk (`mdb_env_sync` with force): the durability point for
    /// ``Durability/noSync`` and ``Durability/noMetaSync``.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/closed`` after ``close()``, ``StoreError/Kind/system`` (the
    ///   disk).
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

    /// Runs `body` with the writer's state, creating it on first use, under the writer's lock.
    func withWriter<R>(_ body: (WriterState) throws -> R) throws -> R {
        guard !options.readOnly else { throw StoreError(.readOnly, "\(path) was opened read-only") }
        // The result leaves through a local: `Mutex.withLock` returns only values it can prove unshared (`sending`).
        var result: Result<R, any Error>? = nil
        writer.withLock { slot in
            if slot.state == nil {
                slot.state = WriterState(
                    dbs: dbs, cache: sharedStrings, pageSize: env.pageSize,
                    logLimits: options.sessionLogLimits, eventLogLimits: options.eventLogLimits)
            }
            result = Result { try body(slot.state!) }
        }
        return try result!.get()
    }
}

/// The writer's state behind ``Store``'s lock.
struct WriterSlot {
    var state: WriterState? = nil
    /// Whether `close()` has removed the store's path from `openStores`.
    var unregistered = false
}

/// Paths of the stores open in this process: lmdb.h, "Do not have open an LMDB database twice in the same
/// process at the same time. Not even from a plain open() call - close()ing it breaks flock() advisory locking."
private let openStores = Mutex<Set<String>>([])
